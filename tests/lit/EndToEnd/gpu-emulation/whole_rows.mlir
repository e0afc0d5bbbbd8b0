// RUN: %emulate --work %t %s | FileCheck %s
// Rows of 4 f32, one per chunk: no shuffles, every thread writes its rows'
// totals for the result owners.
// EMU: T=128 grid=2,1 args=f32[1000x4];f32[1000x1]
// CHECK: arg0: 4000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 1000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: whole_rows: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @whole_rows(%a: !m {tile.align = 16 : i64}, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<512x4xf32>
  %r = tile.reduce %x {kind = max, axis = 1} : tensor<512x4xf32> -> tensor<512x1xf32>
  %b = tile.broadcast %r : tensor<512x1xf32> -> tensor<512x4xf32>
  %d = arith.subf %x, %b : tensor<512x4xf32>
  tile.store %d, %a[%p, %c0] : tensor<512x4xf32>, !m
  tile.store %r, %o[%p, %c0] : tensor<512x1xf32>, !m
  return
}
