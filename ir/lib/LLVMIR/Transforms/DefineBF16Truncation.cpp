//===- DefineBF16Truncation.cpp - __truncsfbf2 for CPU kernels ------------===//
//
// Implements `tessera-define-bf16-truncation`: defines
// `bfloat __truncsfbf2(float)` (f32 -> bf16, round to nearest even, NaN to a
// quiet NaN: as float_to_bf16_bits in dtype.h) in a CPU kernel's module. x86
// without AVX512-BF16 holds bf16 values in registers (a bf16 scalar
// parameter, a select or loop phi of bf16 scalars) promoted to f32 and
// truncates them back with a call to __truncsfbf2, which compiler-rt and
// libgcc 13 define but older libgccs (Debian 12's) do not: the JIT then failed
// to link such kernels ("Symbols not found: [ __truncsfbf2 ]"). The module's
// own definition is found first. A module that defines it already is left
// alone; one that declares it with another type is an error.
//
//===----------------------------------------------------------------------===//

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

PreservedAnalyses
mlir::tessera::llvmir::DefineBF16TruncationPass::run(Module &m,
                                                     ModuleAnalysisManager &) {
  constexpr StringLiteral name = "__truncsfbf2";
  LLVMContext &c = m.getContext();
  auto *i32 = Type::getInt32Ty(c);
  auto *ty =
      FunctionType::get(Type::getBFloatTy(c), {Type::getFloatTy(c)}, false);
  Function *f = m.getFunction(name);
  if (f && f->getFunctionType() != ty) {
    std::string type;
    raw_string_ostream os(type);
    f->getFunctionType()->print(os);
    c.emitError(Twine("tessera-define-bf16-truncation: '") + name +
                "' has type " + type + ", expected bfloat (float)");
    return PreservedAnalyses::all();
  }
  if (f && !f->isDeclaration())
    return PreservedAnalyses::all();
  if (!f)
    f = Function::Create(ty, Function::ExternalLinkage, name, m);
  IRBuilder<> b(BasicBlock::Create(c, "entry", f));
  Value *x = b.CreateBitCast(f->getArg(0), i32);
  Value *high = b.CreateLShr(x, 16);
  Value *bias =
      b.CreateAdd(b.CreateAnd(high, 1), ConstantInt::get(i32, 0x7fff));
  Value *rounded = b.CreateLShr(b.CreateAdd(x, bias), 16);
  Value *nan = b.CreateICmpUGT(b.CreateAnd(x, 0x7fffffff),
                               ConstantInt::get(i32, 0x7f800000));
  Value *bits = b.CreateSelect(nan, b.CreateOr(high, 0x40), rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(bits, Type::getInt16Ty(c)),
                              Type::getBFloatTy(c)));
  return PreservedAnalyses::none();
}
