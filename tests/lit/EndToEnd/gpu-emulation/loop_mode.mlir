// RUN: %emulate --work %t %s | FileCheck %s
// Tiles larger than the unroll limit (512 elements per thread): chunk loops
// and a loop over partials with shuffles inside.
// EMU: T=128 grid=2,1 args=f32[100x1000];f32[100x1]
// CHECK: arg0: 100000 elements, 0 written, 0 differ
// CHECK: arg1: 100 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: loop_mode: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @loop_mode(%a: !m {tile.align = 16 : i64}, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<64x1024xf32>
  %r = tile.reduce %x {kind = max, axis = 1} : tensor<64x1024xf32> -> tensor<64x1xf32>
  tile.store %r, %o[%p, %c0] : tensor<64x1xf32>, !m
  return
}
