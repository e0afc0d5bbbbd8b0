// RUN: %emulate --work %t %s | FileCheck %s
// The broadcast of a loaded row ([1, 128] from a [1, N] matrix, no reshape)
// over 8 rows, its load marked in bounds (tile.interior, as
// tile-version-interior marks it): unconditional vector loads in the
// broadcast's layout; the load's other dimension is broadcast too (a [1, 1]
// tile of a scale read per program).
// EMU: T=128 grid=4,1 args=f32[32x128];f32[1x128];f32[4x1]
// CHECK: arg0: 4096 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 128 elements, 0 written, 0 differ
// CHECK: arg2: 4 elements, 0 written, 0 differ
// CHECK: broadcast_load_interior: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @broadcast_load_interior(%o: !m {tile.align = 16 : i64}, %r: !m {tile.align = 16 : i64}, %s: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %p = tile.program_id 0
  %row = tile.load %r[%c0, %c0] {tile.interior} : !m -> tensor<1x128xf32>
  %b = tile.broadcast %row : tensor<1x128xf32> -> tensor<8x128xf32>
  %sc = tile.load %s[%p, %c0] {tile.interior} : !m -> tensor<1x1xf32>
  %bs = tile.broadcast %sc : tensor<1x1xf32> -> tensor<8x128xf32>
  %y = arith.mulf %b, %bs : tensor<8x128xf32>
  tile.store %y, %o[%p, %c0] : tensor<8x128xf32>, !m
  return
}
