// RUN: %emulate --work %t %s | FileCheck %s
// Transposes through the swizzled scratch layout (chunk position xor'ed with
// the row group): a 64x64 bf16 tile (block size chosen by the pass: 128,
// chunks of 8) and a 16x64 f32 tile with a 64x16 result (chunks of 4, 16
// chunks per input row), over ragged tensors (rows 16-byte aligned, as
// tile.align = 16 promises).
// EMU: T=0 grid=3,3 args=bf16[152x104];bf16[104x152];f32[40x152];f32[152x40]
// CHECK: arg0: 15808 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 15808 elements, 0 written, 0 differ
// CHECK: arg2: 6080 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg3: 6080 elements, 0 written, 0 differ
// CHECK: transpose_swizzled: T=128 OK
func.func @transpose_swizzled(%o: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %a: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %o2: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %a2: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %p = tile.program_id 0
  %q = tile.program_id 1
  %x = tile.load %a[%q, %p] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<64x64xbf16>
  %t = tile.transpose %x : tensor<64x64xbf16> -> tensor<64x64xbf16>
  tile.store %t, %o[%p, %q] : tensor<64x64xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
  %y = tile.load %a2[%q, %p] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<64x16xf32>
  %u = tile.transpose %y : tensor<64x16xf32> -> tensor<16x64xf32>
  tile.store %u, %o2[%p, %q] : tensor<16x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
