// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_90" | FileCheck %s

// An epilogue that calls a device function: the matmul class still, lowered
// on mma.sync with a call per accumulator element of a private declaration of
// the scalar function (nvJitLink links its code in). 64 x 64 tiles, 4 warps
// of 32 x 32: 32 accumulators, so 32 calls per thread.
// CHECK: func.func private @twice_plus(f32, f32) -> f32
// CHECK-LABEL: func.func @mm_call(
// CHECK-SAME: tile.kernel, tile.mma_sync
// CHECK: nvvm.ldmatrix
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK-COUNT-32: call @twice_plus(%{{.*}}, %{{.*}}) : (f32, f32) -> f32
// CHECK-NOT: call @
// CHECK-NOT: tile.
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!f = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_call(%o: !f {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %ones = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %kdim = memref.dim %a, %c1 : !m
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %y = tile.device_call @twice_plus(%acc, %ones) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %y, %o[%q0, %q1] : tensor<64x64xf32>, !f
  return
}
