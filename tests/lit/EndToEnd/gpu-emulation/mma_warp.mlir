// RUN: %emulate --work %t %s | FileCheck %s
// A bf16 mma on the tensor cores (mma.sync, emulated per warp) with 4 warps:
// 4 x 64 times 64 x 32 plus a loaded f32 accumulator. M = 4 is padded to a
// 16-row fragment (rows past M repeat row 3 and are not read back); B is
// row-major, so it goes to the scratch buffer transposed. The programs at
// the grid's edge have ragged tiles (rows 10, columns 70 and 50).
// EMU: T=128 grid=3,2 args=f32[10x50]/52;bf16[10x70]/72;bf16[70x50]/56;f32[10x50]/52
// CHECK: arg0: 520 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: mma_warp: T=128 OK
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
!h = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mma_warp(%c: !f {tile.align = 16 : i64}, %a: !h {tile.align = 16 : i64}, %b: !h {tile.align = 16 : i64}, %acc: !f {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x0 = tile.load %a[%p, %c0] : !h -> tensor<4x64xbf16>
  %y0 = tile.load %b[%c0, %q] : !h -> tensor<64x32xbf16>
  %x1 = tile.load %a[%p, %c1] : !h -> tensor<4x64xbf16>
  %y1 = tile.load %b[%c1, %q] : !h -> tensor<64x32xbf16>
  %z = tile.load %acc[%p, %q] : !f -> tensor<4x32xf32>
  %m0 = tile.mma %x0, %y0, %z : tensor<4x64xbf16>, tensor<64x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>
  %m1 = tile.mma %x1, %y1, %m0 : tensor<4x64xbf16>, tensor<64x32xbf16>, tensor<4x32xf32> -> tensor<4x32xf32>
  tile.store %m1, %c[%p, %q] : tensor<4x32xf32>, !f
  return
}
