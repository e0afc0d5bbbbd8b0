// RUN: %emulate --work %t %s | FileCheck %s
// A 32-element row over 128 threads (replicated): after the shuffles every
// thread holds the minimum, no shared memory; +inf padding.
// EMU: T=128 grid=5,1 args=f32[5x30];f32[5x1]
// CHECK: arg0: 150 elements, 0 written, 0 differ
// CHECK: arg1: 5 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: exchange_free: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @exchange_free(%a: !m, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] padding = inf : !m -> tensor<1x32xf32>
  %r = tile.reduce %x {kind = min, axis = 1} : tensor<1x32xf32> -> tensor<1x1xf32>
  tile.store %r, %o[%p, %c0] : tensor<1x1xf32>, !m
  return
}
