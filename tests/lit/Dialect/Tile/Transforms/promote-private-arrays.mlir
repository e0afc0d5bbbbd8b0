// RUN: tessera-opt %s -split-input-file -tile-promote-private-arrays | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=16" -canonicalize -tile-promote-private-arrays | FileCheck %s --check-prefix=LOWER

// Stores and loads at constant indices in one block: each load becomes the
// value last stored at its position (here a 2-d array, position [1, 0] stored
// twice), and the array goes.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: memref.alloca
// CHECK-NOT: memref.load
// CHECK-NOT: memref.store
// CHECK: %[[S:.*]] = arith.addf %arg1, %arg0 : f32
// CHECK-NEXT: %[[T:.*]] = arith.mulf %[[S]], %arg2 : f32
// CHECK-NEXT: return %[[T]] : f32
func.func @forward(%x: f32, %y: f32, %z: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloca() : memref<2x2xf32>
  memref.store %x, %a[%c0, %c1] : memref<2x2xf32>
  memref.store %x, %a[%c1, %c0] : memref<2x2xf32>
  memref.store %y, %a[%c1, %c0] : memref<2x2xf32>
  %u = memref.load %a[%c1, %c0] : memref<2x2xf32>
  %v = memref.load %a[%c0, %c1] : memref<2x2xf32>
  %s = arith.addf %u, %v : f32
  memref.store %z, %a[%c0, %c0] : memref<2x2xf32>
  %w = memref.load %a[%c0, %c0] : memref<2x2xf32>
  %t = arith.mulf %s, %w : f32
  return %t : f32
}

// -----

// An array indexed by a loop variable stays; the one beside it, accessed at
// constant indices in one block, goes.
// CHECK-LABEL: func.func @mixed
// CHECK: %[[A:.*]] = memref.alloca() : memref<4xf32>
// CHECK-NOT: memref.alloca
// CHECK: scf.for %[[I:.*]] =
// CHECK-NEXT: memref.store %arg0, %[[A]][%[[I]]]
// CHECK: %[[L:.*]] = memref.load %[[A]][%{{.*}}]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[L]], %arg1 : f32
// CHECK-NEXT: return %[[S]]
func.func @mixed(%x: f32, %y: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %a = memref.alloca() : memref<4xf32>
  %b = memref.alloca() : memref<4xf32>
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %x, %a[%i] : memref<4xf32>
  }
  memref.store %y, %b[%c1] : memref<4xf32>
  %l = memref.load %a[%c1] : memref<4xf32>
  %r = memref.load %b[%c1] : memref<4xf32>
  %s = arith.addf %l, %r : f32
  return %s : f32
}

// -----

// After lowering, the interior copy of a versioned-style kernel keeps its
// thread's elements in SSA values: nothing is left of the private arrays of
// an elementwise add but vector loads, adds and vector stores.
// LOWER-LABEL: func.func @add
// LOWER-NOT: memref.alloca
// LOWER: vector.load
// LOWER: vector.load
// LOWER: arith.addf
// LOWER: vector.store
// LOWER-NOT: memref.store
// LOWER: return
func.func @add(%o: memref<?xf32, strided<[1], offset: ?>> {tile.align = 16 : i64},
               %a: memref<?xf32, strided<[1], offset: ?>> {tile.align = 16 : i64},
               %b: memref<?xf32, strided<[1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] {tile.interior} : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
  %y = tile.load %b[%p] {tile.interior} : memref<?xf32, strided<[1], offset: ?>> -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] {tile.interior} : tensor<64xf32>, memref<?xf32, strided<[1], offset: ?>>
  return
}
