// RUN: %emulate --work %t %s | FileCheck %s
// The mma.sync GEMM's CTAs walk the programs in groups of 2 rows
// (convert-tile-matmul-to-mma-sync group-rows=2): a grid of 5 x 3 programs,
// so groups of 2, 2 and 1 rows (the last one ragged). Each CTA's program ids
// come from its launch-order id; every program must run exactly once, so
// every element of C is written and equals the cpu lowering's. 16 x 16 x 32
// tiles (one warp), ragged M = 77, N = 40, K = 40; B row-major.
// EMU: MMA=sm_80 G=2 grid=5,3 args=bf16[77x40];bf16[77x40];bf16[40x40]
// CHECK: arg0: 3080 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 3080 elements, 0 written, 0 differ
// CHECK: arg2: 1600 elements, 0 written, 0 differ
// CHECK: mma_sync_grouped: T=32 MMA=sm_80 dynamic shared
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mma_sync_grouped(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<16x16xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<16x16xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<16x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x16xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<16x32xbf16>, tensor<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
    scf.yield %d : tensor<16x16xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<16x16xf32> to tensor<16x16xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<16x16xbf16>, !m
  return
}
