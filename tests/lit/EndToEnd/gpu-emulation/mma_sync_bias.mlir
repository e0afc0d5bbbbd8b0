// RUN: %emulate --work %t %s | FileCheck %s
// The mma.sync GEMM (convert-tile-matmul-to-mma-sync for sm_80) with a
// row-major B and an epilogue: relu(A B + bias) in bf16, 64 x 64 x 32 tiles,
// 4 warps of 32 x 32, 3 stages. B's fragments come through
// ldmatrix.x4.trans, A's through ldmatrix.x4. Ragged: M = 100, N = 136,
// K = 200 (the last k-tile's 8 rows of B, 8 columns of A).
// EMU: MMA=sm_80 grid=2,3 args=bf16[100x136];bf16[100x200];bf16[200x136];bf16[136]
// CHECK: arg0: 13600 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 20000 elements, 0 written, 0 differ
// CHECK: arg2: 27200 elements, 0 written, 0 differ
// CHECK: arg3: 136 elements, 0 written, 0 differ
// CHECK: mma_sync_bias: T=128 MMA=sm_80 dynamic shared 24576 OK
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mma_sync_bias(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %bias: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
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
