// RUN: %emulate --work %t %s | FileCheck %s
// No tile.align and a memref without a static unit stride: scalar accesses
// checked once per chunk, -inf padding on two ragged edges (row strides
// wider than the rows).
// EMU: T=64 grid=4,3 args=f32[100x50]/64;f32[100x50]/56
// CHECK: arg0: 6400 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 5600 elements, 0 written, 0 differ
// CHECK: add_strided: T=64 OK
!m = memref<?x?xf32, strided<[?, ?], offset: ?>>
!n = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @add_strided(%o: !m, %a: !n) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] padding = -inf : !n -> tensor<32x16xf32>
  %e = math.exp %x : tensor<32x16xf32>
  tile.store %e, %o[%p, %q] : tensor<32x16xf32>, !m
  return
}
