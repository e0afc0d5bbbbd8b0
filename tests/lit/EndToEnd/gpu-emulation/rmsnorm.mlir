// RUN: %emulate --work %t %s | FileCheck %s
// RMSNorm of 1x8192 bf16 rows with a 1-D weight (reshaped): block size
// chosen by the pass (256), row sum of squares by shuffles.
// EMU: T=0 grid=2,1 args=bf16[2x8192];bf16[2x8192];bf16[8192]
// CHECK: arg0: 16384 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 16384 elements, 0 written, 0 differ
// CHECK: arg2: 8192 elements, 0 written, 0 differ
// CHECK: rmsnorm: T=256 OK
module {
  func.func @rmsnorm(%arg0: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %arg1: memref<?x?xbf16, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %arg2: memref<?xbf16, strided<[1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
    %c0_i32 = arith.constant 0 : i32
    %0 = tile.load %arg2[%c0_i32] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<8192xbf16>
    %1 = arith.extf %0 : tensor<8192xbf16> to tensor<8192xf32>
    %2 = tile.reshape %1 : tensor<8192xf32> -> tensor<1x8192xf32>
    %cst = arith.constant dense<9.99999997E-7> : tensor<1x1xf32>
    %cst_0 = arith.constant dense<1.22070313E-4> : tensor<1x1xf32>
    %3 = tile.program_id 0
    %4 = tile.program_id 1
    %5 = tile.load %arg1[%3, %4] : memref<?x?xbf16, strided<[?, 1], offset: ?>> -> tensor<1x8192xbf16>
    %6 = arith.extf %5 : tensor<1x8192xbf16> to tensor<1x8192xf32>
    %7 = arith.mulf %6, %6 : tensor<1x8192xf32>
    %8 = tile.reduce %7 {kind = sum, axis = 1} : tensor<1x8192xf32> -> tensor<1x1xf32>
    %9 = arith.mulf %8, %cst_0 : tensor<1x1xf32>
    %10 = arith.addf %9, %cst : tensor<1x1xf32>
    %11 = math.rsqrt %10 : tensor<1x1xf32>
    %12 = tile.broadcast %11 : tensor<1x1xf32> -> tensor<1x8192xf32>
    %13 = arith.mulf %6, %12 : tensor<1x8192xf32>
    %14 = arith.mulf %13, %2 : tensor<1x8192xf32>
    %15 = arith.truncf %14 : tensor<1x8192xf32> to tensor<1x8192xbf16>
    tile.store %15, %arg0[%3, %4] : tensor<1x8192xbf16>, memref<?x?xbf16, strided<[?, 1], offset: ?>>
    return
  }
}
