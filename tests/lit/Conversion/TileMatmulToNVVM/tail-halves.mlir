// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a halve-tail=0" | FileCheck %s --check-prefix=OFF
// RUN: tessera-opt %s -split-input-file -convert-tile-matmul-to-nvvm="arch=sm_90a split-k=2" | FileCheck %s --check-prefix=SPLIT

// The last round in halves: the persistent CTAs run the programs whole in
// rounds of nctaid.x; where the last round's programs (programs mod ctas)
// are no more than half the CTAs, they are left out of the loop (tail) and
// CTA c < 2 tail runs half c mod 2 (columns 128 (c mod 2) ..) of program
// whole + c / 2, all of K, the ring going on from the loop's stage: its
// producer loads A's box and 2 of B's 4 boxes per k-tile (32 KiB expected
// instead of 48), its consumers issue wgmma m64n128k16 and store 2 of the 4
// output boxes. With split-k, the split tail is taken instead; halve-tail=0
// keeps the whole last round.
// CHECK-LABEL: func.func @mm_halves
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[CTAS:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[PROGRAMS:.*]] = arith.muli
// CHECK: %[[LAST:.*]] = arith.remui %[[PROGRAMS]], %[[CTAS]]
// CHECK: %[[TWICE:.*]] = arith.muli %[[LAST]], %c2_i32
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[TWICE]], %[[CTAS]]
// CHECK: %[[TAIL:.*]] = arith.select %[[FITS]], %[[LAST]], %c0_i32
// CHECK: %[[WHOLE:.*]] = arith.subi %[[PROGRAMS]], %[[TAIL]]
// The producer.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: %[[RING:.*]]:2 = scf.if %{{.*}} -> (i32, i32)
// CHECK: scf.for %{{.*}} = %[[CTA]] to %[[WHOLE]] step %[[CTAS]]
// CHECK: mbarrier.arrive.expect_tx{{.*}}%c49152_i32
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global
// CHECK: %[[HALVES:.*]] = arith.muli %[[TAIL]], %c2_i32
// CHECK: %[[MINE:.*]] = arith.cmpi ult, %[[CTA]], %[[HALVES]]
// CHECK: scf.if %[[MINE]]
// CHECK: %[[PAIR:.*]] = arith.shrui %[[CTA]], %c1_i32
// CHECK: arith.addi %[[WHOLE]], %[[PAIR]]
// CHECK: %[[SIDE:.*]] = arith.andi %[[CTA]], %c1_i32
// CHECK: arith.muli %[[SIDE]], %c128_i32
// CHECK: scf.for {{.*}} iter_args({{.*}} = %[[RING]]#0, {{.*}} = %[[RING]]#1)
// CHECK: mbarrier.arrive.expect_tx{{.*}}%c32768_i32
// CHECK-COUNT-3: cp.async.bulk.tensor.2d.shared::cluster.global
// CHECK-NOT: cp.async.bulk.tensor.2d.shared::cluster.global
// The consumers: the whole programs, then the half.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: scf.for %{{.*}} = %[[CTA]] to %[[WHOLE]] step %[[CTAS]]
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16
// CHECK-COUNT-4: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK: arith.cmpi ult, %[[CTA]], %{{.*}}
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-NOT: cp.async.bulk.tensor.2d.global.shared::cta.bulk_group
// CHECK-NOT: wgmma.mma_async
// OFF-LABEL: func.func @mm_halves
// OFF-NOT: arith.cmpi ule
// OFF-NOT: m64n128k16
// OFF: return
// SPLIT-LABEL: func.func @mm_halves
// SPLIT-SAME: tile.split_k = 2
// SPLIT-NOT: m64n128k16
// SPLIT: return
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @mm_halves(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
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

// A K-major B (the transposed view of an N x K weight): its boxes are BN rows
// of 128 bytes, so half a program's come through a tensor map of its own,
// boxes of BN / 2 rows (the last map), at row 64 (c mod 2) of the tile's.
// CHECK-LABEL: func.func @kmajor_halves
// CHECK-SAME: tile.tensor_maps = [array<i64: 1, 64, 128, 128>, array<i64: 2, 64, 128, 128>, array<i64: 0, 64, 64, 128>, array<i64: 2, 64, 64, 128>]
// CHECK: scf.for
// CHECK-COUNT-2: cp.async.bulk.tensor.2d.shared::cluster.global{{.*}}
// CHECK: arith.muli %{{.*}}, %c64_i32
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global{{.*}} %arg3,
// CHECK: cp.async.bulk.tensor.2d.shared::cluster.global{{.*}} %arg6,
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {{.*}} p, 1, 1, 0, 0;
// CHECK: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {{.*}} p, 1, 1, 0, 0;
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xbf16, strided<[1, ?], offset: ?>>
func.func @kmajor_halves(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x128xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1 = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1] : !t -> tensor<64x128xbf16>
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

// BN 64: a half would be 32 columns, half of a row-major B's 64-column box and
// a wgmma too narrow to pay; the last round stays whole.
// CHECK-LABEL: func.func @narrow
// CHECK-NOT: arith.cmpi ule
// CHECK-NOT: m64n32k16
// CHECK: return
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @narrow(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
  %zeros = arith.constant dense<0.000000e+00> : tensor<128x64xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c1 : !m
  %acc = scf.for %k = %c0 to %n step %c1 iter_args(%c = %zeros) -> (tensor<128x64xf32>) {
    %ki = arith.index_cast %k : index to i32
    %pid0 = tile.program_id 0
    %ta = tile.load %a[%pid0, %ki] : !m -> tensor<128x64xbf16>
    %pid1 = tile.program_id 1
    %tb = tile.load %b[%ki, %pid1] : !m -> tensor<64x64xbf16>
    %d = tile.mma %ta, %tb, %c : tensor<128x64xbf16>, tensor<64x64xbf16>, tensor<128x64xf32> -> tensor<128x64xf32>
    scf.yield %d : tensor<128x64xf32>
  }
  %t = arith.truncf %acc : tensor<128x64xf32> to tensor<128x64xbf16>
  %p0 = tile.program_id 0
  %p1 = tile.program_id 1
  tile.store %t, %o[%p0, %p1] : tensor<128x64xbf16>, !m
  return
}
