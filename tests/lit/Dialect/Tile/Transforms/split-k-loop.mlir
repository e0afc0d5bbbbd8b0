// RUN: tessera-opt %s -split-input-file -tile-split-k-loop=ctas=4 | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-split-k-loop | FileCheck %s --check-prefix=NONE

// A matrix-vector product's K loop: each CTA of rank r runs the iterations
// [n r / 4, n (r + 1) / 4); the row sums of its partial meet in one
// split_sum, and the store runs in rank 0. With the default ctas=1 the
// kernel stays as it is.
// CHECK-LABEL: func.func @matvec
// CHECK-SAME: tile.split_k = 4 : i32
// CHECK: %[[RANK:.*]] = tile.split_rank
// CHECK: %[[R:.*]] = arith.index_cast %[[RANK]] : i32 to index
// CHECK: %[[TRIPS:.*]] = arith.maxsi
// CHECK: %[[SHARE:.*]] = arith.muli %[[TRIPS]], %[[R]]
// CHECK: %[[FIRST:.*]] = arith.divui %[[SHARE]], %c4
// CHECK: %[[ACC:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1 iter_args
// CHECK: tile.load %arg1
// CHECK: %[[ROWS:.*]] = tile.reduce %[[ACC]] {kind = sum, axis = 1}
// CHECK-NEXT: %[[SUM:.*]] = tile.split_sum %[[ROWS]] : tensor<16x1xf32> -> tensor<16x1xf32>
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[RANK]], %{{.*}} : i32
// CHECK: scf.if %[[LEAD]] {
// CHECK: tile.reshape %[[SUM]]
// CHECK: tile.store
// CHECK: }
// CHECK-NEXT: return
// NONE-LABEL: func.func @matvec
// NONE-NOT: tile.split
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @matvec(%o: !v, %w: !w, %x: !v, %n: index) attributes {tile.kernel} {
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
    %t = arith.mulf %wf, %xb : tensor<16x512xf32>
    %a2 = arith.addf %a, %t : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  tile.store %y, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// Two carried sums (a product and the vector's squares, as a product with
// a folded RMSNorm): both reductions move up and meet in one split_sum; a
// carried value read other than by a sum reduction meets whole. The residual
// tile the epilogue reads back is read in rank 0 only.
// CHECK-LABEL: func.func @norm_residual
// CHECK: %[[L:.*]]:3 = scf.for
// CHECK: %[[A:.*]] = tile.reduce %[[L]]#0 {kind = sum, axis = 1}
// CHECK-NEXT: %[[B:.*]] = tile.reduce %[[L]]#1 {kind = sum, axis = 0}
// CHECK-NEXT: %[[S:.*]]:3 = tile.split_sum %[[A]], %[[B]], %[[L]]#2 : tensor<16x1xf32>, tensor<1xf32>, tensor<16xf32> -> tensor<16x1xf32>, tensor<1xf32>, tensor<16xf32>
// CHECK: scf.if
// CHECK: tile.load %arg0
// CHECK: tile.store
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @norm_residual(%o: !v, %w: !w, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %f0 = arith.constant 0.0 : f32
  %zs = tile.splat %f0 : f32 -> tensor<512xf32>
  %z16 = arith.constant dense<0.0> : tensor<16xf32>
  %p = tile.program_id 0
  %acc:3 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z, %s = %zs, %e = %z16) -> (tensor<16x512xf32>, tensor<512xf32>, tensor<16xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %xv = tile.load %x[%j] : !v -> tensor<512xf32>
    %sq = arith.mulf %xv, %xv : tensor<512xf32>
    %s2 = arith.addf %s, %sq : tensor<512xf32>
    %a2 = arith.addf %wf, %a : tensor<16x512xf32>
    %ev = tile.load %x[%j] : !v -> tensor<16xf32>
    %e2 = arith.addf %e, %ev : tensor<16xf32>
    scf.yield %a2, %s2, %e2 : tensor<16x512xf32>, tensor<512xf32>, tensor<16xf32>
  }
  %r = tile.reduce %acc#0 {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %q = tile.reduce %acc#1 {kind = sum, axis = 0} : tensor<512xf32> -> tensor<1xf32>
  %y = tile.reshape %r : tensor<16x1xf32> -> tensor<16xf32>
  %qb = tile.broadcast %q : tensor<1xf32> -> tensor<16xf32>
  %old = tile.load %o[%p] : !v -> tensor<16xf32>
  %t = arith.mulf %y, %qb : tensor<16xf32>
  %t2 = arith.addf %t, %acc#2 : tensor<16xf32>
  %new = arith.addf %old, %t2 : tensor<16xf32>
  tile.store %new, %o[%p] : tensor<16xf32>, !v
  return
}

// -----

// Left alone: a carried value that does not start at zero; one that the
// body reads besides its add (a running maximum); a store before the loop;
// two loops; and a function without tile.kernel.
// CHECK-LABEL: func.func @nonzero_start
// CHECK-NOT: tile.split
// CHECK-LABEL: func.func @running_max
// CHECK-NOT: tile.split
// CHECK-LABEL: func.func @store_before
// CHECK-NOT: tile.split
// CHECK-LABEL: func.func @two_loops
// CHECK-NOT: tile.split
// CHECK-LABEL: func.func @not_a_kernel
// CHECK-NOT: tile.split
!v = memref<?xf32, strided<[1], offset: ?>>
func.func @nonzero_start(%o: !v, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant dense<1.0> : tensor<64xf32>
  %c0i = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %one) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %r, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @running_max(%o: !v, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %c0i = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %m = arith.maximumf %a, %xv : tensor<64xf32>
    %a2 = arith.addf %a, %m : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %r, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @store_before(%o: !v, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %c0i = arith.constant 0 : i32
  %c1i = arith.constant 1 : i32
  tile.store %z, %o[%c1i] : tensor<64xf32>, !v
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %r, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @two_loops(%o: !v, %x: !v, %n: index) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %c0i = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  %r2 = scf.for %i = %c0 to %n step %c1 iter_args(%a = %r) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %r2, %o[%c0i] : tensor<64xf32>, !v
  return
}
func.func @not_a_kernel(%o: !v, %x: !v, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant dense<0.0> : tensor<64xf32>
  %c0i = arith.constant 0 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %z) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %xv = tile.load %x[%j] : !v -> tensor<64xf32>
    %a2 = arith.addf %a, %xv : tensor<64xf32>
    scf.yield %a2 : tensor<64xf32>
  }
  tile.store %r, %o[%c0i] : tensor<64xf32>, !v
  return
}
