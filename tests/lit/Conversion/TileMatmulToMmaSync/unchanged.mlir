// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_80" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync="arch=sm_75" | FileCheck %s --check-prefix=OLD
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-mma-sync | FileCheck %s --check-prefix=OLD

// Kernels outside the matmul class or outside the shapes this lowering lays
// out, and every kernel for a target before sm_80 (or none), are left
// unchanged for convert-tile-to-loops: the pass never fails.

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// B's rows not known to be 16-byte aligned: cp.async cannot copy them.
// CHECK-LABEL: func.func @unaligned_b
// CHECK: tile.mma
// CHECK-NOT: nvvm.mma.sync
// OLD-LABEL: func.func @unaligned_b
// OLD: tile.mma
func.func @unaligned_b(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x32xbf16>, tensor<32x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// 256 x 256 tiles: 256 accumulators per thread over 8 warps, more than the
// 128 the lowering allows.
// CHECK-LABEL: func.func @too_many_accumulators
// CHECK: tile.mma
// CHECK-NOT: nvvm.mma.sync
// OLD-LABEL: func.func @too_many_accumulators
// OLD: tile.mma
func.func @too_many_accumulators(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<256x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<256x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<256x32xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<32x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<256x32xbf16>, tensor<32x256xbf16>, tensor<256x256xf32> -> tensor<256x256xf32>
    scf.yield %d : tensor<256x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<256x256xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// BK 8: below the k16 of one mma.sync.
// CHECK-LABEL: func.func @narrow_k
// CHECK: tile.mma
// CHECK-NOT: nvvm.mma.sync
// OLD-LABEL: func.func @narrow_k
// OLD: tile.mma
func.func @narrow_k(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x8xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<8x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x8xbf16>, tensor<8x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

!m = memref<?x?xf32, strided<[?, 1], offset: ?>>

// f32 inputs with a K step of 4 (16 bytes): tf32's mma.sync takes 8.
// CHECK-LABEL: func.func @f32_narrow_k
// CHECK: tile.mma
// CHECK-NOT: nvvm.mma.sync
// OLD-LABEL: func.func @f32_narrow_k
// OLD: tile.mma
func.func @f32_narrow_k(%o: !m, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x4xf32>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<4x64xf32>
    %d = tile.mma %ta, %tb, %c : tensor<64x4xf32>, tensor<4x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, !m
  return
}

// -----

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// A kernel of the class for sm_80, which a target before sm_80 leaves as it is.
// CHECK-LABEL: func.func @in_class
// CHECK-SAME: tile.mma_sync
// CHECK: nvvm.mma.sync
// OLD-LABEL: func.func @in_class
// OLD-NOT: tile.mma_sync
// OLD: tile.mma
func.func @in_class(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<32x32xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<32x32xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<32x16xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<16x32xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<32x16xbf16>, tensor<16x32xbf16>, tensor<32x32xf32> -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<32x32xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
