//===- SkipProgramsPastTheEnd.cpp - no work for programs past the grid ----===//
//
// Implements
// `tessera-skip-programs-past-the-end<kernel=K;threads-per-program=T>`, for
// kernels whose programs share CTAs (tile.programs_per_cta, see
// convert-tile-to-loops): the last CTA along x holds programs past the end of
// the grid when the programs per CTA do not divide it. After the wait for the
// prerequisite grids (tessera-grid-dependency-wait's entry block, which must
// run first), a program ctaid.x * (ntid.x / T) + tid.x / T at or past the
// number of programs along x (the kernel's last parameter, i32, which the
// launcher appends) returns at once, instead of running the edge copy with
// every access masked (on an H200, a chain of two-program kernels took
// 0.99 us per launch with six such programs running beside them).
//
// A kernel without that entry block (one ending in an unconditional branch)
// or without an i32 last parameter is an error, and is left unchanged.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/Support/MathExtras.h"

using namespace llvm;

PreservedAnalyses mlir::tessera::llvmir::SkipProgramsPastTheEndPass::run(
    Module &m, ModuleAnalysisManager &) {
  constexpr StringLiteral pass = "tessera-skip-programs-past-the-end";
  Function *f = findKernel(m, kernel, pass);
  if (!f)
    return PreservedAnalyses::all();
  LLVMContext &c = m.getContext();
  if (!isPowerOf2_32(threadsPerProgram)) {
    c.emitError(Twine(pass) +
                ": threads-per-program must be a power of two, "
                "got " +
                Twine(threadsPerProgram));
    return PreservedAnalyses::all();
  }
  auto *wait = dyn_cast<BranchInst>(f->getEntryBlock().getTerminator());
  if (!wait || wait->isConditional() || f->arg_empty() ||
      !f->getArg(f->arg_size() - 1)->getType()->isIntegerTy(32)) {
    c.emitError(Twine(pass) + ": kernel '" + kernel +
                "' needs an entry block that ends in an unconditional branch "
                "(run tessera-grid-dependency-wait first) and the program "
                "count as its last parameter (i32)");
    return PreservedAnalyses::all();
  }
  BasicBlock *past = BasicBlock::Create(c, "program_past_the_end", f);
  ReturnInst::Create(c, past);
  // The program id and the count are read before the wait (the inline asm, a
  // memory clobber that the parameter load cannot cross), so that only the
  // branch follows it on the path from the end of the prerequisite grids to
  // this program's work.
  Instruction *first = &*f->getEntryBlock().getFirstNonPHIOrDbgOrAlloca();
  IRBuilder<> b(first);
  const unsigned tLog2 = Log2_32(threadsPerProgram);
  Value *cta = b.CreateIntrinsic(b.getInt32Ty(),
                                 Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
  Value *ntid = b.CreateIntrinsic(b.getInt32Ty(),
                                  Intrinsic::nvvm_read_ptx_sreg_ntid_x, {});
  Value *tid = b.CreateIntrinsic(b.getInt32Ty(),
                                 Intrinsic::nvvm_read_ptx_sreg_tid_x, {});
  Value *program = b.CreateAdd(b.CreateMul(cta, b.CreateLShr(ntid, tLog2)),
                               b.CreateLShr(tid, tLog2));
  Value *inside = b.CreateICmpULT(program, f->getArg(f->arg_size() - 1));
  b.SetInsertPoint(wait);
  b.CreateCondBr(inside, wait->getSuccessor(0), past);
  wait->eraseFromParent();
  return PreservedAnalyses::none();
}
