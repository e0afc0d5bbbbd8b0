// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80 warps=4" | FileCheck %s --check-prefix=FOUR
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80 warps=8" | FileCheck %s --check-prefix=EIGHT
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s --check-prefix=CHOSEN

// 128 x 128 x 32 bf16 tiles: the pass's choice (one warp per 4096 elements
// for 16-bit inputs and BK up to 64) and warps=4 are 4 warps of 64 x 64 (64
// mma.sync per k-tile, 128 accumulators a thread); warps=8 gives 8 warps of
// 32 x 64 (16 mma.sync per k-step of 16, 32 per k-tile).
// FOUR-LABEL: func.func @mm128(
// FOUR-SAME: tile.block_size = 128 : i32
// FOUR: scf.for
// FOUR-COUNT-64: nvvm.mma.sync
// FOUR-NOT: nvvm.mma.sync
// FOUR: scf.yield
// EIGHT-LABEL: func.func @mm128(
// EIGHT-SAME: tile.block_size = 256 : i32
// EIGHT: scf.for
// EIGHT-COUNT-32: nvvm.mma.sync
// EIGHT-NOT: nvvm.mma.sync
// EIGHT: scf.yield
// CHOSEN-LABEL: func.func @mm128(
// CHOSEN-SAME: tile.block_size = 128 : i32
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm128(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x128xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x32xbf16>, tensor<32x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<128x128xbf16>, !m
  return
}

// -----

// 128 x 256: 4 warps would need 256 accumulators a thread, so warps=4 keeps
// the pass's choice, 8 warps of 64 x 64.
// FOUR-LABEL: func.func @mm256(
// FOUR-SAME: tile.block_size = 256 : i32
// EIGHT-LABEL: func.func @mm256(
// EIGHT-SAME: tile.block_size = 256 : i32
// CHOSEN-LABEL: func.func @mm256(
// CHOSEN-SAME: tile.block_size = 256 : i32
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm256(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c31 = arith.constant 31 : index
  %c32 = arith.constant 32 : index
  %kdim = memref.dim %a, %c1 : !m
  %s = arith.addi %kdim, %c31 : index
  %n = arith.divui %s, %c32 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x32xbf16>, tensor<32x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  %r = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  tile.store %r, %o[%q0, %q1] : tensor<128x256xbf16>, !m
  return
}
