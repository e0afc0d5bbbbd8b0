// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90" | FileCheck %s

// Kernels outside the matmul class, and any kernel for another arch, are left
// unchanged for convert-tile-to-loops: the pass never fails.

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// B's rows not known to be 16-byte aligned: TMA cannot read them.
// CHECK-LABEL: func.func @unaligned_b
// CHECK: tile.mma
// CHECK-NOT: wgmma
func.func @unaligned_b(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// BK 32: one A box would be 64 bytes wide, not the 128 of the swizzle.
// CHECK-LABEL: func.func @narrow_k
// CHECK: tile.mma
// CHECK-NOT: wgmma
func.func @narrow_k(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
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

// A reduction after the loop is not elementwise.
// CHECK-LABEL: func.func @reduced
// CHECK: tile.mma
// CHECK-NOT: wgmma
func.func @reduced(%o: memref<?x?xf32, strided<[?, 1], offset: ?>>, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %r = tile.reduce %acc {kind = sum, axis = 1} : tensor<64x64xf32> -> tensor<64x1xf32>
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %r, %o[%q0, %q1] : tensor<64x1xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}

// -----

!m = memref<?x?xf32, strided<[?, 1], offset: ?>>

// f32 inputs with a row-major B run transposed, where each consumer owns 64
// columns: 256 columns would take four consumers, which the lowering does not
// build, so the kernel is left to convert-tile-matmul-to-mma-sync.
// CHECK-LABEL: func.func @f32_inputs
// CHECK: tile.mma
// CHECK-NOT: wgmma
func.func @f32_inputs(%o: !m, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x64xf32>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x256xf32>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xf32>, tensor<64x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x256xf32>, !m
  return
}

// -----

!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>

// An epilogue that calls a device function, in a Hopper tile: linked device
// code would make the kernel relocatable, where ptxas ignores setmaxnreg; the
// mma.sync lowering takes it.
// CHECK-LABEL: func.func @device_call_epilogue
// CHECK: tile.mma
// CHECK: tile.device_call @twice_plus
// CHECK-NOT: wgmma
func.func @device_call_epilogue(%o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
  %ones = arith.constant dense<1.000000e+00> : tensor<64x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<64x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<64x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    scf.yield %d : tensor<64x64xf32>
  }
  %y = tile.device_call @twice_plus(%acc, %ones) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %y, %o[%q0, %q1] : tensor<64x64xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
