// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_90 split-k=4" | FileCheck %s
// RUN: tessera-opt %s -convert-tile-matmul-to-mma-sync="arch=sm_80 split-k=4" | FileCheck %s --check-prefix=OLD

// A 16-row product with a K-major B (a decoder's projection of 16 tokens) in
// 16 x 64 x 128 tiles, split over clusters of 4 CTAs: 4 warps of 16 x 16, 8
// accumulators per thread. Program id 0 is ctaid.x / 4 and the rank ctaid.x
// mod 4; rank r copies and multiplies k-tiles [n r / 4, n (r + 1) / 4). After
// the loop ranks 1-3 store their 8 accumulators to their shared memory, a
// cluster barrier, rank 0 adds 3 x 8 values read through distributed shared
// memory, a second cluster barrier, and only rank 0 stores.
// CHECK-LABEL: func.func @skinny(
// CHECK-SAME: tile.ctas_per_program = 4 : i32
// CHECK-SAME: tile.kernel, tile.mma_sync, tile.split_k = 4 : i32
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[RANK:.*]] = arith.andi %[[CTA]], %c3_i32
// CHECK: %[[PID:.*]] = arith.shrui %[[CTA]], %c2_i32
// CHECK: %[[FIRST:.*]] = arith.shrui %{{.*}}, %c2_i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[RANK]], %c1_i32
// CHECK: scf.for
// CHECK: nvvm.mma.sync
// CHECK: scf.yield
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// CHECK: %[[PEER:.*]] = arith.cmpi ne, %[[RANK]], %c0_i32
// CHECK-NEXT: scf.if %[[PEER]] {
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: }
// CHECK-NEXT: llvm.inline_asm has_side_effects "barrier.cluster.arrive.release;{{.*}}barrier.cluster.wait.acquire;"
// CHECK: scf.if %{{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: llvm.ptrtoint %{{.*}} : !llvm.ptr<3> to i32
// CHECK-COUNT-24: mapa.shared::cluster.u32
// CHECK: } else {
// CHECK: llvm.inline_asm has_side_effects "barrier.cluster.arrive.release;{{.*}}"
// CHECK: scf.if
// CHECK: vector.store
// CHECK-NOT: barrier.cluster
// OLD-LABEL: func.func @skinny(
// OLD-NOT: split_k
// OLD-NOT: ctas_per_program
// OLD-NOT: barrier.cluster
// OLD: nvvm.mma.sync
!m = memref<?x?xbf16, strided<[?, 1], offset: ?>>
!t = memref<?x?xbf16, strided<[1, ?], offset: ?>>
func.func @skinny(%o: !m {tile.align = 16 : i64}, %a: !m {tile.align = 16 : i64}, %b: !t {tile.align = 16 : i64}) attributes {tile.kernel} {
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
