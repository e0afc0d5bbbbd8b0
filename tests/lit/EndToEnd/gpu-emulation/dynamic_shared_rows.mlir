// RUN: %emulate --work %t %s | FileCheck %s
// A 512x32 f32 tile reduced along axis 0 (64 KiB of dynamic shared memory)
// and a row sum of a 1x2048 tile that gets its own region after it (the
// partials of 16 warps): 65600 bytes. The pass chooses the threads (512).
// EMU: T=0 grid=3,2 args=f32[1100x64];f32[3x64]
// CHECK: arg0: 70400 elements, 0 written, 0 differ
// CHECK: arg1: 192 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: dynamic_rows: T=512 dynamic shared 65600 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @dynamic_rows(%a: !m {tile.align = 16 : i64}, %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<512x32xf32>
  %s = tile.reduce %x {kind = sum, axis = 0} : tensor<512x32xf32> -> tensor<1x32xf32>
  %y = tile.load %a[%p, %q] : !m -> tensor<1x2048xf32>
  %t = tile.reduce %y {kind = sum, axis = 1} : tensor<1x2048xf32> -> tensor<1x1xf32>
  %b = tile.broadcast %t : tensor<1x1xf32> -> tensor<1x32xf32>
  %e = arith.addf %s, %b : tensor<1x32xf32>
  tile.store %e, %o[%p, %q] : tensor<1x32xf32>, !m
  return
}
