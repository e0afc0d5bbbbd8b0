//===- MarkGridWaitsConvergent.cpp - the kernel's own waits kept in place -===//
//
// Implements `tessera-mark-grid-waits-convergent<kernel=K>`, run before the
// optimizer: marks K's calls of its own grid dependency wait
// (kGridDependencyWaitAsm, tile.grid_dependency_wait's lowering) `convergent`.
//
// Why: a kernel that loads frozen tiles before it waits does so under a test
// of its loop's length, and runs the peeled iterations under the same test
// after the wait (tile-load-settled-before-wait). Left to itself, jump
// threading copies the wait, and what follows it, into both arms of the first
// test; the loads then share a block with the wait, and ptxas, which does not
// order ld.global.nc against griddepcontrol.wait within a block, schedules them
// after it (seen in the SASS: every LDG after ACQBULK), which undoes the
// point of loading them early. A convergent call may not be made
// control-dependent on more values, so it is neither threaded nor
// tail-duplicated: the wait stays in the join, after the block of the loads,
// and ptxas keeps the loads before it. CUDA C++ gets the same from clang and
// nvcc, which make every call in device code convergent.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::MarkGridWaitsConvergentPass::run(Module &m,
                                                        ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-mark-grid-waits-convergent");
  if (!f)
    return PreservedAnalyses::all();
  bool changed = false;
  for (CallInst *call : ownGridWaits(*f))
    if (!call->isConvergent()) {
      call->setConvergent();
      changed = true;
    }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
