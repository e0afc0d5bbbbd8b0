// RUN: tessera-opt %s -convert-tile-to-loops="target=gpu block-size=256" | FileCheck %s

// A kernel of tile-split-k-loop (K = 4): the program id is ctaid.x / 4, the
// rank ctaid.x mod 4, and the function runs 4 CTAs per program. The split
// sum: ranks 1-3 store their partial to shared memory, a cluster barrier,
// rank 0 adds ranks 1, 2 and 3's partials through distributed shared memory,
// a second cluster barrier; then rank 0 stores.
// CHECK-LABEL: func.func @split
// CHECK-SAME: tile.ctas_per_program = 4 : i32
// CHECK-SAME: tile.split_k = 4 : i32
// CHECK: %[[CTA:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK: arith.shrui %[[CTA]], %c2_i32
// CHECK: %[[CTA2:.*]] = nvvm.read.ptx.sreg.ctaid.x
// CHECK-NEXT: %[[RANK:.*]] = arith.andi %[[CTA2]], %c3_i32
// CHECK-NOT: nvvm.read.ptx.sreg.ctaid.x
// CHECK: %[[OTHER:.*]] = arith.cmpi ne, %[[RANK]], %c0_i32
// CHECK: scf.if %[[OTHER]] {
// CHECK: memref.store %{{.*}}, %{{.*}} : memref<256xf32, 3>
// CHECK: }
// CHECK-NEXT: llvm.inline_asm has_side_effects "barrier.cluster.arrive.release;{{.*}}barrier.cluster.wait.acquire;"
// CHECK: %[[LEAD:.*]] = arith.cmpi eq, %[[RANK]], %c0_i32
// CHECK: scf.if %[[LEAD]] {
// CHECK: memref.extract_aligned_pointer_as_index
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32{{.*}}ld.shared::cluster.f32{{.*}}", "=f,r,r,~{memory}" %{{.*}}, %c1_i32
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32{{.*}}", "=f,r,r,~{memory}" %{{.*}}, %c2_i32
// CHECK: llvm.inline_asm has_side_effects "{{.*}}mapa.shared::cluster.u32{{.*}}", "=f,r,r,~{memory}" %{{.*}}, %c3_i32
// CHECK: }
// CHECK-NEXT: llvm.inline_asm has_side_effects "barrier.cluster.arrive.release;{{.*}}"
// CHECK: scf.if
// CHECK: memref.store
!v = memref<?xf32, strided<[1], offset: ?>>
!w = memref<?x?xbf16, strided<[?, 1], offset: ?>>
func.func @split(%o: !v, %w: !w, %n: index) attributes {tile.kernel, tile.split_k = 4 : i32} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c0i = arith.constant 0 : i32
  %z = arith.constant dense<0.0> : tensor<16x512xf32>
  %p = tile.program_id 0
  %rank = tile.split_rank
  %r = arith.index_cast %rank : i32 to index
  %acc = scf.for %i = %r to %n step %c1 iter_args(%a = %z) -> (tensor<16x512xf32>) {
    %j = arith.index_cast %i : index to i32
    %wt = tile.load %w[%p, %j] : !w -> tensor<16x512xbf16>
    %wf = arith.extf %wt : tensor<16x512xbf16> to tensor<16x512xf32>
    %a2 = arith.addf %a, %wf : tensor<16x512xf32>
    scf.yield %a2 : tensor<16x512xf32>
  }
  %rows = tile.reduce %acc {kind = sum, axis = 1} : tensor<16x512xf32> -> tensor<16x1xf32>
  %s = tile.split_sum %rows : tensor<16x1xf32> -> tensor<16x1xf32>
  %lead = arith.cmpi eq, %rank, %c0i : i32
  scf.if %lead {
    %y = tile.reshape %s : tensor<16x1xf32> -> tensor<16xf32>
    tile.store %y, %o[%p] : tensor<16xf32>, !v
  }
  return
}
