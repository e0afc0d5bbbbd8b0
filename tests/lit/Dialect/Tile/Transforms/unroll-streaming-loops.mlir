// RUN: tessera-opt %s -split-input-file -tile-unroll-streaming-loops | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-unroll-streaming-loops=bytes-in-flight=32768 | FileCheck %s --check-prefix=SMALL

// A K loop streaming a 16 KiB weight tile per iteration: unrolled by 4 (the
// default max-factor; 64 KiB within the default 128 KiB), the four copies'
// loads at k, k+1, k+2 and k+3, then an epilogue loop for the rest. With 32
// KiB in flight, by 2.
// The kernel is marked as having unrolled streams.
// CHECK-LABEL: func.func @matvec
// CHECK-SAME: tile.unrolled_streams
// CHECK: %[[MAIN:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %c4
// CHECK-COUNT-4: tile.load %arg1
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1{{.*}} iter_args(%{{.*}} = %[[MAIN]])
// CHECK-COUNT-1: tile.load %arg1
// CHECK: scf.yield
// SMALL-LABEL: func.func @matvec
// SMALL: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// SMALL-COUNT-2: tile.load %arg1
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @matvec(%o: !v, %w: !w, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %a2 = arith.addf %a, %wf : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// Left alone: a loop with a reduction in its body, a loop whose loads do not
// depend on its variable, a loop reading a memref the kernel writes, and a
// loop in a function without tile.kernel.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tile.unrolled_streams
// CHECK-NOT: step %c2
// CHECK-NOT: step %c4
// CHECK: return
!v = memref<?xf32, strided<[1], offset: ?>>
func.func @left_alone(%io: !v, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<1xf32>
  %z64 = arith.constant dense<0.0> : tensor<64xf32>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %s = tile.reduce %xv {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
    %a2 = arith.addf %a, %s : tensor<1xf32>
    scf.yield %a2 : tensor<1xf32>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z64) -> (tensor<64xf32>) {
    %xv = tile.load %x[%c0i] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z64) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %io[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %t = arith.addf %r2, %r3 : tensor<64xf32>
  tile.store %t, %io[%c0i] : tensor<64xf32>, !v
  return
}

// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: step %c4
// CHECK: return
func.func @not_a_kernel(%x: !v, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z64 = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z64) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  return
}
