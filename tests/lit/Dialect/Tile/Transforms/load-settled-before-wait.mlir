// RUN: tessera-opt %s -split-input-file -tile-load-settled-before-wait | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-load-settled-before-wait=steps=1 | FileCheck %s --check-prefix=ONE

// A whole-tiles product whose weight is settled: the program id moves to the
// top; the weight tiles of iterations 0 and 1 are loaded there under the
// condition that the loop has two iterations (1 < %n), zeros otherwise; then
// the wait; then those two iterations' bodies on the early tiles (the vector,
// which the kernel before may write, is loaded after the wait), and the loop
// starts at 2, or at 0 where it is shorter.
// CHECK-LABEL: func.func @matvec
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[P:.*]] = tile.program_id 0
// CHECK: %[[K1:.*]] = arith.constant 1 : index
// CHECK: %[[K2:.*]] = arith.constant 2 : index
// CHECK: %[[OK:.*]] = arith.cmpi slt, %[[K1]], %arg3 : index
// CHECK: %[[EARLY:.*]]:2 = scf.if %[[OK]] -> (tensor<16x512xbf16>, tensor<16x512xbf16>) {
// CHECK:   %[[J0:.*]] = arith.index_cast %[[C0]] : index to i32
// CHECK:   %[[W0:.*]] = tile.load %arg1[%[[P]], %[[J0]]]
// CHECK:   %[[J1:.*]] = arith.index_cast %[[K1]] : index to i32
// CHECK:   %[[W1:.*]] = tile.load %arg1[%[[P]], %[[J1]]]
// CHECK:   scf.yield %[[W0]], %[[W1]]
// CHECK: } else {
// CHECK:   arith.constant dense<0.000000e+00> : tensor<16x512xbf16>
// CHECK: }
// CHECK-NEXT: tile.grid_dependency_wait
// CHECK: %[[PEEL:.*]] = scf.if %[[OK]] -> (tensor<16x512xf32>) {
// CHECK:   arith.extf %[[EARLY]]#0
// CHECK:   tile.load %arg2
// CHECK:   arith.extf %[[EARLY]]#1
// CHECK:   tile.load %arg2
// CHECK:   scf.yield
// CHECK: } else {
// CHECK:   scf.yield %{{.*}} : tensor<16x512xf32>
// CHECK: }
// CHECK: %[[FROM:.*]] = arith.select %[[OK]], %[[K2]], %[[C0]] : index
// CHECK: scf.for %{{.*}} = %[[FROM]] to %arg3 step %{{.*}} iter_args(%{{.*}} = %[[PEEL]])
// CHECK-NOT: tile.grid_dependency_wait
// ONE-LABEL: func.func @matvec
// ONE: scf.if %{{.*}} -> (tensor<16x512xbf16>) {
// ONE: tile.grid_dependency_wait
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @matvec(%o: !v, %w: !w {tile.settled}, %x: !v, %n: index)
    attributes {tile.kernel, tile.whole_tiles} {
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

// Not compiled for whole tiles, no settled argument, a wait already there, a
// settled tile whose index the loop carries: each kernel is left as it was.
// CHECK-LABEL: func.func @ragged
// CHECK-NOT: tile.grid_dependency_wait
// CHECK: return
// CHECK-LABEL: func.func @unsettled
// CHECK-NOT: tile.grid_dependency_wait
// CHECK: return
// CHECK-LABEL: func.func @waits
// CHECK: tile.grid_dependency_wait
// CHECK-NOT: tile.grid_dependency_wait
// CHECK: return
// CHECK-LABEL: func.func @carried_index
// CHECK-NOT: tile.grid_dependency_wait
// CHECK: return
!v = memref<?xf32, strided<[1], offset: ?>>
func.func @ragged(%o: !v, %w: !v {tile.settled}, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %w[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %t : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %c0i = arith.constant 0 : i32
  tile.store %acc, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @unsettled(%o: !v, %w: !v, %n: index) attributes {tile.kernel, tile.whole_tiles} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %w[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %t : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %c0i = arith.constant 0 : i32
  tile.store %acc, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @waits(%o: !v, %w: !v {tile.settled}, %n: index) attributes {tile.kernel, tile.whole_tiles} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  tile.grid_dependency_wait
  %acc = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %t = tile.load %w[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %t : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %c0i = arith.constant 0 : i32
  tile.store %acc, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @carried_index(%o: !v, %w: !v {tile.settled}, %n: index) attributes {tile.kernel, tile.whole_tiles} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %c1i = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %acc:2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %j = %c0i) -> (tensor<64xf32>, i32) {
    %t = tile.load %w[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %t : tensor<64xf32>
    %j2 = arith.addi %j, %c1i : i32
    scf.yield %a2, %j2 : tensor<64xf32>, i32
  }
  tile.store %acc#0, %o[%c0i] : tensor<64xf32>, !v
  return
}
