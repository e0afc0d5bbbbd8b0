// RUN: tessera-opt %s -split-input-file -tile-version-interior | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s --check-prefix=LOWER

// A kernel marked tile.whole_tiles (the launcher found every tile of the
// launch in bounds): no test and no edge copy; every access is marked
// tile.interior in place, also inside a loop the test could not bound (an
// index carried by the loop), and the kernel is not marked tile.versioned.
// CHECK-LABEL: func.func @add
// CHECK-SAME: attributes {tile.kernel, tile.whole_tiles}
// CHECK-NOT: scf.if
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
// CHECK: tile.load %arg2[%{{.*}}] {tile.interior}
// CHECK: scf.for
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
// CHECK: tile.store %{{.*}}, %arg0[%{{.*}}] {tile.interior}
// CHECK-NOT: scf.if
// CHECK: return

// Lowered: vector accesses only, with no bounds test around them.
// LOWER-LABEL: func.func @add
// LOWER-NOT: scf.if
// LOWER-NOT: memref.load %arg
// LOWER: vector.load
// LOWER: vector.store
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @add(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}, %b: !f1 {tile.align = 16 : i64})
    attributes {tile.kernel, tile.whole_tiles} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %c1 = arith.constant 1 : i32
  %q = arith.addi %p, %c1 : i32
  %y = tile.load %b[%q] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  %c0i = arith.constant 0 : index
  %c1i = arith.constant 1 : index
  %c2i = arith.constant 2 : index
  %r:2 = scf.for %i = %c0i to %c2i step %c1i iter_args(%acc = %s, %j = %p) -> (tensor<64xf32>, i32) {
    %z = tile.load %a[%j] : !f1 -> tensor<64xf32>
    %t = arith.addf %acc, %z : tensor<64xf32>
    scf.yield %t, %p : tensor<64xf32>, i32
  }
  tile.store %r#0, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// The copies of a ring (tile-stream-loads') are marked too: their valid
// copies are tiles of the loads they replaced.
// CHECK-LABEL: func.func @ring
// CHECK: tile.stream_copy %arg1[%{{.*}}] to %{{.*}}[%{{.*}}] if %{{.*}} round %{{.*}} {tile.interior}
// CHECK: tile.store %{{.*}}, %arg0[%{{.*}}] {tile.interior}
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @ring(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}, %s: index, %r: index, %v: i1)
    attributes {tile.kernel, tile.whole_tiles} {
  %p = tile.program_id 0
  %ring = tile.stream_buffer bulk : memref<2x64xf32>
  tile.stream_copy %a[%p] to %ring[%s] if %v round %r : !f1, memref<2x64xf32>
  tile.stream_ready %ring[%s] round %r : memref<2x64xf32>
  %t = tile.stream_take %ring[%s] : memref<2x64xf32> -> tensor<64xf32>
  tile.stream_release %ring[%s] : memref<2x64xf32>
  tile.store %t, %o[%p] : tensor<64xf32>, !f1
  return
}
