// RUN: %emulate --work %t %s | FileCheck %s
// i32 rows spanning two warps of a 64-thread program: per-warp partials
// through shared memory; the 4 results are replicated over the threads.
// EMU: T=64 grid=3,1 args=i32[10x256];i32[10x1]
// CHECK: arg0: 2560 elements, 0 written, 0 differ
// CHECK: arg1: 10 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: i32_max: T=64 OK
!m = memref<?x?xi32, strided<[?, 1], offset: ?>>
func.func @i32_max(%a: !m {tile.align = 16 : i64}, %o: !m) attributes {tile.kernel} {
  %p = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%p, %c0] : !m -> tensor<4x256xi32>
  %r = tile.reduce %x {kind = max, axis = 1} : tensor<4x256xi32> -> tensor<4x1xi32>
  tile.store %r, %o[%p, %c0] : tensor<4x1xi32>, !m
  return
}
