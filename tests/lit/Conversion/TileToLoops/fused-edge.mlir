// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=gpu block-size=16" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -tile-version-interior -convert-tile-to-loops="target=cpu" | FileCheck %s --check-prefix=CPU

// The edge copy of a versioned elementwise kernel (bf16 in, f32 math, a
// constant, a scalar splat, bf16 out) is one rolled loop over the thread's
// chunks: per element, each load under its own bounds check (padding
// outside), the arithmetic on scalars in f32, the store under a bounds
// check. No private buffer is written in it.
// CHECK-LABEL: func.func @axpb
// CHECK: scf.if
// CHECK: vector.load
// CHECK: } else {
// CHECK-NOT: memref.store %{{.*}}, %alloca
// CHECK: scf.for %[[C:.*]] = %{{.*}} to %c2 step %c1 {
// CHECK: %[[OK:.*]] = arith.cmpi ult, %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[X:.*]] = scf.if %[[OK]] -> (bf16) {
// CHECK-NEXT: %[[L:.*]] = memref.load %arg1[%{{.*}}]
// CHECK-NEXT: scf.yield %[[L]] : bf16
// CHECK-NEXT: } else {
// CHECK: scf.yield %{{.*}} : bf16
// CHECK: arith.extf %[[X]] : bf16 to f32
// CHECK: arith.mulf
// CHECK: arith.addf %{{.*}}, %arg3 : f32
// CHECK: %[[R:.*]] = arith.truncf %{{.*}} : f32 to bf16
// CHECK: scf.if %{{.*}} {
// CHECK-NEXT: memref.store %[[R]], %arg0[%{{.*}}]
// CHECK: } {loop_annotation =
// CHECK-NOT: memref.store %{{.*}}, %alloca
// CHECK: return
// On cpu (one thread, nothing unrolled) the edge copy is one loop too.
// CPU-LABEL: func.func @axpb
// CPU: } else {
// CPU-NOT: %alloca
// CPU: scf.for
// CPU: scf.if %{{.*}} -> (bf16)
// CPU: return
!b1 = memref<?xbf16, strided<[1], offset: ?>>
func.func @axpb(%o: !b1 {tile.align = 16 : i64}, %a: !b1 {tile.align = 16 : i64},
                %b: !b1 {tile.align = 16 : i64}, %s: f32) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %a[%p] : !b1 -> tensor<256xbf16>
  %y = tile.load %b[%p] : !b1 -> tensor<256xbf16>
  %xf = arith.extf %x : tensor<256xbf16> to tensor<256xf32>
  %yf = arith.extf %y : tensor<256xbf16> to tensor<256xf32>
  %c = arith.constant dense<2.0> : tensor<256xf32>
  %t = tile.splat %s : f32 -> tensor<256xf32>
  %m = arith.mulf %xf, %c : tensor<256xf32>
  %n = arith.addf %m, %yf : tensor<256xf32>
  %r = arith.addf %n, %t : tensor<256xf32>
  %rb = arith.truncf %r : tensor<256xf32> to tensor<256xbf16>
  tile.store %rb, %o[%p] : tensor<256xbf16>, !b1
  return
}

// -----

// An output read and written at the same tile (o += a) is fused too: each
// element is loaded before it is stored.
// CHECK-LABEL: func.func @accumulate
// CHECK: } else {
// CHECK: scf.for
// CHECK: memref.load %arg0
// CHECK: memref.load %arg1
// CHECK: arith.addf
// CHECK: memref.store %{{.*}}, %arg0
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @accumulate(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %x = tile.load %o[%p] : !f1 -> tensor<64xf32>
  %y = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// An output read at another tile than it is written stays op by op (the
// ragged path stages the tile in a private buffer).
// CHECK-LABEL: func.func @shifted
// CHECK: } else {
// CHECK: vector.load
// CHECK: memref.store %{{.*}}, %alloca
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @shifted(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c1 = arith.constant 1 : i32
  %q = arith.addi %p, %c1 : i32
  %x = tile.load %o[%q] : !f1 -> tensor<64xf32>
  %y = tile.load %a[%p] : !f1 -> tensor<64xf32>
  %s = arith.addf %x, %y : tensor<64xf32>
  tile.store %s, %o[%p] : tensor<64xf32>, !f1
  return
}

// -----

// A reduction in the edge copy keeps the op-by-op lowering.
// CHECK-LABEL: func.func @scaled_by_sum
// CHECK: } else {
// CHECK: vector.load
// CHECK: memref.store %{{.*}}, %alloca
// CHECK: nvvm.shfl.sync
!f2 = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @scaled_by_sum(%o: !f2 {tile.align = 16 : i64}, %a: !f2 {tile.align = 16 : i64},
                         %w: !f2 {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !f2 -> tensor<1x64xf32>
  %v = tile.load %w[%c0, %c0] : !f2 -> tensor<1x64xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x64xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %r : tensor<1x1xf32> -> tensor<1x64xf32>
  %m = arith.mulf %b, %v : tensor<1x64xf32>
  tile.store %m, %o[%p, %c0] : tensor<1x64xf32>, !f2
  return
}

// -----

// An edge copy that uses a tile computed outside it (here written by hand:
// tile-version-interior copies the whole body) stays op by op.
// CHECK-LABEL: func.func @outer_tile
// CHECK: } else {
// CHECK: memref.load %{{.*}}[%{{.*}}] : memref<4xf32>
// CHECK: return
!f1 = memref<?xf32, strided<[1], offset: ?>>
func.func @outer_tile(%o: !f1 {tile.align = 16 : i64}, %a: !f1 {tile.align = 16 : i64}, %c: i1) attributes {tile.kernel} {
  %p = tile.program_id 0
  %k = arith.constant dense<3.0> : tensor<64xf32>
  scf.if %c {
    %x = tile.load %a[%p] {tile.interior} : !f1 -> tensor<64xf32>
    %s = arith.addf %x, %k : tensor<64xf32>
    tile.store %s, %o[%p] {tile.interior} : tensor<64xf32>, !f1
  } else {
    %x = tile.load %a[%p] : !f1 -> tensor<64xf32>
    %s = arith.addf %x, %k : tensor<64xf32>
    tile.store %s, %o[%p] : tensor<64xf32>, !f1
  } {tile.versions}
  return
}
