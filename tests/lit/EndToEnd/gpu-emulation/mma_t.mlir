// RUN: %emulate --work %t %s | FileCheck %s
// Transposes and mma (shared-memory paths) with 32 threads.
// EMU: T=32 grid=2,2 args=f32[40x40];bf16[40x40]/48;bf16[40x40]/48
// CHECK: arg0: 1600 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 1920 elements, 0 written, 0 differ
// CHECK: arg2: 1920 elements, 0 written, 0 differ
// CHECK: mma_t: T=32 OK
func.func @mma_t(%c: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %b: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%p, %q] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<16x32xbf16>
  %y = tile.load %b[%q, %p] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<32x16xbf16>
  %yt = tile.transpose %y : tensor<32x16xbf16> -> tensor<16x32xbf16>
  %ytt = tile.transpose %yt : tensor<16x32xbf16> -> tensor<32x16xbf16>
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %m = tile.mma %x, %ytt, %z : tensor<16x32xbf16>, tensor<32x16xbf16>, tensor<16x16xf32> -> tensor<16x16xf32>
  tile.store %m, %c[%p, %q] : tensor<16x16xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
