// RUN: %emulate --work %t %s | FileCheck %s
// A 128x128 f32 tile reduced along axis 0 writes 64 KiB to the scratch: more
// than the 48 KiB of static shared memory, so it is dynamic shared memory (an
// external array; the harness provides the bytes a launch would pass). Ragged
// in both dimensions; a max after the sum reuses the region.
// EMU: T=256 grid=2,3 args=f32[200x300];f32[2x300];f32[2x300]
// CHECK: arg0: 60000 elements, 0 written, 0 differ
// CHECK: arg1: 600 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg2: 600 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: dynamic_columns: T=256 dynamic shared 65536 OK
!m = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @dynamic_columns(%a: !m {tile.align = 16 : i64}, %s: !m {tile.align = 16 : i64},
                           %o: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : !m -> tensor<128x128xf32>
  %r = tile.reduce %x {kind = sum, axis = 0} : tensor<128x128xf32> -> tensor<1x128xf32>
  tile.store %r, %s[%p, %q] : tensor<1x128xf32>, !m
  %m = tile.reduce %x {kind = max, axis = 0} : tensor<128x128xf32> -> tensor<1x128xf32>
  tile.store %m, %o[%p, %q] : tensor<1x128xf32>, !m
  return
}
