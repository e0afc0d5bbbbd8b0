//===- SinkPureOps.cpp - pure instructions moved to their first use -------===//
//
// Implements `tessera-sink-pure-ops<kernel=K>`, run on the kernel's final IR
// after the optimizer. The NVPTX backend emits a block's instructions in their
// IR order, and ptxas keeps much of it. The lowering emits a tile op's
// elements together, so after a reduction the code of an RMSNorm widens all of
// a thread's elements, then multiplies them all, then packs and stores them:
// every element is live at once. Moved down to its first use, each element's
// widening, products and packing sit just before the store of its chunk, one
// chunk live at a time (as a hand-written kernel does). Used on the kernels
// compiled with tile-rewiden-after-reduce, which keep their bf16 values across
// a reduction to save registers (the launcher's rewiden variant, see
// docs/compiler.md).
//
// Moves each instruction that neither accesses memory nor has side effects
// (nor is a PHI, an alloca or an inline asm call) down to just before its
// first user in its block, or before the block's terminator when its users are
// elsewhere. Loads, including the L2-policy loads in inline asm, stay where
// they are: they were issued early on purpose (tile-hoist-loads).
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/Instructions.h"

using namespace llvm;

namespace {

bool isMovable(const Instruction &i) {
  if (i.isTerminator() || isa<PHINode, AllocaInst>(i) ||
      i.mayHaveSideEffects() || i.mayReadOrWriteMemory())
    return false;
  auto *call = dyn_cast<CallBase>(&i);
  return !call || !call->isInlineAsm();
}

} // namespace

PreservedAnalyses
mlir::tessera::llvmir::SinkPureOpsPass::run(Module &m,
                                            ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-sink-pure-ops");
  if (!f)
    return PreservedAnalyses::all();
  bool changed = false;
  for (BasicBlock &bb : *f) {
    // Bottom-up, so that an instruction's operands follow it down.
    SmallVector<Instruction *> order;
    for (Instruction &i : bb)
      order.push_back(&i);
    for (Instruction *i : reverse(order)) {
      if (!isMovable(*i))
        continue;
      Instruction *first = nullptr;
      for (User *u : i->users()) {
        auto *user = cast<Instruction>(u);
        Instruction *at = user->getParent() == &bb && !isa<PHINode>(user)
                              ? user
                              : bb.getTerminator();
        if (!first || at->comesBefore(first))
          first = at;
      }
      if (!first || i->getNextNode() == first)
        continue;
      i->moveBefore(first->getIterator());
      changed = true;
    }
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
