// RUN: tessera-opt %s -convert-tile-matmul-to-nvvm="arch=sm_90a split-k=2" | FileCheck %s
// RUN: tessera-opt %s -convert-tile-matmul-to-nvvm="arch=sm_90a" | FileCheck %s --check-prefix=NONE

// RUN: tessera-opt %s -convert-tile-matmul-to-nvvm="arch=sm_90a split-k=4" | FileCheck %s --check-prefix=FOUR

// A residual GEMM (o_proj's form: a bf16 residual tile loaded in the epilogue), 128 x 128 x 64
// tiles, over persistent clusters of 2 CTAs: rank = ctaid.x mod 2, cluster = ctaid.x / 2. The
// programs of the last round (programs mod ctas of them) are split (tail) where there are no more
// of them than clusters; the others (whole) run one per CTA in the loop over programs. Then
// cluster c < tail runs program whole + c, the ring going on from the loop's stage; rank r
// multiplies its k-tiles n r / 2 to n (r + 1) / 2; the consumers meet at named barrier 3 (of
// their 256 threads), rank 1 writes its accumulators over the stages, rank 0 adds them through
// distributed shared memory (one mapped address, 64 loads at immediate offsets) between two
// cluster barriers, which the producer's threads join, and runs the epilogue alone. The whole
// programs' epilogues read the residual tile from shared memory (TMA loads it:
// epilogue-tiles-tma.mlir), the split program's from global memory.
// CHECK-LABEL: func.func @residual
// CHECK-SAME: tile.ctas_per_program = 2 : i32
// CHECK-SAME: tile.persistent
// CHECK-SAME: tile.split_k = 2 : i32
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[CTAS:.*]] = nvvm.read.ptx.sreg.nctaid.x
// CHECK: %[[RANK:.*]] = arith.andi %[[CTA]], %c1_i32
// CHECK: %[[CLUSTER:.*]] = arith.shrui %[[CTA]], %c1_i32
// CHECK: %[[CLUSTERS:.*]] = arith.shrui %[[CTAS]], %c1_i32
// CHECK: %[[PROGRAMS:.*]] = arith.muli
// CHECK: %[[LAST:.*]] = arith.remui %[[PROGRAMS]], %[[CTAS]]
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[LAST]], %[[CLUSTERS]]
// CHECK: %[[TAIL:.*]] = arith.select %[[FITS]], %[[LAST]], %c0_i32
// CHECK: %[[WHOLE:.*]] = arith.subi %[[PROGRAMS]], %[[TAIL]]
// The producer: its first thread loads the whole programs' k-tiles, then, for the cluster's split
// program, its rank's share, the ring going on; the producer's threads join two cluster barriers.
// CHECK: setmaxnreg.dec.sync.aligned.u32 40;
// CHECK: %[[RING:.*]]:2 = scf.if %{{.*}} -> (i32, i32)
// CHECK: scf.for %{{.*}} = %[[CTA]] to %[[WHOLE]] step %[[CTAS]]
// CHECK: cp.async.bulk.tensor.2d
// CHECK: arith.cmpi ult, %[[CLUSTER]], %[[TAIL]]
// CHECK: arith.addi %[[WHOLE]], %[[CLUSTER]]
// CHECK: scf.for {{.*}} iter_args({{.*}} = %[[RING]]#0, {{.*}} = %[[RING]]#1)
// CHECK: cp.async.bulk.tensor.2d
// CHECK: barrier.cluster.arrive.release;
// CHECK-SAME: barrier.cluster.wait.acquire;
// CHECK-NEXT: barrier.cluster.arrive.release;
// The consumers: the whole programs with their epilogues, then the split program.
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// CHECK: scf.for %{{.*}} = %[[CTA]] to %[[WHOLE]] step %[[CTAS]]
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> bf16
// CHECK: arith.cmpi ult, %[[CLUSTER]], %[[TAIL]]
// CHECK: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16
// CHECK: nvvm.barrier id = %c3_i32{{[_0-9]*}} number_of_threads = %c256_i32
// CHECK: scf.if
// CHECK: llvm.store
// CHECK: barrier.cluster.arrive.release;
// CHECK: mapa.shared::cluster.u32
// CHECK-COUNT-64: ld.shared::cluster.f32
// CHECK: barrier.cluster.arrive.release;
// CHECK: arith.cmpi eq, %[[RANK]], %c0_i32
// CHECK: memref.load %arg3
// Clusters of 4: as many programs split as clusters at most.
// FOUR-LABEL: func.func @residual
// FOUR: %[[CTAS:.*]] = nvvm.read.ptx.sreg.nctaid.x
// FOUR: %[[CLUSTERS:.*]] = arith.shrui %[[CTAS]], %c2_i32
// FOUR: %[[LAST:.*]] = arith.remui %{{.*}}, %[[CTAS]]
// FOUR: arith.cmpi ule, %[[LAST]], %[[CLUSTERS]]
// NONE-LABEL: func.func @residual
// NONE-NOT: tile.split_k
// NONE-NOT: barrier.cluster
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @residual(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !m {tile.align = 16 : i64}, %r: !m {tile.align = 16 : i64}) attributes {tile.kernel} {
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
  %rt = tile.load %r[%q0, %q1] : !m -> tensor<128x128xbf16>
  %rf = arith.extf %rt : tensor<128x128xbf16> to tensor<128x128xf32>
  %y = arith.addf %rf, %acc : tensor<128x128xf32>
  %yt = arith.truncf %y : tensor<128x128xf32> to tensor<128x128xbf16>
  tile.store %yt, %o[%q0, %q1] : tensor<128x128xbf16>, !m
  return
}
