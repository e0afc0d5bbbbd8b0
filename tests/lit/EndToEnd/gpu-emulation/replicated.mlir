// RUN: %emulate --work %t %s | FileCheck %s
// A 64-element row over 128 threads: replicated loads, shuffles, two warps
// through shared memory; only the first 64 threads store.
// EMU: T=128 grid=3,1 args=f32[3x40];f32[3x40];f32[3x1]
// CHECK: arg0: 120 elements, 0 written, 0 differ
// CHECK: arg1: 120 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg2: 3 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: replicated: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @replicated(%a: !m {tile.align = 16 : i64}, %o: !m, %s: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<1x64xf32>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x64xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %r : tensor<1x1xf32> -> tensor<1x64xf32>
  %y = arith.divf %x, %b : tensor<1x64xf32>
  tile.store %y, %o[%p, %c0] : tensor<1x64xf32>, !m
  tile.store %r, %s[%p, %c0] : tensor<1x1xf32>, !m
  return
}
