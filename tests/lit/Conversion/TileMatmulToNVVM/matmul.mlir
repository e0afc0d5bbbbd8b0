// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a halve-tail=0" | FileCheck %s

// A matmul with a bias + relu + bf16 epilogue, 128 x 256 x 64 tiles: 384
// threads (a producer and two consumer warpgroups), 4 stages of 48 KiB, two
// tensor maps (A in 64 x 128 boxes, B in 64 x 64 boxes) after the parameters.

// CHECK: llvm.mlir.global external @__tile_matmul_shared_mm() {addr_space = 3 : i32, alignment = 1024 : i64} : !llvm.array<0 x i8>
// CHECK-LABEL: func.func @mm
// CHECK-SAME: %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>})
// CHECK-SAME: tile.block_size = 384 : i32
// CHECK-SAME: tile.dynamic_shared_bytes = 197696 : i32
// CHECK-SAME: tile.persistent
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 64, 128>]
// CHECK-NOT: tile.
// CHECK: mbarrier.init.shared::cta.b64
// CHECK: fence.mbarrier_init.release.cluster;
// CHECK: nvvm.barrier0
// The producer: one thread issues one A box and four B boxes per k-tile.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: mbarrier.try_wait.parity.shared::cta.b64
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// The consumers: four wgmma m64n256k16 per k-tile, then the epilogue.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: mbarrier.arrive.shared::cta.b64 _, [$0];
// CHECK: memref.load %arg3
// CHECK: arith.maximumf
// CHECK: arith.truncf
// CHECK: vector.store %{{.*}}, %arg0[%{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<?x?xbf16, strided<[?, 1], offset: ?>>, vector<2xbf16>
// CHECK-NOT: tile.
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %bias: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %pid1 = tile.program_id 1
  %bv = tile.load %bias[%pid1] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<256xbf16>
  %bf = arith.extf %bv : tensor<256xbf16> to tensor<256xf32>
  %br = tile.reshape %bf : tensor<256xf32> -> tensor<1x256xf32>
  %bb = tile.broadcast %br : tensor<1x256xf32> -> tensor<128x256xf32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %kdim = memref.dim %a, %c1 : !m
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %s = arith.addi %kdim, %c63 : index
  %n = arith.divui %s, %c64 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1b = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1b] : !m -> tensor<64x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %y = arith.addf %acc, %bb : tensor<128x256xf32>
  %r = arith.maximumf %y, %zeros : tensor<128x256xf32>
  %t = arith.truncf %r : tensor<128x256xf32> to tensor<128x256xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<128x256xbf16>, !m
  return
}

// -----

// B as the transposed view of an N x K row-major weight (unit outer stride):
// K-major, as A. Its tensor map has 64 x 256 boxes of the N x K storage (one
// per 64 k), the producer issues one A box and one B box per k-tile, and the
// wgmma reads B without tnsp-b (the last immediate 0). The epilogue loads
// nothing, so it stores through shared memory (the output's map is third).
// CHECK-LABEL: func.func @mm_kmajor
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 256, 128>, array<i64: 0, 64, 64, 128>]
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-NOT: cp.async.bulk.tensor
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {{.*}} p, 1, 1, 0, 0;
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xbf16, strided<[1, ?], offset: ?>>
func.func @mm_kmajor(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %kdim = memref.dim %a, %c1 : !m
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %s = arith.addi %kdim, %c63 : index
  %n = arith.divui %s, %c64 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1 = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1] : !t -> tensor<64x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %t = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<128x256xbf16>, !m
  return
}

// -----

// An epilogue that loads nothing, with an output TMA can write (unit inner
// stride, 16-byte aligned): each consumer writes its 64 x 256 bf16 rows as
// pairs into four 64 x 64 boxes of shared memory (128-byte swizzled, 32 KiB a
// consumer), and its first thread stores them with four TMA stores, which it
// waits for (their reads) only before the next program's writes, and fully
// at the end. The 64 KiB of staging leave 3 stages of 48 KiB.
// CHECK-LABEL: func.func @mm_staged
// CHECK-SAME: tile.dynamic_shared_bytes = 214064 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 64, 128>, array<i64: 0, 64, 64, 128>]
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: cp.async.bulk.wait_group.read 0;
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = %c2_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK-COUNT-64: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// CHECK-NOT: vector.store
// CHECK: fence.proxy.async.shared::cta;
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK: nvvm.barrier id = %c2_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK-COUNT-4: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$2, $3}], [$1];
// CHECK: cp.async.bulk.commit_group;
// CHECK: scf.yield
// CHECK: cp.async.bulk.wait_group 0;
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_staged(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %t = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xbf16>
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %t, %o[%q0, %q1] : tensor<128x256xbf16>, !m
  return
}

// -----

// An f32 output of 256 columns would take 128 KiB of staging and leave 2
// stages: the epilogue stores from registers, and 4 stages fit.
// CHECK-LABEL: func.func @mm_f32_out
// CHECK-SAME: tile.dynamic_shared_bytes = 197696 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 64, 128>]
// CHECK-NOT: cp.async.bulk.tensor.2d.global
// CHECK: vector.store %{{.*}}, %arg0
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_f32_out(%o: !w {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x256xf32>) {
    %ki = arith.index_cast %k : index to i32
    %p0 = tile.program_id 0
    %p1 = tile.program_id 1
    %ta = tile.load %a[%p0, %ki] : !m -> tensor<128x64xbf16>
    %tb = tile.load %b[%ki, %p1] : !m -> tensor<64x256xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x256xbf16>, tensor<128x256xf32> -> tensor<128x256xf32>
    scf.yield %d : tensor<128x256xf32>
  }
  %q0 = tile.program_id 0
  %q1 = tile.program_id 1
  tile.store %acc, %o[%q0, %q1] : tensor<128x256xf32>, !w
  return
}

// -----

// An epilogue that loads a bias row stages its tile where the tile has at
// most 128 columns (128 x 256 stores from registers: the first case above).
// CHECK-LABEL: func.func @mm_bias_128
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 64, 128>, array<i64: 0, 64, 64, 128>]
// CHECK: memref.load %arg3
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_bias_128(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %bias: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
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
  %q1 = tile.program_id 1
  %bt = tile.load %bias[%q1] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<128xbf16>
  %bw = arith.extf %bt : tensor<128xbf16> to tensor<128xf32>
  %br = tile.reshape %bw : tensor<128xf32> -> tensor<1x128xf32>
  %bb = tile.broadcast %br : tensor<1x128xf32> -> tensor<128x128xf32>
  %s = arith.addf %acc, %bb : tensor<128x128xf32>
  %t = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xbf16>
  %q0 = tile.program_id 0
  tile.store %t, %o[%q0, %q1] : tensor<128x128xbf16>, !m
  return
}
