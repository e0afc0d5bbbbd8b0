// RUN: %emulate --work %t %s | FileCheck %s
// Softmax of 1x8192 bf16 rows (8000 columns, zero padding): block size
// chosen by the pass (256), two row reductions across 8 warps.
// EMU: T=0 grid=3,1 args=bf16[3x8000];bf16[3x8000]
// CHECK: arg0: 24000 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 24000 elements, 0 written, 0 differ
// CHECK: softmax_rows: T=256 OK
func.func @softmax_rows(%arg0: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %arg1: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %0 = tile.program_id 0
  %1 = tile.program_id 1
  %2 = tile.load %arg1[%0, %1] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x8192xbf16>
  %3 = arith.extf %2 : tensor<1x8192xbf16> to tensor<1x8192xf32>
  %4 = tile.reduce %3 {kind = max, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
  %5 = tile.broadcast %4 : tensor<1x1xf32> -> tensor<1x8192xf32>
  %6 = arith.subf %3, %5 : tensor<1x8192xf32>
  %7 = math.exp %6 : tensor<1x8192xf32>
  %8 = tile.reduce %7 {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
  %9 = tile.broadcast %8 : tensor<1x1xf32> -> tensor<1x8192xf32>
  %10 = arith.divf %7, %9 : tensor<1x8192xf32>
  %11 = arith.truncf %10 : tensor<1x8192xf32> to tensor<1x8192xbf16>
  tile.store %11, %arg0[%0, %1] : tensor<1x8192xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
  return
}
