// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a halve-tail=0" | FileCheck %s

// 8-bit float inputs with a K-major B (the transposed view of an N x K matrix)
// run on wgmma m64nNk32: 128 x 128 x 128 tiles of f8E4M3FN are 128-byte rows,
// so one A box (128 x 128 bytes) and one B box (128 x 128 bytes) per k-tile,
// their tensor maps of 128-element boxes; four wgmma m64n128k32 per k-tile
// (32 bytes of each row each), without transpose operands (f8 has none).
// wgmma keeps 13 bits of an 8-bit sum, so each k-tile's wgmmas start a
// partial sum at zero (scale-d 0, then 1) and after the wait its 64 registers
// are added to the f32 accumulator. The bf16 output is staged for TMA stores.

// CHECK-LABEL: func.func @mm_e4m3
// CHECK-SAME: tile.block_size = 384 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 128, 128, 128>, array<i64: 2, 128, 128, 128>, array<i64: 0, 64, 64, 128>]
// CHECK-NOT: tile.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: cp.async.bulk.tensor.2d.shared::cluster
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: wgmma.fence.sync.aligned;
// CHECK: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;{{.*}}, %c0_i32{{[_0-9]*}} : (
// CHECK-COUNT-3: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {{.*}}, p, 1, 1;{{.*}}, %c1_i32{{[_0-9]*}} : (
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-COUNT-64: arith.addf {{.*}} : f32
// CHECK-NOT: tile.
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_e4m3(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<128x128xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<128x128xbf16>, !o
  return
}

// -----

// 8-bit floats in BN 256: the partial sums and the accumulator would exceed
// the consumers' registers, so the kernel is left to the other lowerings.

// CHECK-LABEL: func.func @mm_e4m3_wide
// CHECK: tile.mma
// CHECK-NOT: wgmma
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_wide(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<128x256xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x256xf32>, !o
  return
}

// -----

// f8E5M2, 64 x 128 x 256: two boxes of A and of B per k-tile (256 bytes of
// each row), eight wgmma m64n128k32 per k-tile; the f32 output staged for TMA
// stores in boxes of 32 columns.

// CHECK-LABEL: func.func @mm_e5m2
// CHECK-SAME: tile.block_size = 256 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 128, 64, 128>, array<i64: 2, 128, 128, 128>, array<i64: 0, 32, 64, 128>]
// CHECK-COUNT-4: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: cp.async.bulk.tensor.2d.shared::cluster
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k32.f32.e5m2.e5m2 {{.*}}, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
!m = memref<?x?xf8E5M2, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E5M2, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e5m2(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x256xf8E5M2>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<256x128xf8E5M2>
    %d = tile.mma %ta, %tb, %c : tensor<64x256xf8E5M2>, tensor<256x128xf8E5M2>, tensor<64x128xf32> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x128xf32>, !o
  return
}

// -----

// A row-major f8 B: wgmma reads 8-bit floats K-major only, so the kernel is
// left to the other lowerings; so is a K step of 64 f8 (64 bytes, half a
// swizzle box).

// CHECK-LABEL: func.func @mm_e4m3_row_major_b
// CHECK: tile.mma
// CHECK-NOT: wgmma
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_row_major_b(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<128x128xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x128xf32>, !o
  return
}

// -----

// CHECK-LABEL: func.func @mm_e4m3_narrow_k
// CHECK: tile.mma
// CHECK-NOT: wgmma
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_narrow_k(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x64xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<64x128xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x128xf32>, !o
  return
}

// -----

// One of each format, e4m3 A by e5m2 B: wgmma takes A's and B's types apart.

// CHECK-LABEL: func.func @mm_e4m3_e5m2
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2 {{.*}}, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E5M2, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_e5m2(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x128xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<128x128xf8E5M2>
    %d = tile.mma %ta, %tb, %c : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E5M2>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x128xf32>, !o
  return
}
