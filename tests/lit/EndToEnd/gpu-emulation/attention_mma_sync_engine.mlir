// RUN: %emulate --work %t %s | FileCheck %s
// The prefill attention kernel of the Qwen3 engine as the front end emits it
// (apps/qwen3/kernels/prefill_attention.h, 32 x 64 tiles, head dimension
// 128; its scalar arguments made constants: start 8, group 2, scale
// 1/sqrt(128)): every value the user computed before the loop, the query
// tile's load included, emitted inside the loop at its use, which
// convert-tile-attention-to-mma-sync copies once before the loop (its
// indices are loop-invariant). 40 queries at positions 8 .. 47 of a
// 56-position cache: keys past a query are masked, the last key tile's rows
// past the cache zero-filled, the second program's last 24 query rows past
// the end computed on and not stored.
// EMU: ATTN=sm_90 grid=2,2 args=bf16[40x256];bf16[2x40x128];bf16[1x56x128];bf16[1x56x128]
// CHECK: arg0: 10240 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 10240 elements, 0 written, 0 differ
// CHECK: attention_mma_sync_engine: T=64 ATTN=sm_90 dynamic shared 73728 OK
!m2 = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!m3 = memref<?x?x?xbf16, strided<[?, ?, 1], offset: ?>>
func.func @attention_mma_sync_engine(%arg0: !m2 {tile.align = 16 : i64}, %arg1: !m3 {tile.align = 16 : i64},
                                     %arg2: !m3 {tile.align = 16 : i64}, %arg3: !m3 {tile.align = 16 : i64})
    attributes {tile.kernel} {
  %start = arith.constant 8 : i32
  %group = arith.constant 2 : i32
  %scale = arith.constant 0.0883883461 : f32
  %c64_i32 = arith.constant 64 : i32
  %c63_i32 = arith.constant 63 : i32
  %c1 = arith.constant 1 : index
  %dim = memref.dim %arg1, %c1 : !m3
  %0 = arith.index_cast %dim : index to i32
  %1 = arith.addi %start, %0 : i32
  %c32_i32 = arith.constant 32 : i32
  %2 = tile.program_id 0
  %3 = arith.muli %2, %c32_i32 : i32
  %4 = arith.addi %start, %3 : i32
  %5 = arith.addi %4, %c32_i32 : i32
  %6 = arith.minsi %5, %1 : i32
  %7 = arith.addi %6, %c63_i32 : i32
  %c0_i32 = arith.constant 0 : i32
  %8 = arith.cmpi eq, %c64_i32, %c0_i32 : i32
  %c-2147483648_i32 = arith.constant -2147483648 : i32
  %9 = arith.cmpi eq, %7, %c-2147483648_i32 : i32
  %c-1_i32 = arith.constant -1 : i32
  %10 = arith.cmpi eq, %c64_i32, %c-1_i32 : i32
  %11 = arith.andi %10, %9 : i1
  %12 = arith.ori %8, %11 : i1
  %c1_i32 = arith.constant 1 : i32
  %13 = arith.select %12, %c1_i32, %c64_i32 : i32
  %14 = arith.divsi %7, %13 : i32
  %cst = arith.constant dense<0xFF800000> : tensor<32x1xf32>
  %cst_0 = arith.constant dense<0.000000e+00> : tensor<32x1xf32>
  %cst_1 = arith.constant dense<0.000000e+00> : tensor<32x128xf32>
  %c0 = arith.constant 0 : index
  %15 = arith.index_cast %14 : i32 to index
  %c1_2 = arith.constant 1 : index
  %16:3 = scf.for %arg7 = %c0 to %15 step %c1_2 iter_args(%arg8 = %cst, %arg9 = %cst_0, %arg10 = %cst_1) -> (tensor<32x1xf32>, tensor<32x1xf32>, tensor<32x128xf32>) {
    %22 = arith.index_cast %arg7 : index to i32
    %cst_3 = arith.constant dense<0xFF800000> : tensor<32x64xf32>
    %23 = tile.splat %scale : f32 -> tensor<32x64xf32>
    %cst_4 = arith.constant dense<0.000000e+00> : tensor<32x64xf32>
    %24 = tile.program_id 1
    %c0_i32_5 = arith.constant 0 : i32
    %25 = arith.cmpi eq, %group, %c0_i32_5 : i32
    %c-2147483648_i32_6 = arith.constant -2147483648 : i32
    %26 = arith.cmpi eq, %24, %c-2147483648_i32_6 : i32
    %c-1_i32_7 = arith.constant -1 : i32
    %27 = arith.cmpi eq, %group, %c-1_i32_7 : i32
    %28 = arith.andi %27, %26 : i1
    %29 = arith.ori %25, %28 : i1
    %c1_i32_8 = arith.constant 1 : i32
    %30 = arith.select %29, %c1_i32_8, %group : i32
    %31 = arith.divsi %24, %30 : i32
    %c0_i32_9 = arith.constant 0 : i32
    %32 = tile.load %arg2[%31, %22, %c0_i32_9] : !m3 -> tensor<1x64x128xbf16>
    %33 = tile.reshape %32 : tensor<1x64x128xbf16> -> tensor<64x128xbf16>
    %34 = tile.transpose %33 : tensor<64x128xbf16> -> tensor<128x64xbf16>
    %35 = tile.load %arg1[%24, %2, %c0_i32_9] : !m3 -> tensor<1x32x128xbf16>
    %36 = tile.reshape %35 : tensor<1x32x128xbf16> -> tensor<32x128xbf16>
    %37 = tile.mma %36, %34, %cst_4 : tensor<32x128xbf16>, tensor<128x64xbf16>, tensor<32x64xf32> -> tensor<32x64xf32>
    %38 = arith.mulf %37, %23 : tensor<32x64xf32>
    %39 = tile.splat %4 : i32 -> tensor<32xi32>
    %40 = tile.iota : tensor<32xi32>
    %41 = arith.addi %40, %39 : tensor<32xi32>
    %42 = tile.reshape %41 : tensor<32xi32> -> tensor<32x1xi32>
    %43 = tile.broadcast %42 : tensor<32x1xi32> -> tensor<32x64xi32>
    %44 = arith.muli %22, %c64_i32 : i32
    %45 = tile.splat %44 : i32 -> tensor<64xi32>
    %46 = tile.iota : tensor<64xi32>
    %47 = arith.addi %46, %45 : tensor<64xi32>
    %48 = tile.reshape %47 : tensor<64xi32> -> tensor<1x64xi32>
    %49 = tile.broadcast %48 : tensor<1x64xi32> -> tensor<32x64xi32>
    %50 = arith.cmpi sle, %49, %43 : tensor<32x64xi32>
    %51 = arith.select %50, %38, %cst_3 : tensor<32x64xi1>, tensor<32x64xf32>
    %52 = tile.reduce %51 {kind = max, axis = 1} : tensor<32x64xf32> -> tensor<32x1xf32>
    %53 = arith.maximumf %arg8, %52 : tensor<32x1xf32>
    %54 = tile.broadcast %53 : tensor<32x1xf32> -> tensor<32x64xf32>
    %55 = arith.subf %51, %54 : tensor<32x64xf32>
    %56 = math.exp %55 : tensor<32x64xf32>
    %57 = tile.reduce %56 {kind = sum, axis = 1} : tensor<32x64xf32> -> tensor<32x1xf32>
    %58 = arith.subf %arg8, %53 : tensor<32x1xf32>
    %59 = math.exp %58 : tensor<32x1xf32>
    %60 = arith.mulf %arg9, %59 : tensor<32x1xf32>
    %61 = arith.addf %60, %57 : tensor<32x1xf32>
    %62 = tile.broadcast %59 : tensor<32x1xf32> -> tensor<32x128xf32>
    %63 = arith.mulf %arg10, %62 : tensor<32x128xf32>
    %64 = tile.load %arg3[%31, %22, %c0_i32_9] : !m3 -> tensor<1x64x128xbf16>
    %65 = tile.reshape %64 : tensor<1x64x128xbf16> -> tensor<64x128xbf16>
    %66 = arith.truncf %56 : tensor<32x64xf32> to tensor<32x64xbf16>
    %67 = tile.mma %66, %65, %63 : tensor<32x64xbf16>, tensor<64x128xbf16>, tensor<32x128xf32> -> tensor<32x128xf32>
    scf.yield %53, %61, %67 : tensor<32x1xf32>, tensor<32x1xf32>, tensor<32x128xf32>
  }
  %17 = tile.broadcast %16#1 : tensor<32x1xf32> -> tensor<32x128xf32>
  %18 = arith.divf %16#2, %17 : tensor<32x128xf32>
  %19 = arith.truncf %18 : tensor<32x128xf32> to tensor<32x128xbf16>
  %20 = tile.program_id 0
  %21 = tile.program_id 1
  tile.store %19, %arg0[%20, %21] : tensor<32x128xbf16>, !m2
  return
}
