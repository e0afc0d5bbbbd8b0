// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_89" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_120" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s --check-prefix=OLD

// 8-bit float inputs with a K-major B run on mma.sync m16n8k32 (sm_89 and
// newer): a k-step of 32 f8 is 32 bytes of each row, as bf16's k-step of 16,
// so the copies and the ldmatrix loads are bf16's in bytes.

// 64 x 128 x 64 tiles: 4 warps of 32 x 64, 3 stages of 12 KiB (A 64 x 64
// bytes, B 128 x 64 bytes). Per k-step of 32 a warp loads its 2 A fragments
// and its 8 B fragments with 2 + 4 ldmatrix.x4 (B untransposed: K-major) and
// issues 2 x 8 mma.sync; two k-steps per k-tile.

// CHECK-LABEL: func.func @mm_e4m3(
// CHECK-SAME: tile.block_size = 128 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 36864 : i32
// CHECK-SAME: tile.kernel, tile.mma_sync
// CHECK-NOT: tile.
// CHECK: scf.for {{.*}} -> (i32, f32, f32
// CHECK-COUNT-6: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-16: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
// CHECK-COUNT-6: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<row>, num = 4 : i32
// CHECK-COUNT-16: mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32
// CHECK-NOT: nvvm.ldmatrix
// CHECK-NOT: mma.sync
// CHECK-NOT: tile.
// OLD-LABEL: func.func @mm_e4m3(
// OLD: tile.mma
// OLD-NOT: mma.sync
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_e4m3(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x64xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<64x128xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<64x64xf8E4M3FN>, tensor<64x128xf8E4M3FN>, tensor<64x128xf32> -> tensor<64x128xf32>
    scf.yield %d : tensor<64x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<64x128xf32> to tensor<64x128xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<64x128xbf16>, !o
  return
}

// -----

// f8E5M2, 32 x 32 x 32: one k-step per k-tile.

// CHECK-LABEL: func.func @mm_e5m2(
// CHECK-SAME: tile.mma_sync
// CHECK: mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32
// OLD-LABEL: func.func @mm_e5m2(
// OLD: tile.mma
// OLD-NOT: mma.sync
!m = memref<?x?xf8E5M2, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E5M2, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e5m2(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<32x32xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<32x32xf8E5M2>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<32x32xf8E5M2>
    %d = tile.mma %ta, %tb, %c : tensor<32x32xf8E5M2>, tensor<32x32xf8E5M2>, tensor<32x32xf32> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<32x32xf32>, !o
  return
}

// -----

// A row-major f8 B (ldmatrix cannot transpose bytes) and a K step of 16 f8
// (16 bytes, half a k-step) are left to convert-tile-to-loops on every arch.

// CHECK-LABEL: func.func @mm_e4m3_row_major_b(
// CHECK: tile.mma
// CHECK-NOT: mma.sync
// OLD-LABEL: func.func @mm_e4m3_row_major_b(
// OLD: tile.mma
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_row_major_b(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x64xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x64xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<64x64xf8E4M3FN>, tensor<64x64xf8E4M3FN>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, !o
  return
}

// -----

// CHECK-LABEL: func.func @mm_e4m3_narrow_k(
// CHECK: tile.mma
// CHECK-NOT: mma.sync
// OLD-LABEL: func.func @mm_e4m3_narrow_k(
// OLD: tile.mma
!m = memref<?x?xf8E4M3FN, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e4m3_narrow_k(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x16xf8E4M3FN>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<16x64xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<64x16xf8E4M3FN>, tensor<16x64xf8E4M3FN>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, !o
  return
}

// -----

// One of each format, e5m2 A by e4m3 B.

// CHECK-LABEL: func.func @mm_e5m2_e4m3(
// CHECK: mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32
// OLD-LABEL: func.func @mm_e5m2_e4m3(
// OLD: tile.mma
!m = memref<?x?xf8E5M2, strided<[?, 1], offset: ?>>
!t = memref<?x?xf8E4M3FN, strided<[1, ?], offset: ?>>
!o = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_e5m2_e4m3(%o: !o {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<32x32xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<32x32xf8E5M2>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<32x32xf8E4M3FN>
    %d = tile.mma %ta, %tb, %c : tensor<32x32xf8E5M2>, tensor<32x32xf8E4M3FN>, tensor<32x32xf32> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<32x32xf32>, !o
  return
}
