// bf16_widening.cpp: a bf16 is the upper half of the f32 of the same value, so widening one is a
// 16-bit shift of its bits (what ptxas makes of cvt.f32.bf16 too, NaN payloads included). A
// kernel reads bf16 in 16-byte vectors of 32-bit words; after optimization each element is
// `fpext (extractelement (bitcast <N x i32> %w to <2N x bfloat>), k)`, which NVPTX emits as a
// split of the word into two 16-bit registers and one cvt.f32.bf16 each, and ptxas as a PRMT and
// a shift for the upper element and a shift for the lower: three instructions per pair. Taken
// from the word itself, the lower element is `shl %w_j, 16` and the upper `and %w_j, 0xffff0000`:
// two per pair, bit for bit the same. Other bf16 extensions are left alone.
// Assumes a little-endian target (NVPTX): element 2j of the bf16 vector is the low half of word j.
// Runs after the optimizer, on the kernel's final IR.
#include "compiler/bf16_widening.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace tessera::detail {

int widen_bf16_pairs(llvm::Module& m, const std::string& symbol) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f || f->empty()) return 0;
  llvm::SmallVector<llvm::FPExtInst*> widened;
  for (llvm::BasicBlock& bb : *f)
    for (llvm::Instruction& i : bb)
      if (auto* ext = llvm::dyn_cast<llvm::FPExtInst>(&i);
          ext && ext->getSrcTy()->isBFloatTy() && ext->getDestTy()->isFloatTy())
        widened.push_back(ext);
  int rewritten = 0;
  for (llvm::FPExtInst* ext : widened) {
    auto* element = llvm::dyn_cast<llvm::ExtractElementInst>(ext->getOperand(0));
    if (!element) continue;
    auto* index = llvm::dyn_cast<llvm::ConstantInt>(element->getIndexOperand());
    auto* pairs = llvm::dyn_cast<llvm::BitCastInst>(element->getVectorOperand());
    if (!index || !pairs) continue;
    auto* words = llvm::dyn_cast<llvm::FixedVectorType>(pairs->getSrcTy());
    if (!words || !words->getElementType()->isIntegerTy(32)) continue;
    const std::uint64_t k = index->getZExtValue();
    if (k >= 2 * words->getNumElements()) continue;
    llvm::IRBuilder<> ir(ext);
    llvm::Value* word = ir.CreateExtractElement(pairs->getOperand(0), ir.getInt64(k / 2));
    llvm::Value* bits = k % 2 ? ir.CreateAnd(word, ir.getInt32(0xffff0000u)) : ir.CreateShl(word, 16);
    ext->replaceAllUsesWith(ir.CreateBitCast(bits, ir.getFloatTy()));
    ext->eraseFromParent();
    if (element->use_empty()) element->eraseFromParent();
    if (pairs->use_empty()) pairs->eraseFromParent();
    ++rewritten;
  }
  return rewritten;
}

}  // namespace tessera::detail
