// RUN: %emulate --work %t %s | FileCheck %s
// Rows longer than all threads' chunks (each thread holds 16 elements of each
// of 4 rows), then a broadcast back through shared memory.
// EMU: T=128 grid=2,1 args=f32[7x2000];f32[7x1]
// CHECK: arg0: 14000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 7 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: long_rows: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @long_rows(%a: !m {tile.align = 16 : i64}, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<4x2048xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<4x2048xf32> -> tensor<4x1xf32>
  %b = tile.broadcast %r : tensor<4x1xf32> -> tensor<4x2048xf32>
  %d = arith.divf %x, %b : tensor<4x2048xf32>
  tile.store %d, %a[%p, %c0] : tensor<4x2048xf32>, !m
  tile.store %r, %o[%p, %c0] : tensor<4x1xf32>, !m
  return
}
