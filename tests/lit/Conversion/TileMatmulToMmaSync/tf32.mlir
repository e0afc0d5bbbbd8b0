// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_90" | FileCheck %s

// f32 inputs run on the tf32 tensor cores: mma.sync m16n8k8 per k-step of 8,
// every fragment element rounded to tf32 (cvt.rna) first.

// 64 x 64 x 32 tiles, B row-major: 4 warps of 32 x 32, 3 stages of 16 KiB
// (A 64 x 32 f32, B 32 x 64 f32). Per k-tile each thread copies 4 chunks of A
// and 4 of B (16 bytes = 4 f32 each). Per k-step of 8 a warp loads its 2 A
// fragments with ldmatrix.x4 (a 16-byte row is four f32) and its 4 B
// fragments as 2 f32 each from shared memory (ldmatrix cannot transpose 32-bit
// elements), and issues 2 x 4 mma.sync.

// CHECK-LABEL: func.func @mm_f32(
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 49152 : i32
// CHECK-SAME: tile.kernel, tile.mma_sync
// CHECK-NOT: tile.
// CHECK-NOT: scf.if
// CHECK-COUNT-8: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache =  cg, %{{.*}} : !llvm.ptr<3>, !llvm.ptr<1>, i32
// CHECK: nvvm.cp.async.commit.group
// CHECK: scf.for {{.*}} -> (i32, f32, f32
// CHECK: nvvm.cp.async.wait.group 1
// CHECK-NEXT: nvvm.barrier0
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NOT: nvvm.ldmatrix
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.convert.float.to.tf32 %{{.*}} {rnd = #nvvm.fp_rnd_mode<rna>}
// CHECK-COUNT-8: nvvm.mma.sync A[{{.*}}]  B[{{.*}}]  C[{{.*}}]  {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>
// Four k-steps of 8 per k-tile of 32.
// CHECK-COUNT-24: nvvm.mma.sync
// CHECK-NOT: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NOT: tile.
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_f32(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x32xf32>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x64xf32>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, !m
  return
}

// -----

// B K-major (the transposed view of an N x K matrix): its fragments come
// from ldmatrix.x4 untransposed too, two per 16 columns.
// CHECK-LABEL: func.func @mm_f32_k_major(
// CHECK: scf.for {{.*}} -> (i32, f32, f32
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-2: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-NOT: llvm.load
// CHECK: nvvm.mma.sync {{.*}} multiplicandAPtxType = #nvvm.mma_type<tf32>
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
!t = memref<?x?xf32, strided<[1, ?], offset: ?>>
func.func @mm_f32_k_major(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x32xf32>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<32x64xf32>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xf32>, tensor<32x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, !m
  return
}
