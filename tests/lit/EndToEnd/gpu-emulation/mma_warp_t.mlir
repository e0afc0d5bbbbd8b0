// RUN: %emulate --work %t %s | FileCheck %s
// Scores of attention on the tensor cores: q (64 x 64) times the transpose of
// k (32 x 64), as flash attention computes them, with 2 warps taking the
// product's 4 x 2 blocks of 16 x 16 in turn. The transpose emits nothing: k
// is written to the scratch buffer as the mma's B^T. Ragged edges: 100 rows
// of q, 40 of k.
// EMU: T=64 grid=2,2 args=f32[100x40];bf16[100x64]/72;bf16[40x64]/64
// CHECK: arg0: 4000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: mma_warp_t: T=64 OK
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
!h = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mma_warp_t(%s: !f {tile.align = 16 : i64}, %q: !h {tile.align = 16 : i64}, %k: !h {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %r = tile.program_id 1
  %c0 = arith.constant 0 : i32
  %qt = tile.load %q[%p, %c0] : !h -> tensor<64x64xbf16>
  %kt = tile.load %k[%r, %c0] : !h -> tensor<32x64xbf16>
  %ktt = tile.transpose %kt : tensor<32x64xbf16> -> tensor<64x32xbf16>
  %z = arith.constant dense<0.0> : tensor<64x32xf32>
  %m = tile.mma %qt, %ktt, %z : tensor<64x64xbf16>, tensor<64x32xbf16>, tensor<64x32xf32> -> tensor<64x32xf32>
  tile.store %m, %s[%p, %r] : tensor<64x32xf32>, !f
  return
}
