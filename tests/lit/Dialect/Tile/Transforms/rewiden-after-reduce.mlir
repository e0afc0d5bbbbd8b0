// RUN: tessera-opt %s -split-input-file -tile-rewiden-after-reduce | FileCheck %s

// RMSNorm: the widened row feeds the reduction and is used again after it.
// A copy of the extf, marked tile.rewiden, is inserted just before that use,
// so that the bf16 row is what lives across the reduction; the kernel is
// marked tile.rewidened.
// CHECK-LABEL: func.func @rmsnorm
// CHECK-SAME: tile.rewidened
// CHECK: %[[X:.*]] = tile.load
// CHECK-NEXT: %[[T:.*]] = arith.extf %[[X]] : tensor<1x8192xbf16> to tensor<1x8192xf32>
// CHECK-NEXT: arith.mulf %[[T]], %[[T]]
// CHECK-NEXT: tile.reduce
// CHECK-NEXT: math.rsqrt
// CHECK-NEXT: %[[B:.*]] = tile.broadcast
// CHECK-NEXT: %[[T2:.*]] = arith.extf %[[X]] {tile.rewiden} : tensor<1x8192xbf16> to tensor<1x8192xf32>
// CHECK-NEXT: arith.mulf %[[T2]], %[[B]]
!b2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @rmsnorm(%o: !b2, %a: !b2) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %p = tile.program_id 0
  %x = tile.load %a[%p, %c0] : !b2 -> tensor<1x8192xbf16>
  %t = arith.extf %x : tensor<1x8192xbf16> to tensor<1x8192xf32>
  %sq = arith.mulf %t, %t : tensor<1x8192xf32>
  %s = tile.reduce %sq {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
  %inv = math.rsqrt %s : tensor<1x1xf32>
  %ib = tile.broadcast %inv : tensor<1x1xf32> -> tensor<1x8192xf32>
  %n = arith.mulf %t, %ib : tensor<1x8192xf32>
  %y = arith.truncf %n : tensor<1x8192xf32> to tensor<1x8192xbf16>
  tile.store %y, %o[%p, %c0] : tensor<1x8192xbf16>, !b2
  return
}

// -----

// Users after the reduce in a nested region count as users after it; every
// use after the first reduce takes the copy, also those after a second reduce
// (a copy is not copied again).
// CHECK-LABEL: func.func @two_reduces
// CHECK: %[[X:.*]] = tile.load
// CHECK-NEXT: %[[T:.*]] = arith.extf %[[X]] : tensor<64xbf16>
// CHECK-NEXT: %[[M:.*]] = tile.reduce %[[T]] {kind = max
// CHECK-NEXT: %[[T2:.*]] = arith.extf %[[X]] {tile.rewiden}
// CHECK-NEXT: %[[S:.*]] = tile.reduce %[[T2]] {kind = sum
// CHECK-NEXT: scf.if
// CHECK-NEXT: arith.addf %[[T2]], %[[T2]]
// CHECK-NOT: tile.rewiden
!b1 = memref<?xbf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @two_reduces(%o: !f1, %a: !b1, %flag: i1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !b1 -> tensor<64xbf16>
  %t = arith.extf %x : tensor<64xbf16> to tensor<64xf32>
  %m = tile.reduce %t {kind = max, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %s = tile.reduce %t {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  scf.if %flag {
    %d = arith.addf %t, %t : tensor<64xf32>
    tile.store %d, %o[%p] : tensor<64xf32>, !f1
  }
  return
}

// -----

// An extf whose users all follow the reduce moves down to the first of them:
// no copy.
// CHECK-LABEL: func.func @all_after
// CHECK-SAME: tile.rewidened
// CHECK: tile.reduce
// CHECK-NEXT: tile.broadcast
// CHECK-NEXT: %[[W:.*]] = arith.extf %{{.*}} : tensor<64xbf16> to tensor<64xf32>
// CHECK-NEXT: arith.addf %[[W]]
!b1 = memref<?xbf16, strided<[1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @all_after(%o: !f1, %a: !b1, %f: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !b1 -> tensor<64xbf16>
  %t = arith.extf %x : tensor<64xbf16> to tensor<64xf32>
  %y = tile.load %f[%p] : !f1 -> tensor<64xf32>
  %s = tile.reduce %y {kind = sum, axis = 0} : tensor<64xf32> -> tensor<1xf32>
  %b = tile.broadcast %s : tensor<1xf32> -> tensor<64xf32>
  %d = arith.addf %t, %b : tensor<64xf32>
  tile.store %d, %o[%p] : tensor<64xf32>, !f1
  return
}
