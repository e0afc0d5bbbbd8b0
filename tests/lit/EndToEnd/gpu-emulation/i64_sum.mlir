// RUN: %emulate --work %t %s | FileCheck %s
// A replicated i64 row wider than a warp: shuffled halves, then partials of
// the duplicate warps through shared memory.
// EMU: T=128 grid=3,2 args=i64[3x100];i64[3x2]
// CHECK: arg0: 300 elements, 0 written, 0 differ
// CHECK: arg1: 6 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: i64_sum: T=128 OK
!m = memref<?x?xi64, strided<[?, 1], offset: ?>>
func.func @i64_sum(%a: !m, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<1x64xi64>
  %r = tile.reduce %x {kind = sum, axis = 1} : tensor<1x64xi64> -> tensor<1x1xi64>
  tile.store %r, %o[%p, %q] : tensor<1x1xi64>, !m
  return
}
