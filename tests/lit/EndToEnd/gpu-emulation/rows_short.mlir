// RUN: %emulate --work %t %s | FileCheck %s
// 16 rows of 32 bf16 over 128 threads: 8 threads per row (shuffles 4, 2, 1),
// row totals handed to their replicated owners through shared memory.
// EMU: T=128 grid=7,2 args=bf16[100x50]/56;bf16[100x2]
// CHECK: arg0: 5600 elements, 0 written, 0 differ
// CHECK: arg1: 200 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: rows_short: T=128 OK
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @rows_short(%a: !m {tile.align = 16 : i64}, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<16x32xbf16>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<16x32xbf16> -> tensor<16x1xbf16>
  tile.store %r, %o[%p, %q] : tensor<16x1xbf16>, !m
  return
}
