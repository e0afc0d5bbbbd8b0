// RUN: tessera-opt %s -split-input-file -tile-guard-tile-indices | FileCheck %s

// A load may reach a tile wholly outside its tensor: it is tested (the tile's
// origin in [0, size) along each dimension, unsigned) and reads its padding
// there; a store there is dropped (Target/TileIR/guarded.mlir: its Tile IR).
// CHECK-LABEL: func.func @shifted
// CHECK: %[[I:.*]] = arith.addi
// CHECK: %[[D0:.*]] = memref.dim %arg1, %c0
// CHECK: %[[O0:.*]] = arith.index_cast %[[I]] : i32 to index
// CHECK: %[[B0:.*]] = arith.muli %[[O0]], %c128
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[B0]], %[[D0]] : index
// CHECK: %[[T:.*]] = scf.if %[[IN]] -> (tensor<128xf32>) {
// CHECK:   %[[L:.*]] = tile.load %arg1[%[[I]]] padding = -inf
// CHECK:   scf.yield %[[L]]
// CHECK: } else {
// CHECK:   %[[P:.*]] = arith.constant 0xFF800000 : f32
// CHECK:   %[[S:.*]] = tile.splat %[[P]] : f32 -> tensor<128xf32>
// CHECK:   scf.yield %[[S]]
// CHECK: }
// CHECK: arith.cmpi ult
// CHECK: scf.if %{{.*}} {
// CHECK:   tile.store %[[T]], %arg0
// CHECK: }
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @shifted(%o: !f1, %a: !f1, %k: i32) attributes {tile.kernel} {
  %p = tile.program_id 0
  %i = arith.addi %p, %k : i32
  %x = tile.load %a[%i] padding = -inf : !f1 -> tensor<128xf32>
  tile.store %x, %o[%p] : tensor<128xf32>, !f1
  return
}

// -----

// Two dimensions: both origins tested, joined.
// CHECK-LABEL: func.func @two_d
// CHECK: arith.cmpi ult
// CHECK: arith.cmpi ult
// CHECK: %[[BOTH:.*]] = arith.andi
// CHECK: scf.if %[[BOTH]] -> (tensor<16x32xbf16>)
!b2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @two_d(%o: !b2, %a: !b2) attributes {tile.kernel} {
  %x = tile.program_id 0
  %y = tile.program_id 1
  %t = tile.load %a[%y, %x] : !b2 -> tensor<16x32xbf16>
  tile.store %t, %o[%x, %y] : tensor<16x32xbf16>, !b2
  return
}

// -----

// Whole tiles (the launcher proved every tile whole) and accesses marked
// tile.interior are left alone.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: scf.if
// CHECK: return
// CHECK-LABEL: func.func @interior
// CHECK-NOT: scf.if
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @whole(%o: !f1, %a: !f1) attributes {tile.kernel, tile.whole_tiles} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<128xf32>
  tile.store %x, %o[%p] : tensor<128xf32>, !f1
  return
}
func.func @interior(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : !f1 -> tensor<128xf32>
  tile.store %x, %o[%p] {tile.interior} : tensor<128xf32>, !f1
  return
}
