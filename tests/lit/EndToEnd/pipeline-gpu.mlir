// The JIT's GPU pipeline (src/compiler/pipeline.cpp) run stage by stage with
// the tools: to_loops and to_llvm_dialect in tessera-opt, the translation,
// tessera's LLVM IR passes in tessera-llvm-opt (without LLVM's O3, which
// tessera-llvm-opt would run for a generic target rather than for NVPTX), and
// llc. A softmax-like row kernel divides a row's exps by their sum, so
// tessera-share-divisors has divisions to share (those of the edge copy: the
// interior's are shared by the lowering already); its programs are one warp
// (block-size=0 chooses 32 threads), eight to a CTA.
// RUN: tessera-opt %s -tile-hoist-loads -tile-version-interior \
// RUN:   -convert-tile-to-loops="target=gpu block-size=0 ctas-per-program=0 exp-range-test=true max-shared-bytes=232448" \
// RUN:   -canonicalize -cse -tile-promote-private-arrays -convert-math-to-nvvm \
// RUN:   -convert-scf-to-cf -expand-strided-metadata -convert-to-llvm \
// RUN:   -reconcile-unrealized-casts -llvm-load-cache-hints > %t.mlir
// RUN: FileCheck %s --check-prefix=LLVM < %t.mlir
// RUN: sed -e 's/tile.kernel/tile.kernel, nvvm.kernel/' %t.mlir | mlir-translate --mlir-to-llvmir \
// RUN:   | tessera-llvm-opt -passes='tessera-share-divisors<kernel=rows>,tessera-widen-bf16-pairs<kernel=rows>,tessera-launch-comments<programs-per-cta=8>,tessera-mark-read-only-noalias<kernel=rows>,tessera-grid-dependency-wait<kernel=rows>,tessera-skip-programs-past-the-end<kernel=rows;threads-per-program=32>' > %t.ll
// RUN: FileCheck %s --check-prefix=LL < %t.ll
// RUN: llc -mtriple=nvptx64-nvidia-cuda -mcpu=sm_90 -mattr=+ptx90 < %t.ll | FileCheck %s --check-prefix=PTX

// LLVM: llvm.func @rows(
// LLVM-SAME: tile.programs_per_cta = 8 : i32
// LLVM: createpolicy.fractional.L2::evict_last

// LL: module asm "// tessera.programs_per_cta 8"
// LL: define ptx_kernel void @rows(ptr noalias readonly
// LL-NEXT: wait_for_prerequisite_grids:
// LL: griddepcontrol.wait
// LL: br i1 %{{.*}}, label %{{.*}}, label %program_past_the_end
// LL: %recip = fdiv float 1.000000e+00

// PTX: // tessera.programs_per_cta 8
// PTX: .visible .entry rows(
// PTX: griddepcontrol.wait;
// PTX: rcp.rn.f32
func.func @rows(%a: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64},
                %o: memref<?x?xf32, strided<[?, 1], offset: ?>> {tile.align = 16 : i64}) attributes {tile.kernel} {
  %pid = tile.program_id 0
  %c0 = arith.constant 0 : i32
  %x = tile.load %a[%pid, %c0] : memref<?x?xf32, strided<[?, 1], offset: ?>> -> tensor<1x1024xf32>
  %e = math.exp %x : tensor<1x1024xf32>
  %s = tile.reduce %e {kind = sum, axis = 1} : tensor<1x1024xf32> -> tensor<1x1xf32>
  %sb = tile.broadcast %s : tensor<1x1xf32> -> tensor<1x1024xf32>
  %y = arith.divf %e, %sb : tensor<1x1024xf32>
  tile.store %y, %o[%pid, %c0] : tensor<1x1024xf32>, memref<?x?xf32, strided<[?, 1], offset: ?>>
  return
}
