//===- Passes.td - tessera passes on the LLVM dialect ------*- tablegen -*-===//
//
// Passes that run on the LLVM dialect form of a kernel, after the conversions
// and before the translation to LLVM IR: they emit NVPTX-specific inline asm,
// so they belong to no conversion. (Passes on LLVM IR itself, after the
// translation, are LLVM passes: tessera/LLVMIR/Transforms/Passes.h.)
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_TD
#define TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def LLVMLoadCacheHints : Pass<"llvm-load-cache-hints", "::mlir::ModuleOp"> {
  let summary = "Give loads from read-only kernel parameters an L2 cache policy";
  let description = [{
    Guarantees: a load is rewritten only when no store of the kernel can
    reach the memory it reads, and then reads the same bits through the
    read-only data path with an L2 eviction policy (and the parameters it
    reads are marked `llvm.noalias` and `llvm.readonly`); a kernel whose
    writes cannot all be traced is left unchanged.

    Runs on the LLVM dialect form of gpu kernels (`llvm.func` carrying
    `tile.kernel`, after the conversion to the LLVM dialect). Every aligned 4-, 8- or
    16-byte `llvm.load` of integers or floats whose pointer is computed (by
    `llvm.getelementptr`, through the memref descriptor's `llvm.insertvalue`
    and `llvm.extractvalue`) from a pointer parameter that nothing in the
    kernel stores through becomes a PTX `ld.global.nc.L2::cache_hint` with the
    policy `createpolicy.fractional.L2::<policy>` made once at the entry, as
    side-effect-free `llvm.inline_asm`. A kernel with a store, atomic or memory
    intrinsic whose pointer cannot be traced, a call, or side-effecting inline
    asm is left alone. Writes to shared or private memory (address spaces 3
    and 5) are no parameter's, however their address was computed. A kernel
    marked `tile.reduction` (by `convert-tile-to-loops`: its programs store an
    eighth of the bytes they load or less, a tile in a loop counted four
    times) takes `reduction-policy` instead (default evict_first; `none`
    leaves its loads plain), and only on the loads whose address depends on
    every CTA id (`nvvm.read.ptx.sreg.ctaid.*`, followed through op results and
    block arguments) that some load's address depends on: the streams each
    program reads for itself. Data that several programs read, such as a
    weight vector or a matrix product's operand tiles (one on ctaid.x, the
    other on ctaid.y), keeps plain loads. With evict_last
    the row sum and row max ran 0.45% slower on the H200; with evict_first
    the row sum gained 0.1-0.6%.

    Why evict_last for the other kernels (H200):
    with evict_last (presumably: the L2 then evicts the kernel's written lines
    before the lines it read) streaming kernels ran faster: bf16 add 4.387 -> 4.424 TB/s,
    copy 4.24 -> 4.30, softmax with fast math 4.20 -> 4.29, transpose 3.71 ->
    3.79 (the accurate fused chain, bound by arithmetic, 2.236 -> 2.209);
    evict_first made every kernel slower.

    ```mlir
    %v = llvm.load %p {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
    // becomes
    %pol = llvm.inline_asm "createpolicy.fractional.L2::evict_last.b64 $0, 1.0;", "=l" : () -> i64
    %r = llvm.inline_asm "ld.global.nc.L2::cache_hint.v4.b32 {$0, $1, $2, $3}, [$4], $5;",
         "=r,=r,=r,=r,l,l" %p, %pol : (!llvm.ptr, i64) -> !llvm.struct<(i32, i32, i32, i32)>
    %v = ... (the four words as vector<4xi32>, bitcast to vector<8xbf16>)
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"evict_last\"",
           "L2 eviction priority: evict_last, evict_first or evict_normal">,
    Option<"reductionPolicy", "reduction-policy", "std::string", /*default=*/"\"evict_first\"",
           "L2 eviction priority of a tile.reduction kernel's streamed loads: evict_first, "
           "evict_last, evict_normal or none">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_TD
