//===- GridDependencyWait.cpp - wait for the grids a kernel depends on ----===//
//
// Implements `tessera-grid-dependency-wait<kernel=K;[no-]griddepcontrol>`,
// run after the optimizer. Kernel K gets a new entry block,
// `wait_for_prerequisite_grids`, that runs
//   griddepcontrol.launch_dependents;  the next kernel may be launched now
//                                      (it waits in turn),
//   griddepcontrol.wait;               every prerequisite grid has ended, its
//                                      writes are visible,
// then branches to the old entry. Launches and graph edges may then be
// programmatic (see the runtime's CUDA driver bindings), which overlaps a
// dependent kernel's launch with the end of the one before it; without them
// both instructions do nothing. The wait is inline asm with a memory clobber,
// and in a block of its own: the optimizer has run already, and instruction
// selection, which works block by block, cannot move loads from read-only
// (constant to it) parameters above it. Targets before sm_90 have no
// griddepcontrol (and their launches are never programmatic):
// `no-griddepcontrol` makes the entry block all the same, without the
// instructions, as tessera-skip-programs-past-the-end expects it.
// The old entry's allocas stay where they are: NVPTX's code generation hoists
// allocas of constant size into the entry block (NVPTXAllocaHoisting), so they
// still get a fixed place in the local memory frame.
//
// A kernel that reads some tensors before it waits (tile.grid_dependency_wait:
// copies of frozen weights, which no running kernel writes) already has a
// call of the wait's inline asm (kGridDependencyWaitAsm). Its entry block then
// only launches the dependents, and each such call ends its block, for the
// same reason as above: loads after it stay after it. Without griddepcontrol
// those calls are removed.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::GridDependencyWaitPass::run(Module &m,
                                                   ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-grid-dependency-wait");
  if (!f)
    return PreservedAnalyses::all();
  LLVMContext &c = m.getContext();
  BasicBlock *oldEntry = &f->getEntryBlock();
  BasicBlock *entry =
      BasicBlock::Create(c, "wait_for_prerequisite_grids", f, oldEntry);
  SmallVector<CallInst *> ownWaits = ownGridWaits(*f);
  IRBuilder<> b(entry);
  auto *asmType = FunctionType::get(Type::getVoidTy(c), false);
  if (gridDependencyControl)
    b.CreateCall(InlineAsm::get(
        asmType,
        ownWaits.empty()
            ? "griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;"
            : "griddepcontrol.launch_dependents;",
        "~{memory}", /*hasSideEffects=*/true));
  b.CreateBr(oldEntry);
  for (CallInst *call : ownWaits) {
    if (!gridDependencyControl) {
      call->eraseFromParent();
      continue;
    }
    BasicBlock *bb = call->getParent();
    bb->splitBasicBlock(call->getNextNode(), "after_grid_dependency_wait");
  }
  return PreservedAnalyses::none();
}
