// RUN: %emulate --work %t %s | FileCheck %s
// Broadcasts: a column through shared memory, a row copied within the
// threads (matching maps), and the single result of a row reduction.
// EMU: T=64 grid=3,1 args=f32[80x70]/72;f32[80x1];f32[1x70]/72
// CHECK: arg0: 5760 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 80 elements, 0 written, 0 differ
// CHECK: arg2: 72 elements, 0 written, 0 differ
// CHECK: bcasts: T=64 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @bcasts(%o: !m {tile.align = 16 : i64}, %c: !m, %r: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %col = tile.load %c[%p, %c0] : !m -> tensor<32x1xf32>
  %row = tile.load %r[%c0, %c0] : !m -> tensor<1x64xf32>
  %b1 = tile.broadcast %col : tensor<32x1xf32> -> tensor<32x64xf32>
  %b2 = tile.broadcast %row : tensor<1x64xf32> -> tensor<32x64xf32>
  %s = arith.mulf %b1, %b2 : tensor<32x64xf32>
  %one = tile.reduce %row {kind = max, axis = 1} : tensor<1x64xf32> -> tensor<1x1xf32>
  %b3 = tile.broadcast %one : tensor<1x1xf32> -> tensor<32x64xf32>
  %t = arith.addf %s, %b3 : tensor<32x64xf32>
  tile.store %t, %o[%p, %c0] : tensor<32x64xf32>, !m
  return
}
