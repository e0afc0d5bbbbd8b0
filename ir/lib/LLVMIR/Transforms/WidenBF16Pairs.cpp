//===- WidenBF16Pairs.cpp - bf16 pairs widened by one integer op ----------===//
//
// Implements `tessera-widen-bf16-pairs<kernel=K>`, run on the kernel's final
// IR after the optimizer. A bf16 is the upper half of the f32 of the same
// value, so widening one is a 16-bit shift of its bits (what ptxas makes of
// cvt.f32.bf16 too, NaN payloads included). A kernel reads bf16 in 16-byte
// vectors of 32-bit words; after optimization each element is
// `fpext (extractelement (bitcast <N x i32> %w to <2N x bfloat>), k)`, which
// NVPTX emits as a split of the word into two 16-bit registers and one
// cvt.f32.bf16 each, and ptxas as a PRMT and a shift for the upper element and
// a shift for the lower: three instructions per pair. Taken from the word
// itself, the lower element is `shl %w_j, 16` and the upper
// `and %w_j, 0xffff0000`: two per pair, bit for bit the same. Other bf16
// extensions are left alone.
// Assumes a little-endian target (NVPTX): element 2j of the bf16 vector is the
// low half of word j.
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::WidenBF16PairsPass::run(Module &m,
                                               ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-widen-bf16-pairs");
  if (!f)
    return PreservedAnalyses::all();
  SmallVector<FPExtInst *> widened;
  for (BasicBlock &bb : *f)
    for (Instruction &i : bb)
      if (auto *ext = dyn_cast<FPExtInst>(&i);
          ext && ext->getSrcTy()->isBFloatTy() && ext->getDestTy()->isFloatTy())
        widened.push_back(ext);
  bool changed = false;
  for (FPExtInst *ext : widened) {
    auto *element = dyn_cast<ExtractElementInst>(ext->getOperand(0));
    if (!element)
      continue;
    auto *index = dyn_cast<ConstantInt>(element->getIndexOperand());
    auto *pairs = dyn_cast<BitCastInst>(element->getVectorOperand());
    if (!index || !pairs)
      continue;
    auto *words = dyn_cast<FixedVectorType>(pairs->getSrcTy());
    if (!words || !words->getElementType()->isIntegerTy(32))
      continue;
    const uint64_t k = index->getZExtValue();
    if (k >= 2 * words->getNumElements())
      continue;
    IRBuilder<> ir(ext);
    Value *word =
        ir.CreateExtractElement(pairs->getOperand(0), ir.getInt64(k / 2));
    Value *bits = k % 2 ? ir.CreateAnd(word, ir.getInt32(0xffff0000u))
                        : ir.CreateShl(word, 16);
    ext->replaceAllUsesWith(ir.CreateBitCast(bits, ir.getFloatTy()));
    ext->eraseFromParent();
    if (element->use_empty())
      element->eraseFromParent();
    if (pairs->use_empty())
      pairs->eraseFromParent();
    changed = true;
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}
