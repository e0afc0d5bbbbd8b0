// RUN: %emulate --work %t %s | FileCheck %s
// The mma.sync GEMM of mma_sync_gemm.mlir split over clusters
// (convert-tile-matmul-to-mma-sync split-k=4 for sm_90): each program is 4
// CTAs of 128 threads run together; K = 1064 is 9 k-tiles, so ranks 0-3
// multiply k-tiles [9 r / 4, 9 (r + 1) / 4) (2, 2, 2, 3; rank 3's last is
// ragged, 40 columns), ranks 1-3 leave their accumulators in their shared
// memory, rank 0 adds them (cluster barriers, mapa + ld.shared::cluster) and
// alone stores. Ragged M = 29 and N = 200 as there.
// EMU: MMA=sm_90 K=4 grid=2,4 args=bf16[29x200];bf16[29x1064];bf16[200x1064]^T
// CHECK: arg0: 5800 elements, {{[1-9][0-9]*}} written, 0 differ
// CHECK: arg1: 30856 elements, 0 written, 0 differ
// CHECK: arg2: 212800 elements, 0 written, 0 differ
// CHECK: mma_sync_split_k: T=128 S=4 K=4 MMA=sm_90 dynamic shared 61440 OK
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xbf16, strided<[1, ?], offset: ?>>
func.func @mma_sync_split_k(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<16x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c127 = arith.constant 127 : index
  %c128 = arith.constant 128 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c127 : index
  %n = arith.divui %s, %c128 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<16x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<16x128xbf16>
    %tb = tile.load %b[%ki, %p1] : !t -> tensor<128x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<16x128xbf16>, tensor<128x64xbf16>, tensor<16x64xf32> -> tensor<16x64xf32>
    scf.yield %d : tensor<16x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<16x64xf32> to tensor<16x64xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<16x64xbf16>, !m
  return
}
