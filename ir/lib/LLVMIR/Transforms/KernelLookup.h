//===- KernelLookup.h - the kernel an LLVM IR pass rewrites -----*- C++ -*-===//
//
// Shared by tessera's LLVM IR passes that rewrite one kernel, named by its
// symbol: the function, or an error diagnostic naming the pass; and the
// kernel's own grid dependency waits (calls of kGridDependencyWaitAsm).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_LLVMIR_TRANSFORMS_KERNELLOOKUP_H
#define TESSERA_LIB_LLVMIR_TRANSFORMS_KERNELLOOKUP_H

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace mlir::tessera::llvmir {

/// The function `kernel` of `m` if it has a body; else reports an error
/// through `m`'s context, naming `pass`, and returns null.
inline llvm::Function *findKernel(llvm::Module &m, llvm::StringRef kernel,
                                  llvm::StringRef pass) {
  llvm::Function *f = m.getFunction(kernel);
  if (!f || f->isDeclaration()) {
    m.getContext().emitError(pass + ": no function '" + kernel +
                             "' with a body in the module");
    return nullptr;
  }
  return f;
}

/// The calls of `f` to its own grid dependency wait (kGridDependencyWaitAsm,
/// tile.grid_dependency_wait's lowering), in block order.
inline llvm::SmallVector<llvm::CallInst *> ownGridWaits(llvm::Function &f) {
  llvm::SmallVector<llvm::CallInst *> waits;
  for (llvm::BasicBlock &bb : f)
    for (llvm::Instruction &i : bb)
      if (auto *call = llvm::dyn_cast<llvm::CallInst>(&i))
        if (auto *ia = llvm::dyn_cast<llvm::InlineAsm>(call->getCalledOperand());
            ia && ia->getAsmString() == kGridDependencyWaitAsm)
          waits.push_back(call);
  return waits;
}

} // namespace mlir::tessera::llvmir

#endif // TESSERA_LIB_LLVMIR_TRANSFORMS_KERNELLOOKUP_H
