// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s --check-prefix=READS

// An epilogue that loads the output's own tile of an aligned argument (the
// bf16 gate of a SwiGLU, 128 x 128 tiles): the producer loads each consumer's
// 64 rows of it with TMA (a fourth tensor map, boxes of 128 x 64 elements,
// unswizzled) once a program's k-tiles are issued, after waiting for the
// consumer to release the buffer (the epilogue's empty barrier) and arming
// its full barrier with 16 KiB; the consumers wait on the full barrier, read
// their elements from shared memory, and after the epilogue meet at their
// named barrier and release the buffer. The 32 KiB of tiles leave 5 stages.
// CHECK-LABEL: func.func @mm_gate
// CHECK-SAME: tile.dynamic_shared_bytes = 230512 : i32
// CHECK-SAME: tile.tensor_maps = [{{.*}}, array<i64: 3, 128, 64, 0>]
// The producer: the program's k-tiles, then per consumer the empty wait, the
// 16 KiB expected, one TMA load of its rows.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: scf.for
// CHECK: cp.async.bulk.tensor.2d
// CHECK: mbarrier.try_wait.parity
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}" %{{.*}}, %c16384_i32
// CHECK: cp.async.bulk.tensor.2d{{.*}}%arg7
// CHECK: mbarrier.try_wait.parity
// CHECK: mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r,~{memory}" %{{.*}}, %c16384_i32
// CHECK: cp.async.bulk.tensor.2d{{.*}}%arg7
// The consumers: the full wait, shared reads and no global read of the gate,
// the release after the warpgroup's barrier.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: wgmma.mma_async
// CHECK: mbarrier.try_wait.parity
// CHECK-NOT: memref.load %arg3
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> bf16
// CHECK: arith.divf
// CHECK: nvvm.barrier id = %c1_i32{{[_0-9]*}} number_of_threads = %c128_i32
// CHECK: fence.proxy.async.shared::cta;
// CHECK: mbarrier.arrive.shared::cta.b64
// READS-COUNT-64: llvm.load {{.*}} : !llvm.ptr<3> -> bf16
// READS-NOT: llvm.load {{.*}} : !llvm.ptr<3> -> bf16
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_gate(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %g: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
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
  %gb = tile.load %g[%q0, %q1] : !m -> tensor<128x128xbf16>
  %gt = arith.extf %gb : tensor<128x128xbf16> to tensor<128x128xf32>
  %s = arith.divf %acc, %gt : tensor<128x128xf32>
  %t = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %t, %o[%q0, %q1] : tensor<128x128xbf16>, !m
  return
}

// -----

// An f32 gate at 128 x 128: its 64 KiB of tiles would leave 4 stages, so the
// epilogue loads it from global memory (three tensor maps, 6 stages).
// CHECK-LABEL: func.func @mm_gate_f32
// CHECK-SAME: tile.dynamic_shared_bytes = 230496 : i32
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 64, 128>, array<i64: 0, 64, 64, 128>]
// CHECK: memref.load %arg3
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!w = memref<?x?xf32, strided<[?, 1], offset: ?>>
func.func @mm_gate_f32(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %g: !w {tile.align = 16 : i64}) attributes {tile.kernel} {
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
