// sink_pure_ops.cpp: the NVPTX backend emits a block's instructions in their IR order, and ptxas
// keeps much of it. The lowering emits a tile op's elements together, so after a reduction the
// code of an RMSNorm widens all of a thread's elements, then multiplies them all, then packs and
// stores them: every element is live at once. Moved down to its first use, each element's
// widening, products and packing sit just before the store of its chunk, one chunk live at a time
// (as a hand-written kernel does). Used on the kernels compiled with tile-rewiden-after-reduce,
// which keep their bf16 values across a reduction to save registers (see variant_search.cpp,
// try_rewidened). Loads, including the L2-policy loads in inline asm, stay where they are: they
// were issued early on purpose (tile-hoist-loads). Runs after the optimizer, on the final IR.
#include "compiler/sink_pure_ops.h"

#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace tessera::detail {

namespace {

bool movable(const llvm::Instruction& i) {
  if (i.isTerminator() || llvm::isa<llvm::PHINode, llvm::AllocaInst>(i) || i.mayHaveSideEffects() ||
      i.mayReadOrWriteMemory())
    return false;
  auto* call = llvm::dyn_cast<llvm::CallBase>(&i);
  return !call || !call->isInlineAsm();
}

}  // namespace

int sink_pure_ops(llvm::Module& m, const std::string& symbol) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f || f->empty()) return 0;
  int moved = 0;
  for (llvm::BasicBlock& bb : *f) {
    // Bottom-up, so that an instruction's operands follow it down.
    llvm::SmallVector<llvm::Instruction*> order;
    for (llvm::Instruction& i : bb) order.push_back(&i);
    for (llvm::Instruction* i : llvm::reverse(order)) {
      if (!movable(*i)) continue;
      llvm::Instruction* first = nullptr;
      for (llvm::User* u : i->users()) {
        auto* user = llvm::cast<llvm::Instruction>(u);
        llvm::Instruction* at = user->getParent() == &bb && !llvm::isa<llvm::PHINode>(user) ? user : bb.getTerminator();
        if (!first || at->comesBefore(first)) first = at;
      }
      if (!first || i->getNextNode() == first) continue;
      i->moveBefore(first->getIterator());
      ++moved;
    }
  }
  return moved;
}

}  // namespace tessera::detail
