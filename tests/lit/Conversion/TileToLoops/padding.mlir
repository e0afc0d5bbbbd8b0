// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops=vector-width=2 | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s --check-prefix=EDGE

// Each load's elements outside the memref read as its padding value, a
// constant of the element type: NaN (the quiet NaN of f32), -inf of bf16, an
// i32, true for i1, a finite f32; a load without padding reads zero. On both
// targets the ragged path selects the constant for an element out of bounds.
// CHECK-LABEL: func.func @pads
// CHECK: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NAN]] : f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF80 : bf16
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[NINF]] : bf16
// CHECK: %[[M7:.*]] = arith.constant -7 : i32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[M7]] : i32
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[TRUE]] : i1
// CHECK: %[[HALF:.*]] = arith.constant 2.500000e+00 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[HALF]] : f32
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: arith.select %{{.*}}, %{{.*}}, %[[ZERO]] : f32
// The edge copy of the versioned kernel is one element loop (purely
// elementwise): its loads yield the padding values outside the memref.
// EDGE-LABEL: func.func @pads
// EDGE: } else {
// EDGE: scf.for
// EDGE: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// EDGE-NEXT: scf.yield %[[NAN]] : f32
// EDGE: %[[NINF:.*]] = arith.constant 0xFF80 : bf16
// EDGE-NEXT: scf.yield %[[NINF]] : bf16
// EDGE: %[[M7:.*]] = arith.constant -7 : i32
// EDGE-NEXT: scf.yield %[[M7]] : i32
// EDGE: %[[TRUE:.*]] = arith.constant true
// EDGE-NEXT: scf.yield %[[TRUE]] : i1
// EDGE: %[[HALF:.*]] = arith.constant 2.500000e+00 : f32
// EDGE-NEXT: scf.yield %[[HALF]] : f32
// EDGE: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// EDGE-NEXT: scf.yield %[[ZERO]] : f32
!f = memref<?xf32, strided<[?], offset: ?>>
func.func @pads(%f: !f, %b: memref<?xbf16, strided<[?], offset: ?>>,
                %n: memref<?xi32, strided<[?], offset: ?>>,
                %p: memref<?xi1, strided<[?], offset: ?>>, %o: !f) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %x = tile.load %f[%c0] padding = nan : !f -> tensor<32xf32>
  %y = tile.load %b[%c0] padding = -inf : memref<?xbf16, strided<[?], offset: ?>> -> tensor<32xbf16>
  %z = tile.load %n[%c0] padding = -7 : memref<?xi32, strided<[?], offset: ?>> -> tensor<32xi32>
  %w = tile.load %p[%c0] padding = 1 : memref<?xi1, strided<[?], offset: ?>> -> tensor<32xi1>
  %v = tile.load %f[%c0] padding = 2.5 : !f -> tensor<32xf32>
  %u = tile.load %o[%c0] : !f -> tensor<32xf32>
  %y32 = arith.extf %y : tensor<32xbf16> to tensor<32xf32>
  %z32 = arith.sitofp %z : tensor<32xi32> to tensor<32xf32>
  %s0 = arith.addf %x, %y32 : tensor<32xf32>
  %s1 = arith.addf %s0, %z32 : tensor<32xf32>
  %s2 = arith.addf %s1, %v : tensor<32xf32>
  %s3 = arith.addf %s2, %u : tensor<32xf32>
  %r = arith.select %w, %s3, %x : tensor<32xi1>, tensor<32xf32>
  tile.store %r, %o[%c0] : tensor<32xf32>, !f
  return
}
