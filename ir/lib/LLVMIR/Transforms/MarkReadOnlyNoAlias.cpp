//===- MarkReadOnlyNoAlias.cpp - read-only parameters marked noalias ------===//
//
// Implements `tessera-mark-read-only-noalias<kernel=K>`, run after the
// optimizer: marks K's pointer parameters that it only reads (readonly or
// readnone, as the optimizer inferred) `noalias`, so that NVPTX selects
// ld.global.nc (the read-only data path) for loads through them. Sound because
// the launcher never lets an output alias an input: no memory a read-only
// parameter points to is written during the kernel, whatever else aliases it.
//
// Occupancy (nvvm.minctasm) is deliberately not requested: measured on the
// H200 with 512-thread rows, a cap of 3 CTAs per SM made RMSNorm 10% faster but
// LayerNorm 1.8x slower (it spills).
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::MarkReadOnlyNoAliasPass::run(Module &m,
                                                    ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-mark-read-only-noalias");
  if (!f)
    return PreservedAnalyses::all();
  bool changed = false;
  for (Argument &a : f->args())
    if (a.getType()->isPointerTy() && a.onlyReadsMemory() &&
        !a.hasNoAliasAttr()) {
      a.addAttr(Attribute::NoAlias);
      changed = true;
    }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
