// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a ping-pong=1" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a ping-pong=1 split-k=2" | FileCheck %s --check-prefix=SPLIT
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s --check-prefix=OFF

// Ping-pong: program j of the CTA (j = (tile - ctaid) / nctaid) is consumer
// j mod 2's, which multiplies all 128 rows (two wgmma m64n128k16 per K step,
// two accumulators) while the other steps its ring state past the program's
// k-tiles. The consumer of program j > 0 waits at its named barrier (4 + c)
// for the other's products, and hands its own over (bar.arrive at the
// other's) where another program follows. Each stage is released by one
// consumer: its empty barrier counts one arrival. The k-loop keeps one
// k-tile's products in flight (wait_group 1), releases the stage before,
// and after the loop waits for all and releases the last stage. The epilogue stages 128
// rows per consumer and TMA-stores four boxes; the two consumers' staging
// (64 KiB) leaves 5 stages. With a split the cooperative schedule is kept,
// as without the option.
// CHECK-LABEL: func.func @mm_ping_pong
// CHECK-SAME: tile.block_size = 384
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[CTAS:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[PROGRAMS:.*]] = arith.muli
// CHECK-NOT: arith.remui %[[PROGRAMS]], %[[CTAS]]
// CHECK-COUNT-10: "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r,~{memory}" %{{.*}}, %c1_i32{{(_[0-9]+)?}} :
// CHECK-NOT: mbarrier.init
// The producer loads every program in order.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: scf.for %{{.*}} = %[[CTA]] to %[[PROGRAMS]] step %[[CTAS]]
// CHECK: mbarrier.arrive.expect_tx{{.*}}%c32768_i32
// The consumers.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: scf.for %[[TILE:.*]] = %[[CTA]] to %[[PROGRAMS]] step %[[CTAS]] iter_args(%[[STAGE:.*]] = %{{.*}}, %[[PARITY:.*]] = %{{.*}})
// CHECK: %[[BEFORE:.*]] = arith.subi %[[TILE]], %[[CTA]]
// CHECK: %[[J:.*]] = arith.divui %[[BEFORE]], %[[CTAS]]
// CHECK: %[[ODD:.*]] = arith.andi %[[J]], %c1_i32
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[ODD]], %[[CONSUMER:.*]] :
// CHECK: scf.if %[[MINE]] -> (i32, i32)
// CHECK: arith.cmpi ne, %[[J]], %c0_i32
// CHECK: nvvm.barrier id = %c4_i32{{.*}} number_of_threads = %c256_i32
// CHECK: nvvm.barrier id = %c5_i32{{.*}} number_of_threads = %c256_i32
// CHECK: %[[LOOP:.*]]:5 = scf.for %[[KT:.*]] = %{{.*}} to %[[KTILES:.*]] step {{.*}} -> (i32, i32, !llvm.struct<({{.*}})>, !llvm.struct<({{.*}})>, i32)
// CHECK-COUNT-8: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: "wgmma.wait_group.sync.aligned 1;"
// CHECK: arith.cmpi ne, %[[KT]], %c0_i32
// CHECK: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// CHECK: "wgmma.wait_group.sync.aligned 0;"
// CHECK: arith.cmpi sgt, %[[KTILES]], %c0_i32
// CHECK: "mbarrier.arrive.shared::cta.b64 _, [$0];"
// CHECK: %[[NEXT:.*]] = arith.addi %[[TILE]], %[[CTAS]]
// CHECK: arith.cmpi ult, %[[NEXT]], %[[PROGRAMS]]
// CHECK: "bar.arrive 5, 256;"
// CHECK: "bar.arrive 4, 256;"
// CHECK-COUNT-4: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK: } else {
// CHECK: %[[AT:.*]] = arith.addi %[[STAGE]], %{{.*}}
// CHECK: %[[WRAPS:.*]] = arith.divui %[[AT]], %c5_i32
// CHECK-NOT: wgmma.mma_async
// CHECK: return
// SPLIT-LABEL: func.func @mm_ping_pong
// SPLIT-SAME: tile.split_k = 2
// SPLIT-NOT: bar.arrive
// SPLIT: return
// OFF-LABEL: func.func @mm_ping_pong
// OFF-NOT: bar.arrive
// OFF-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// OFF-NOT: bar.arrive
// OFF: return
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_ping_pong(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %kdim = memref.dim %a, %c1 : !m
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %s = arith.addi %kdim, %c63 : index
  %n = arith.divui %s, %c64 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1 = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1] : !m -> tensor<64x128xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %t = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<128x128xbf16>, !m
  return
}


// -----

// Tiles of more than 128 x 128 accumulators keep the cooperative schedule:
// each consumer's 64 rows of 256 columns.
// CHECK-LABEL: func.func @mm_wide
// CHECK-NOT: bar.arrive
// CHECK: return
// SPLIT-LABEL: func.func @mm_wide
// OFF-LABEL: func.func @mm_wide
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_wide(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x256xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
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
    %tb = tile.load %b[%ki, %pid1] : !m -> tensor<64x256xbf16>
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

// An epilogue that loads (a bias row) beside 128 accumulators a thread: each
// ping-pong consumer still stages its 128 rows and TMA-stores them (TMA clips
// the ragged edges), with no stores from registers.
// CHECK-LABEL: func.func @mm_bias_ping_pong
// CHECK: nvvm.barrier id = %c4_i32
// CHECK: memref.load %arg3
// CHECK: arith.maximumf
// CHECK: llvm.store %{{.*}} {alignment = 4 : i64} : vector<2xbf16>, !llvm.ptr<3>
// CHECK-NOT: vector.store
// CHECK: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK: return
// SPLIT-LABEL: func.func @mm_bias_ping_pong
// OFF-LABEL: func.func @mm_bias_ping_pong
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_bias_ping_pong(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %bias: memref<?xbf16, strided<[1], offset: ?>>) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %pid1 = tile.program_id 1
  %bv = tile.load %bias[%pid1] : memref<?xbf16, strided<[1], offset: ?>> -> tensor<128xbf16>
  %bf = arith.extf %bv : tensor<128xbf16> to tensor<128xf32>
  %br = tile.reshape %bf : tensor<128xf32> -> tensor<1x128xf32>
  %bb = tile.broadcast %br : tensor<1x128xf32> -> tensor<128x128xf32>
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %kdim = memref.dim %a, %c1 : !m
  %c63 = arith.constant 63 : index
  %c64 = arith.constant 64 : index
  %s = arith.addi %kdim, %c63 : index
  %n = arith.divui %s, %c64 : index
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1b = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1b] : !m -> tensor<64x128xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x128xbf16>, tensor<128x128xf32> -> tensor<128x128xf32>
    scf.yield %d : tensor<128x128xf32>
  }
  %y = arith.addf %acc, %bb : tensor<128x128xf32>
  %r = arith.maximumf %y, %zeros : tensor<128x128xf32>
  %t = arith.truncf %r : tensor<128x128xf32> to tensor<128x128xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<128x128xbf16>, !m
  return
}
