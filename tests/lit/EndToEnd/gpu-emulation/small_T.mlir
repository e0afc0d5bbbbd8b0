// RUN: %emulate --work %t %s | FileCheck %s
// Programs smaller than a warp (8 threads): shuffles among 8 lanes.
// EMU: T=8 grid=3,1 args=f32[40x37];f32[40x1]
// CHECK: arg0: 1480 elements, 0 written, 0 differ
// CHECK: arg1: 40 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: small_T: T=8 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @small_T(%a: !m, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<16x64xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<16x64xf32> -> tensor<16x1xf32>
  tile.store %r, %o[%p, %c0] : tensor<16x1xf32>, !m
  return
}
