// RUN: tessera-opt %s -split-input-file -tile-stream-loads | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-stream-loads=stages=2 | FileCheck %s --check-prefix=TWO

// A K loop reading a 16 KiB weight tile per iteration from a 16-byte aligned
// argument: a ring of 4 slots (64 KiB, the default max-bytes), the tiles of
// iterations 0, 1 and 2 copied before the loop (one group each, valid if the
// iteration runs), then per iteration the tile of k + 3 copied into slot
// (k + 3) mod 4 and committed, then where the weight tile was loaded the
// wait for all but the three newest groups and the take of slot k mod 4. The
// vector's load (broadcast: not streamed) stays a load; tile-hoist-loads
// later issues it before the wait.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[RING:.*]] = tile.stream_buffer : memref<4x16x512xbf16>
// CHECK-COUNT-3: tile.stream_copy %arg1[{{.*}}] to %[[RING]][{{.*}}] if
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK: %[[SLOT:.*]] = arith.remui
// CHECK: tile.stream_copy %arg1[{{.*}}] to %[[RING]][{{.*}}] if
// CHECK-NEXT: tile.stream_commit
// CHECK: tile.stream_wait 3
// CHECK-NEXT: tile.stream_take %[[RING]][%[[SLOT]]] : memref<4x16x512xbf16> -> tensor<16x512xbf16>
// CHECK-NOT: tile.load %arg1
// CHECK: tile.load %arg2
// TWO-LABEL: func.func @matvec
// TWO: tile.stream_buffer : memref<2x16x512xbf16>
// TWO-COUNT-1: tile.stream_copy
// TWO: scf.for
// TWO: tile.stream_wait 1
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @matvec(%o: !v, %w: !w {tile.align = 16 : i64}, %x: !v {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xv = tile.load %x[%j] : !v -> tensor<512xf32>
    %xr = tile.reshape %xv : tensor<512xf32> -> tensor<1x512xf32>
    %xb = tile.broadcast %xr : tensor<1x512xf32> -> tensor<16x512xf32>
    %m = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// Two weight tiles per iteration (32 KiB): one ring each, two slots (64 KiB
// in all), one group per iteration for both.
// CHECK-LABEL: func.func @pair
// CHECK: tile.stream_buffer : memref<2x16x512xbf16>
// CHECK: tile.stream_buffer : memref<2x16x512xbf16>
// CHECK: tile.stream_copy %arg1
// CHECK-NEXT: tile.stream_copy %arg2
// CHECK-NEXT: tile.stream_commit
// CHECK: scf.for
// CHECK: tile.stream_copy %arg1
// CHECK-NEXT: tile.stream_copy %arg2
// CHECK-NEXT: tile.stream_commit
// CHECK: tile.stream_wait 1
// CHECK-NEXT: tile.stream_take
// CHECK: tile.stream_take
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @pair(%o: !v, %w: !w {tile.align = 16 : i64}, %u: !w {tile.align = 16 : i64}, %n: index)
    attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %ut = tile.load %u[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %uf = arith.extf %ut : tensor<16x512xbf16> to tensor<16x512xf32>
    %m = arith.mulf %wf, %uf : tensor<16x512xf32>
    %a2 = arith.addf %a, %m : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// Left alone: tiles under min-bytes (a row read in 2048-element bf16 chunks,
// 4 KiB), an argument without 16-byte alignment, a memref the kernel writes,
// a loop with a reduction in its body, a load with padding -inf, a load
// whose index the loop carries (its later iterations' tiles are unknown).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tile.stream_buffer
// CHECK: return
!v = memref<?xf32, strided<[1], offset: ?>>
!b = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @left_alone(%io: !b {tile.align = 16 : i64}, %x: !b {tile.align = 16 : i64}, %odd: !b,
                      %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %p = tile.program_id 0
  %z = arith.constant dense<0.0> : tensor<1x2048xbf16>
  %z2 = arith.constant dense<0.0> : tensor<16x512xbf16>
  %r1 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1x2048xbf16>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %x[%p, %j] : !b -> tensor<1x2048xbf16>
    %s = arith.addf %a, %t : tensor<1x2048xbf16>
    scf.yield %s : tensor<1x2048xbf16>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z2) -> (tensor<16x512xbf16>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %odd[%p, %j] : !b -> tensor<16x512xbf16>
    %u = tile.load %io[%p, %j] : !b -> tensor<16x512xbf16>
    %m = tile.load %x[%p, %j] padding = -inf : !b -> tensor<16x512xbf16>
    %s = arith.addf %a, %t : tensor<16x512xbf16>
    %s2 = arith.addf %s, %u : tensor<16x512xbf16>
    %s3 = arith.maximumf %s2, %m : tensor<16x512xbf16>
    scf.yield %s3 : tensor<16x512xbf16>
  }
  %r3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<1x2048xbf16>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %x[%c0i, %j] : !b -> tensor<16x512xbf16>
    %q = tile.reduce %t {kind = sum, axis = 0} : tensor<16x512xbf16> -> tensor<1x512xbf16>
    scf.yield %a : tensor<1x2048xbf16>
  }
  %r4:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z2, %j = %c0i) -> (tensor<16x512xbf16>, i32) {
    %ii = arith.index_cast %i : index to i32
    %k = arith.addi %ii, %j : i32
    %t = tile.load %x[%p, %k] : !b -> tensor<16x512xbf16>
    %s = arith.addf %a, %t : tensor<16x512xbf16>
    %c1i = arith.constant 1 : i32
    %j2 = arith.addi %j, %c1i : i32
    scf.yield %s, %j2 : tensor<16x512xbf16>, i32
  }
  tile.store %r1, %io[%p, %c0i] : tensor<1x2048xbf16>, !b
  return
}
