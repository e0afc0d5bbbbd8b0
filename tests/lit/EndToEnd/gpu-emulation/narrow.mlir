// RUN: %emulate --work %t %s | FileCheck %s
// Rows of 2 elements in chunks of 4: two vector<2xf32> per chunk (tile.align
// = 8), and i1 stores (scalar).
// EMU: T=32 grid=3,1 args=f32[150x2];i1[150x2]
// CHECK: arg0: 300 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 300 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: narrow: T=32 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
!b = memref<?x?xi1, strided<[?, 1], offset: ?>>
func.func @narrow(%a: !m {tile.align = 8 : i64}, %f: !b {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<64x2xf32>
  %z = arith.constant dense<0.5> : tensor<64x2xf32>
  %g = arith.cmpf ogt, %x, %z : tensor<64x2xf32>
  %y = arith.mulf %x, %x : tensor<64x2xf32>
  tile.store %y, %a[%p, %c0] : tensor<64x2xf32>, !m
  tile.store %g, %f[%p, %c0] : tensor<64x2xi1>, !b
  return
}
