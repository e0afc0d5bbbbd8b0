// RUN: %emulate --work %t %s | FileCheck %s
// A reduction along axis 0 keeps the shared-memory path.
// EMU: T=128 grid=2,3 args=f32[50x300];f32[2x300]
// CHECK: arg0: 15000 elements, 0 written, 0 differ
// CHECK: arg1: 600 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: columns: T=128 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @columns(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<32x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<32x128xf32> -> tensor<1x128xf32>
  tile.store %r, %o[%p, %q] : tensor<1x128xf32>, !m
  return
}
