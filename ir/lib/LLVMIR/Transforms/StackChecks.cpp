//===- StackChecks.cpp - measured and probed stack frames -----------------===//
//
// Implements `tessera-stack-checks`, for the CPU target just before code
// generation: every defined function gets "warn-stack-size"="0", so that the
// code generator reports each frame it lays out (a DiagnosticInfoStackSize,
// which the JIT adds up to size a program's stack), and
// "probe-stack"="inline-asm", so that a frame that still overruns its
// thread's stack faults on the guard page instead of writing past it.
//
//===----------------------------------------------------------------------===//

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/Module.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::StackChecksPass::run(Module &m,
                                            ModuleAnalysisManager &) {
  bool changed = false;
  for (Function &f : m) {
    if (f.isDeclaration())
      continue;
    f.addFnAttr("warn-stack-size", "0");
    f.addFnAttr("probe-stack", "inline-asm");
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
