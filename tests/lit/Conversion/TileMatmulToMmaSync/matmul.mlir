// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_120" | FileCheck %s

// A matmul with a bias + relu + bf16 epilogue in 64 x 64 x 32 tiles: 4 warps
// of 32 x 32, 3 stages of 8 KiB (A 64 x 32, B 32 x 64). Per k-tile each
// thread copies 2 chunks of A and 2 of B (16 bytes each); k-tiles 0 and 1 are
// in flight before the loop. Per k-step of 16 a warp loads 2 A fragments
// (ldmatrix.x4) and 2 pairs of B fragments (ldmatrix.x4.trans: B row-major)
// and issues 2 x 4 mma.sync m16n8k16; 32 accumulators per thread.

// CHECK: llvm.mlir.global external @__tile_mma_sync_shared_mm() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: func.func @mm(
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 24576 : i32
// CHECK-SAME: tile.kernel, tile.mma_sync
// CHECK-NOT: tile.
// CHECK: nvvm.read.ptx.sreg.tid.x range <i32, 0, 128>
// CHECK: nvvm.read.ptx.sreg.ctaid.x
// CHECK: nvvm.read.ptx.sreg.ctaid.y
// CHECK-NOT: scf.if
// CHECK-COUNT-4: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: scf.if
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-NOT: scf.if
// CHECK: scf.for {{.*}} -> (i32, f32, f32
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-NOT: scf.if
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32
// The next k-tile's copies, without a branch (empty past the last k-tile),
// after the first k-step's fragment loads.
// CHECK-NOT: scf.if
// CHECK-COUNT-4: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.commit.group
// CHECK-COUNT-8: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK-COUNT-2: nvvm.ldmatrix
// CHECK-COUNT-2: nvvm.ldmatrix
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// The epilogue on the accumulators: bias element, add, relu, cast, paired store.
// CHECK: memref.load %arg3
// CHECK: arith.maximumf
// CHECK: arith.truncf
// CHECK: vector.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
// CHECK-NOT: tile.
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %bias: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %pid1 = tile.program_id 1
  %bv = tile.load %bias[%pid1] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<64xbf16>
  %bf = arith.extf %bv : tensor<64xbf16> to tensor<64xf32>
  %br = tile.reshape %bf : tensor<64xf32> -> tensor<1x64xf32>
  %bb = tile.broadcast %br : tensor<1x64xf32> -> tensor<64x64xf32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %kdim = memref.dim %a, %c1 : !m
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<64x32xbf16>
    %pid1b = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1b] : !m -> tensor<32x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %y = arith.addf %acc, %bb : tensor<64x64xf32>
  %r = arith.maximumf %y, %zeros : tensor<64x64xf32>
  %t = arith.truncf %r : tensor<64x64xf32> to tensor<64x64xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<64x64xbf16>, !m
  return
}

// -----

// B as the transposed view of an N x K row-major weight (unit outer stride):
// K-major, its shared tile 64 rows (n) of 64 k; B fragments by ldmatrix.x4
// without .trans. f16 inputs: the fragments are bitcast to vector<2xf16>.
// 128 x 64 x 64 tiles: 4 warps of 64 x 32 (2 x 2), 64 accumulators.
// CHECK-LABEL: func.func @mm_kmajor_f16
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 73728 : i32
// CHECK: scf.for
// CHECK-COUNT-4: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NOT: nvvm.mma_layout<col>, num
// CHECK: nvvm.mma.sync {{.*}} : (vector<2xf16>, vector<2xf16>, f32) -> !llvm.struct<(f32, f32, f32, f32)>
!m = memref<?x?xf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xf16, strided<[1, ?], offset: ?>>
func.func @mm_kmajor_f16(%o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %kdim = memref.dim %a, %c1 : !m
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %s = arith.addi %kdim, %c63 : index
  %n = arith.divui %s, %c64 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xf16>
    %pid1 = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1] : !t -> tensor<64x64xf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xf16>, tensor<64x64xf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %acc, %o[%p0, %p1] : tensor<128x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
