//===- MarkAlignedAsmConvergent.cpp - aligned PTX kept where it is --------===//
//
// Implements `tessera-mark-aligned-asm-convergent<kernel=K>`, run before the
// optimizer: marks `convergent` every call in K of inline asm whose PTX is an
// aligned instruction (one that every thread of a warp, a warpgroup or the CTA
// must execute as the same instruction): text with `.aligned` (wgmma's fence,
// commit, wait and mma, setmaxnreg, aligned cluster barriers) or a `bar.sync`
// / `bar.arrive` / `barrier.sync` (aligned by definition).
//
// Why: LLVM does not know what inline asm does. Between two tests of one
// condition (a warpgroup's leader storing, then releasing a buffer) jump
// threading copied an asm `bar.sync` into both arms; the leader's lanes and
// the rest of its warp then reached the aligned barrier at two different
// instructions, and the sm_90a GEMM hung (session 51; named barriers are
// `nvvm.barrier` ops since, whose intrinsic LLVM knows as convergent). A
// convergent call may not be made control-dependent on more values, so it is
// neither threaded, tail-duplicated nor unswitched. CUDA C++ gets the same from
// clang and nvcc, which make every call in device code convergent; other
// inline asm (loads with cache hints, mbarrier waits in loops) is left free.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

using namespace llvm;

namespace {

/// Whether inline asm `text` is an aligned PTX instruction.
bool isAlignedAsm(StringRef text) {
  return text.contains(".aligned") || text.contains("bar.sync") ||
         text.contains("bar.arrive") || text.contains("barrier.sync");
}

} // namespace

PreservedAnalyses
mlir::tessera::llvmir::MarkAlignedAsmConvergentPass::run(Module &m,
                                                         ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-mark-aligned-asm-convergent");
  if (!f)
    return PreservedAnalyses::all();
  bool changed = false;
  for (BasicBlock &bb : *f)
    for (Instruction &i : bb) {
      auto *call = dyn_cast<CallInst>(&i);
      if (!call || call->isConvergent())
        continue;
      auto *ia = dyn_cast<InlineAsm>(call->getCalledOperand());
      if (!ia || !isAlignedAsm(ia->getAsmString()))
        continue;
      call->setConvergent();
      changed = true;
    }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
