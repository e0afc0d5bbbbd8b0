//===- ShareDivisors.cpp - one reciprocal for many divisions --------------===//
//
// Implements `tessera-share-divisors<kernel=K>`, run on the kernel's final IR
// after the optimizer (which would merge the divisions back). A row kernel
// divides every element of its row by one value (softmax by the sum of
// exponentials, a normalization by a norm): after optimization a thread holds
// tens of `fdiv float %a_i, %b` with the same %b. NVPTX emits each as
// div.rn.f32, which ptxas expands into a reciprocal of %b (MUFU.RCP and two
// fma), three fma for the quotient, a range check (FCHK) and a branch to a
// slow path, each in its own convergence region: the reciprocal is recomputed
// per element and the elements cannot overlap. For a group of four or more
// such divisions in one block whose numerators are all computed before the
// first of them, this computes at the first one
//
//   y = 1 / b                        correctly rounded (rcp.rn.f32)
//   q_i = a_i * y                    within one ulp of a_i / b
//   r_i = fma(-q_i, b, a_i)          exact
//   c_i = fma(r_i, y, q_i)           a_i / b correctly rounded (Markstein)
//
// which is exact when y is the correctly rounded reciprocal and nothing
// underflows or overflows: guaranteed for 2^-24 <= |b| <= 2^24 and
// 2^-52 <= |a_i| <= 2^52 (then 2^-76 <= |q_i| <= 2^76, |a_i| >= 2^-100 and
// the residual r_i is a representable float). The test comes first: the
// smallest and largest |a_i| of a chunk (one min and one max per division, NaN
// failing) and b's range; if it fails (zeros, NaN, huge or tiny numerators, or
// such a divisor), the chunk takes the plain divisions instead, so a zero
// quotient keeps its sign from IEEE division. The refinement was checked bit
// for bit against IEEE division on the host over a wider range (every
// significand of b in [1, 2) against 70 numerators, and 7e8 random pairs with
// 2^-76 <= |q_i| <= 2^76) and is checked on the GPU by tests/unit.
//
// The test and branch cover up to 32 divisions at once: measured on the H200,
// the accurate softmax over 8192-wide bf16 rows ran 3.22 TB/s with div.rn,
// 2.49 with a test and branch per division, 3.34 per 8, 3.42 per 16 and 3.45
// per 32 (with the test on the quotients, after them).
//
//===----------------------------------------------------------------------===//

#include "KernelLookup.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

#include <vector>

using namespace llvm;

namespace {

constexpr std::size_t kMinGroup = 4;
constexpr std::size_t kChunk = 32;

bool isIEEEF32Division(const Instruction &i) {
  const auto *op = dyn_cast<BinaryOperator>(&i);
  return op && op->getOpcode() == Instruction::FDiv &&
         op->getType()->isFloatTy() && !op->hasApproxFunc() &&
         !op->hasAllowReciprocal();
}

/// The reciprocal of a group's divisor and its range test, at the group's
/// first division.
struct Reciprocal {
  Value *y;
  Value *ok;
};

Reciprocal reciprocalAt(BinaryOperator *first) {
  IRBuilder<> ir(first);
  Type *f32 = ir.getFloatTy();
  Value *b = first->getOperand(1);
  Value *absB = ir.CreateUnaryIntrinsic(Intrinsic::fabs, b);
  return {ir.CreateFDiv(ConstantFP::get(f32, 1.0), b, "recip"),
          ir.CreateAnd(ir.CreateFCmpOGE(absB, ConstantFP::get(f32, 0x1p-24f)),
                       ir.CreateFCmpOLE(absB, ConstantFP::get(f32, 0x1p24f)))};
}

/// The smallest or largest of `values` by `pick`, as a balanced tree (no
/// chain through the chunk).
Value *reduceTree(IRBuilder<> &ir, Intrinsic::ID pick,
                  SmallVector<Value *> values) {
  while (values.size() > 1) {
    SmallVector<Value *> next;
    for (std::size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(ir.CreateBinaryIntrinsic(pick, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

/// One chunk of a group: one test of its numerators before its first
/// division, then either the refined quotients or the plain divisions, joined
/// by phis. Testing the numerators (rather than the quotients, which would
/// need the numerators kept for the fallback) lets each numerator die at its
/// quotient.
void rewriteChunk(ArrayRef<BinaryOperator *> chunk, const Reciprocal &rcp) {
  BinaryOperator *first = chunk.front();
  Value *b = first->getOperand(1);
  IRBuilder<> ir(first);
  Type *f32 = ir.getFloatTy();
  auto c = [&](float v) { return ConstantFP::get(f32, v); };
  SmallVector<Value *> magnitudes;
  for (BinaryOperator *div : chunk)
    magnitudes.push_back(
        ir.CreateUnaryIntrinsic(Intrinsic::fabs, div->getOperand(0)));
  // minnum ignores a NaN, maximum propagates it (and then fails the test).
  Value *smallest = reduceTree(ir, Intrinsic::minnum, magnitudes);
  Value *largest = reduceTree(ir, Intrinsic::maximum, magnitudes);
  Value *ok =
      ir.CreateAnd(rcp.ok, ir.CreateAnd(ir.CreateFCmpOGE(smallest, c(0x1p-52f)),
                                        ir.CreateFCmpOLE(largest, c(0x1p52f))));
  Instruction *fastEnd = nullptr;
  Instruction *slowEnd = nullptr;
  SplitBlockAndInsertIfThenElse(ok, first, &fastEnd, &slowEnd);
  BasicBlock *join = first->getParent();
  IRBuilder<> fast(fastEnd), slow(slowEnd), atJoin(&join->front());
  for (BinaryOperator *div : chunk) {
    Value *a = div->getOperand(0);
    Value *q = fast.CreateFMul(a, rcp.y);
    Value *r =
        fast.CreateIntrinsic(Intrinsic::fma, {f32}, {fast.CreateFNeg(q), b, a});
    Value *refined = fast.CreateIntrinsic(Intrinsic::fma, {f32}, {r, rcp.y, q});
    Value *plain = slow.CreateFDiv(a, b);
    PHINode *phi = atJoin.CreatePHI(f32, 2);
    phi->addIncoming(refined, fastEnd->getParent());
    phi->addIncoming(plain, slowEnd->getParent());
    div->replaceAllUsesWith(phi);
  }
  for (BinaryOperator *div : chunk)
    div->eraseFromParent();
}

} // namespace

PreservedAnalyses
mlir::tessera::llvmir::ShareDivisorsPass::run(Module &m,
                                              ModuleAnalysisManager &) {
  Function *f = findKernel(m, kernel, "tessera-share-divisors");
  if (!f)
    return PreservedAnalyses::all();
  MapVector<std::pair<BasicBlock *, Value *>, SmallVector<BinaryOperator *>>
      groups;
  for (BasicBlock &bb : *f)
    for (Instruction &i : bb)
      if (isIEEEF32Division(i))
        groups[{&bb, i.getOperand(1)}].push_back(cast<BinaryOperator>(&i));
  DominatorTree dom(*f);
  // Chunks of up to kChunk divisions (the numerators and quotients of a chunk
  // are live together) whose numerators are computed before the chunk's first
  // division.
  struct Plan {
    BinaryOperator *first;
    SmallVector<SmallVector<BinaryOperator *>> chunks;
  };
  std::vector<Plan> plans;
  for (auto &[key, group] : groups) {
    if (group.size() < kMinGroup)
      continue;
    Plan plan{group.front(), {}}; // block order: the group's first division
    for (std::size_t at = 0; at < group.size(); at += kChunk) {
      ArrayRef<BinaryOperator *> chunk =
          ArrayRef(group).slice(at, std::min(kChunk, group.size() - at));
      bool available = all_of(chunk, [&](BinaryOperator *d) {
        auto *a = dyn_cast<Instruction>(d->getOperand(0));
        return !a || (a != chunk.front() && dom.dominates(a, chunk.front()));
      });
      if (available)
        plan.chunks.emplace_back(chunk.begin(), chunk.end());
    }
    if (!plan.chunks.empty())
      plans.push_back(std::move(plan));
  }
  // Rewriting splits blocks: every plan is made before the first rewrite.
  for (Plan &plan : plans) {
    Reciprocal rcp = reciprocalAt(plan.first);
    for (auto &chunk : plan.chunks)
      rewriteChunk(chunk, rcp);
  }
  return plans.empty() ? PreservedAnalyses::all() : PreservedAnalyses::none();
}
