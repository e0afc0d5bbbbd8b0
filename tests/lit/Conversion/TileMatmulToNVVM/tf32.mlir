// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a halve-tail=0" | FileCheck %s

// f32 inputs with a K-major B (the transposed view of an N x K matrix) run on
// wgmma's tf32: 128 x 256 x 32 tiles of f32 are 128-byte rows, so one A box
// (32 x 128) and one B box (32 x 256) per k-tile, 4 stages of 48 KiB, and four
// wgmma m64n256k8 per k-tile, without the transpose operands (tf32 has none).

// CHECK-LABEL: func.func @mm_tf32
// CHECK-SAME: tile.block_size = 384 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 197696 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 32, 128, 128>, array<i64: 2, 32, 256, 128>]
// CHECK-NOT: tile.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{.*}}, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-NOT: tile.
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
!t = memref<?x?xf32, strided<[1, ?], offset: ?>>
func.func @mm_tf32(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x32xf32>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<32x256xf32>
    %d = tile.mma %ta, %tb, %c : tensor<128x32xf32>, tensor<32x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x256xf32>, !m
  return
}

// -----

// f32 inputs with a row-major B run transposed, C^T = B^T A^T: the same TMA
// boxes (A: one box of 32 x 256; B: BN / 32 = 4 boxes of 32 x 32), two
// consumers of 64 columns each, per k-tile 4 x 4 32-bit shared loads of B^T's
// fragments, then four wgmma m64n256k8 (N = BM) with A in registers and the A
// tile as the K-major shared operand; the epilogue stores one element at a time
// (64 rows x 2 columns per thread).

// CHECK-LABEL: func.func @mm_tf32_row_major_b
// CHECK-SAME: tile.block_size = 384 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 197696 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 32, 256, 128>, array<i64: 2, 32, 32, 128>]
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK-COUNT-16: llvm.load {{.*}} : !llvm.ptr<3> -> i32
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {{.*}}}, {$256, $257, $258, $259}, $260, p, 1, 1;
// CHECK-NOT: wgmma.mma_async
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK-COUNT-128: memref.store
// CHECK-NOT: memref.store
// CHECK-NOT: tile.
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_tf32_row_major_b(%o: !m, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<256x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<256x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<256x32xf32>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x128xf32>
    %d = tile.mma %ta, %tb, %c : tensor<256x32xf32>, tensor<32x128xf32>, tensor<256x128xf32> -> tensor<256x128xf32>
    scf.yield %d : tensor<256x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<256x128xf32>, !m
  return
}
