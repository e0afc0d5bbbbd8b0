//===- PackedWrapper.cpp - one entry signature for CPU kernels ------------===//
//
// Implements `tessera-packed-wrapper<kernel=K>`: adds
// `void K_packed(ptr argv)`, which loads each parameter i of K from the
// pointer in argv[i] and calls K. The CPU launcher calls every kernel through
// this one signature (the argument vector of pipeline.h's CpuKernel::run).
// Assumes the module has no K_packed yet.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::PackedWrapperPass::run(Module &m,
                                              ModuleAnalysisManager &) {
  constexpr StringLiteral pass = "tessera-packed-wrapper";
  Function *f = findKernel(m, kernel, pass);
  if (!f)
    return PreservedAnalyses::all();
  const std::string name = kernel + "_packed";
  if (m.getNamedValue(name)) {
    m.getContext().emitError(Twine(pass) + ": the module already has '" + name +
                             "'");
    return PreservedAnalyses::all();
  }
  LLVMContext &c = m.getContext();
  auto *ptr = PointerType::getUnqual(c);
  auto *wrapperType = FunctionType::get(Type::getVoidTy(c), {ptr}, false);
  auto *w = Function::Create(wrapperType, Function::ExternalLinkage, name, m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", w));
  SmallVector<Value *> args;
  for (Argument &a : f->args()) {
    Value *slot = b.CreateConstGEP1_64(ptr, w->getArg(0), a.getArgNo());
    Value *p = b.CreateLoad(ptr, slot);
    args.push_back(b.CreateLoad(a.getType(), p));
  }
  b.CreateCall(f, args);
  b.CreateRetVoid();
  return PreservedAnalyses::none();
}
