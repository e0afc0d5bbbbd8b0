// RUN: %emulate --work %t %s | FileCheck %s
// The cp.async + ldmatrix + mma.sync GEMM (convert-tile-matmul-to-mma-sync
// for sm_90, no split): C = A B in f16 with f32 accumulators, 16 x 64 x 128
// tiles, 4 warps of 16 x 16, 3 stages of dynamic shared memory. B is K-major
// (the transposed view of a 200 x 1000 row-major weight), so both operands
// go through the untransposed ldmatrix.x4. Ragged everywhere: M = 29 (the
// second program's 13 rows), N = 200 (the last program's 8 columns), K = 1000
// (the last k-tile's 104: cp.async reads part of a row and zero-fills).
// mma_sync_gemm.mlir in f16: the lowering hands nvvm.mma.sync its A and B
// words as vector<2xf16> (bf16 ones as i32), and the inputs are f16 bits.
// EMU: MMA=sm_90 grid=2,4 args=f16[29x200];f16[29x1000];f16[200x1000]^T
// CHECK: arg0: 5800 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 29000 elements, 0 written, 0 differ
// CHECK: arg2: 200000 elements, 0 written, 0 differ
// CHECK: mma_sync_gemm_f16: T=128 MMA=sm_90 dynamic shared 61440 OK
!m = memref<?x?xf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xf16, strided<[1, ?], offset: ?>>
func.func @mma_sync_gemm_f16(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<16x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c127 : index
  %n = arith.divui %s, %c128 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<16x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<16x128xf16>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<128x64xf16>
    %d = tile.mma %ta, %tb, %c : tensor<16x128xf16>, tensor<128x64xf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %d : tensor<16x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<16x64xf32> to tensor<16x64xf16>
  tile.store %r, %o[%q0, %q1] : tensor<16x64xf16>, !m
  return
}
