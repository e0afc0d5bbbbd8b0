// RUN: tessera-opt %s -convert-tile-matmul-to-nvvm="arch=sm_90a halve-tail=0" | grep -oE "memref.load %arg3|arith.divf" | uniq -c | FileCheck %s

// An epilogue that loads a whole f32 tile (the gate of a SwiGLU) and divides
// by it, 128 x 128 tiles: each consumer thread holds 2 rows x 32 columns of
// accumulators, and its epilogue issues the loads of 16 columns (32 elements)
// before it computes any of them, then the next 16. Interleaved, each load
// would wait behind the division before it (ptxas expands an accurate
// division with a branch to its slow path). The gate's rows are not known to
// be 16-byte aligned (no tile.align), so it is loaded from global memory
// (epilogue-tiles-tma.mlir has the aligned case, which TMA loads).
// CHECK:      32 memref.load %arg3
// CHECK-NEXT: 32 arith.divf
// CHECK-NEXT: 32 memref.load %arg3
// CHECK-NEXT: 32 arith.divf
// CHECK-NOT: memref.load
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_gate(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %g: !w) attributes {tile.kernel} {
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
