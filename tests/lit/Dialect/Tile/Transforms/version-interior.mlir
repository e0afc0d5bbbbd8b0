// RUN: tessera-opt %s -split-input-file -tile-version-interior | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -tile-version-interior | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s --check-prefix=LOWER

// Two loads and a store whose indices come from the program id: the index
// computations move to the top, followed by one test that every tile is in
// bounds (last index < dim, unsigned), and an scf.if whose then branch is a
// copy of the body with the accesses marked tile.interior, whose else branch
// is the body as it was. Running the pass twice changes nothing more.
// CHECK-LABEL: func.func @add
// CHECK-SAME: attributes {tile.kernel, tile.versioned}
// CHECK-NEXT: %[[P:.*]] = tile.program_id 0
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[Q:.*]] = arith.addi %[[P]], %[[C1]] : i32
// CHECK: %[[D:.*]] = memref.dim %arg1, %{{.*}}
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[P]] : i32 to index
// CHECK: %[[O:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[L:.*]] = arith.addi %[[O]], %{{.*}} : index
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi ult, %[[L]], %[[D]] : index
// CHECK: memref.dim %arg2
// CHECK: memref.dim %arg0
// CHECK: %[[ALL:.*]] = arith.andi
// CHECK: scf.if %[[ALL]] {
// CHECK-NEXT: %[[X:.*]] = tile.load %arg1[%[[P]]] {tile.interior}
// CHECK-NEXT: %[[Y:.*]] = tile.load %arg2[%[[Q]]] {tile.interior}
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[X]], %[[Y]]
// CHECK-NEXT: tile.store %[[S]], %arg0[%[[P]]] {tile.interior}
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[X2:.*]] = tile.load %arg1[%[[P]]] :
// CHECK-NEXT: %[[Y2:.*]] = tile.load %arg2[%[[Q]]] :
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[X2]], %[[Y2]]
// CHECK-NEXT: tile.store %[[S2]], %arg0[%[[P]]] :
// CHECK-NEXT: } {tile.versions}
// CHECK-NEXT: return

// Lowered, the interior copy has no test of its own and no ragged path: its
// two vector loads come before any other branch. The edge copy, elementwise,
// is one loop over the thread's elements with a bounds check per access (see
// Conversion/TileToLoops/fused-edge.mlir).
// LOWER-LABEL: func.func @add
// LOWER: scf.if
// LOWER-NOT: scf.if
// LOWER-COUNT-2: vector.load
// LOWER: vector.store
// LOWER: } else {
// LOWER-NOT: vector.load
// LOWER: scf.for
// LOWER: scf.if %{{.*}} -> (f32)
// LOWER: memref.load %arg1
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @add(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}, %b: !f1 {tile.align = 16 : i64})
    attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %c1 = arith.constant 1 : i32
  %q = arith.addi %p, %c1 : i32
  %y = tile.load %b[%q] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// Two-dimensional tiles: one bound per dimension of every access.
// CHECK-LABEL: func.func @rows
// CHECK-COUNT-6: arith.cmpi ult
// CHECK: scf.if
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @rows(%o: !f2, %a: !f2, %w: !f2) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !f2 -> tensor<1x64xf32>
  %v = tile.load %w[%c0, %c0] : !f2 -> tensor<1x64xf32>
  %s = arith.mulf %x, %v : tensor<1x64xf32>
  tile.store %s, %o[%p, %c0] : tensor<1x64xf32>, !f2
  return
}

// -----

// One load is enough: its join (values kept packed for the ragged branch)
// goes too.
// CHECK-LABEL: func.func @one_load
// CHECK: scf.if
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
// CHECK: } else {
// CHECK: } {tile.versions}
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @one_load(%o: !f1, %a: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = math.exp %x : tensor<64xf32>
  tile.store %y, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// A loop whose tile index grows with the induction variable (a row read 64
// columns per iteration): the test covers its first and last iterations (a
// non-decreasing index lies between them), that the last iteration's i32
// index does not wrap around (below 2^31), or that the loop runs no
// iteration; the copy's accesses in the loop are marked too.
// CHECK-LABEL: func.func @row_loop
// CHECK-SAME: tile.versioned
// CHECK: %[[N:.*]] = arith.index_cast %{{.*}} : i32 to index
// CHECK: arith.divui
// CHECK: %[[LAST:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: %[[LASTI:.*]] = arith.index_cast %[[LAST]] : index to i64
// CHECK: %[[LIMIT:.*]] = arith.constant 2147483648 : i64
// CHECK: arith.cmpi slt, %[[LASTI]], %[[LIMIT]] : i64
// CHECK: %[[EMPTY:.*]] = arith.cmpi sge, %{{.*}}, %[[N]] : index
// CHECK: %[[LOOPOK:.*]] = arith.ori %[[EMPTY]], %{{.*}} : i1
// CHECK: %[[ALL:.*]] = arith.andi %{{.*}}, %[[LOOPOK]] : i1
// CHECK: scf.if %[[ALL]] {
// CHECK: scf.for
// CHECK: tile.load %arg1[%{{.*}}, %{{.*}}] {tile.interior}
// CHECK: tile.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] {tile.interior}
// CHECK: } else {
// CHECK: scf.for
// CHECK: tile.load %arg1[%{{.*}}, %{{.*}}] :
// CHECK: } {tile.versions}

// Lowered, the interior loop's load is a vector load with no branch in the
// loop.
// LOWER-LABEL: func.func @row_loop
// LOWER: scf.if
// LOWER: scf.for
// LOWER-NOT: scf.if
// LOWER: vector.load
// LOWER: } else {
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @row_loop(%o: !f2, %a: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %n = arith.constant 4 : i32
  %c0 = arith.constant 0 : index
  %ub = arith.index_cast %n : i32 to index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<1x64xf32>
  %acc = scf.for %i = %c0 to %ub step %c1 iter_args(%s = %init) -> (tensor<1x64xf32>) {
    %j = arith.index_cast %i : index to i32
    %p = tile.program_id 0
    %x = tile.load %a[%p, %j] : !f2 -> tensor<1x64xf32>
    %t = arith.addf %s, %x : tensor<1x64xf32>
    scf.yield %t : tensor<1x64xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<1x64xf32> -> tensor<1x1xf32>
  %p0 = tile.program_id 0
  %z = arith.constant 0 : i32
  tile.store %r, %o[%p0, %z] : tensor<1x1xf32>, !f2
  return
}

// -----

// Indices of the form 2 * i + p (a K loop over pairs of tiles): its trend
// is followed through muli by a non-negative constant and addi.
// CHECK-LABEL: func.func @affine_index
// CHECK: arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: arith.addi %{{.*}}, %{{.*}} : i64
// CHECK: scf.if
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @affine_index(%o: !f1, %a: !f1, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ub = arith.index_cast %n : i32 to index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %p = tile.program_id 0
  %acc = scf.for %i = %c0 to %ub step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %two = arith.constant 2 : i32
    %k = arith.muli %j, %two : i32
    %q = arith.addi %k, %p : i32
    %x = tile.load %a[%q] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  tile.store %acc, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// The same, with the constant factor defined before the loop, after the ops
// of the loop's bounds: it moves to the top with the other values the test
// uses (it was left in the body, which the test cannot see).
// CHECK-LABEL: func.func @factor_before_loop
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK: arith.extsi %[[TWO]] : i32 to i64
// CHECK: scf.if
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @factor_before_loop(%o: !f1, %a: !f1, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : index
  %ub = arith.index_cast %n : i32 to index
  %c1 = arith.constant 1 : index
  %init = arith.constant dense<0.0> : tensor<64xf32>
  %p = tile.program_id 0
  %two = arith.constant 2 : i32
  %acc = scf.for %i = %c0 to %ub step %c1 iter_args(%s = %init) -> (tensor<64xf32>) {
    %j = arith.index_cast %i : index to i32
    %k = arith.muli %j, %two : i32
    %q = arith.addi %k, %p : i32
    %x = tile.load %a[%q] : !f1 -> tensor<64xf32>
    %t = arith.addf %s, %x : tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  tile.store %acc, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// A loop without accesses does not stop the kernel's other accesses from
// being versioned.
// CHECK-LABEL: func.func @loop_without_accesses
// CHECK: scf.if
// CHECK: tile.load %arg1[%{{.*}}] {tile.interior}
// CHECK: scf.for
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @loop_without_accesses(%o: !f1, %a: !f1, %b: !f1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %b[%p] : !f1 -> tensor<64xf32>
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %x) -> (tensor<64xf32>) {
    %n = arith.addf %acc, %y : tensor<64xf32>
    scf.yield %n : tensor<64xf32>
  }
  tile.store %r, %o[%p] : tensor<64xf32>, !f1
  return
}
