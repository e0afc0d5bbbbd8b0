// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 warps=8" | grep -oE "memref.load %arg3|arith.divf" | uniq -c | FileCheck %s
// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80" | grep -oE "memref.load %arg3|arith.divf" | uniq -c | FileCheck %s --check-prefix=FOUR

// An epilogue that loads a whole f32 tile (the gate of a SwiGLU) and divides
// by it, 128 x 128 tiles. On 8 warps of 32 x 64 each thread holds 4 rows x 16
// columns of accumulators; its epilogue issues all 64 loads before it
// computes any element. Interleaved, each load would wait behind the
// division before it (ptxas expands an accurate division with a branch to
// its slow path).
// CHECK:      64 memref.load %arg3
// CHECK-NEXT: 64 arith.divf
// CHECK-NOT: memref.load
// On 4 warps of 64 x 64 (the pass's choice for bf16) a thread holds 8 rows x
// 16 columns beside 128 accumulators, where 64 loads at once spilled: four
// batches of 32 (4 columns of the 8 rows).
// FOUR-COUNT-4: 32 memref.load %arg3
// FOUR-NOT: memref.load
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_gate(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %g: !w {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x128xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %gt = tile.load %g[%q0, %q1] : !w -> tensor<128x128xf32>
  %s = arith.divf %acc, %gt : tensor<128x128xf32>
  %t = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %t, %o[%q0, %q1] : tensor<128x128xbf16>, !m
  return
}
