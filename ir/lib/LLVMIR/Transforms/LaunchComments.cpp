//===- LaunchComments.cpp - the CTA mapping written into the PTX ----------===//
//
// Implements `tessera-launch-comments<ctas-per-program=S;programs-per-cta=G;
// dynamic-shared-bytes=N>`: appends to the module's inline asm, which NVPTX
// copies into the PTX, one comment line per value that differs from one
// program per CTA and no dynamic shared memory:
//   // tessera.ctas_per_program S       (S > 1)
//   // tessera.programs_per_cta G       (G > 1)
//   // tessera.dynamic_shared_bytes N   (N > 0)
// They are for readers of the PTX (and the raw-driver benchmarks); the
// launcher takes these values from the compile's result, or from the record
// stored beside a cached cubin, never from the comments.
//
//===----------------------------------------------------------------------===//

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/Module.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::LaunchCommentsPass::run(Module &m,
                                               ModuleAnalysisManager &) {
  bool changed = false;
  auto append = [&](StringLiteral comment, int value) {
    m.appendModuleInlineAsm((comment + " " + Twine(value)).str());
    changed = true;
  };
  if (shape.ctasPerProgram > 1)
    append(kCtasPerProgramComment, shape.ctasPerProgram);
  if (shape.programsPerCta > 1)
    append(kProgramsPerCtaComment, shape.programsPerCta);
  if (shape.dynamicSharedBytes > 0)
    append(kDynamicSharedBytesComment, shape.dynamicSharedBytes);
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
