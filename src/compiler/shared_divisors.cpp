// shared_divisors.cpp: a row kernel divides every element of its row by one value (softmax by the
// sum of exponentials, a normalization by a norm): after optimization a thread holds tens of
// `fdiv float %a_i, %b` with the same %b. NVPTX emits each as div.rn.f32, which ptxas expands into
// a reciprocal of %b (MUFU.RCP and two fma), three fma for the quotient, a range check (FCHK) and
// a branch to a slow path, each in its own convergence region: the reciprocal is recomputed per
// element and the elements cannot overlap. For a group of four or more such divisions in one block
// whose numerators are all computed before the first of them, this computes at the first one
//
//   y = 1 / b                        correctly rounded (rcp.rn.f32)
//   q_i = a_i * y                    within one ulp of a_i / b
//   r_i = fma(-q_i, b, a_i)          exact
//   c_i = fma(r_i, y, q_i)           a_i / b correctly rounded (Markstein's theorem)
//
// which is exact when y is the correctly rounded reciprocal and nothing underflows or overflows:
// guaranteed for 2^-24 <= |b| <= 2^24 and 2^-52 <= |a_i| <= 2^52 (then 2^-76 <= |q_i| <= 2^76,
// |a_i| >= 2^-100 and the residual r_i is a representable float). The test comes first: the
// smallest and largest |a_i| of a chunk (one min and one max per division, NaN failing) and b's
// range; if it fails (zeros, NaN, huge or tiny numerators, or such a divisor), the chunk takes the
// plain divisions instead, so a zero quotient keeps its sign from IEEE division. The refinement
// was checked bit for bit against IEEE division on the host over a wider range (every significand
// of b in [1, 2) against 70 numerators, and 7e8 random pairs with 2^-76 <= |q_i| <= 2^76) and is
// checked on the GPU by tests/unit.
// The test and branch cover up to 32 divisions at once: measured on the H200, the accurate softmax over 8192-wide
// bf16 rows ran 3.22 TB/s with div.rn, 2.49 with a test and branch per division, 3.34 per 8, 3.42
// per 16 and 3.45 per 32 (with the test on the quotients, after them).
// Runs after the optimizer, on the kernel's final IR (nothing merges the divisions back).
#include "compiler/shared_divisors.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"

namespace tessera::detail {

namespace {

constexpr std::size_t kMinGroup = 4;
constexpr std::size_t kChunk = 32;

bool is_ieee_f32_division(const llvm::Instruction& i) {
  const auto* op = llvm::dyn_cast<llvm::BinaryOperator>(&i);
  return op && op->getOpcode() == llvm::Instruction::FDiv && op->getType()->isFloatTy() && !op->hasApproxFunc() &&
         !op->hasAllowReciprocal();
}

// The reciprocal of the group's divisor and its range test, at the group's first division.
struct Reciprocal {
  llvm::Value* y;
  llvm::Value* ok;
};

Reciprocal reciprocal_at(llvm::BinaryOperator* first) {
  llvm::IRBuilder<> ir(first);
  llvm::Type* f32 = ir.getFloatTy();
  llvm::Value* b = first->getOperand(1);
  llvm::Value* abs_b = ir.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, b);
  return {ir.CreateFDiv(llvm::ConstantFP::get(f32, 1.0), b, "recip"),
          ir.CreateAnd(ir.CreateFCmpOGE(abs_b, llvm::ConstantFP::get(f32, 0x1p-24f)),
                       ir.CreateFCmpOLE(abs_b, llvm::ConstantFP::get(f32, 0x1p24f)))};
}

// The smallest or largest of `values` by `pick`, as a balanced tree (no chain through the chunk).
llvm::Value* reduce_tree(llvm::IRBuilder<>& ir, llvm::Intrinsic::ID pick, llvm::SmallVector<llvm::Value*> values) {
  while (values.size() > 1) {
    llvm::SmallVector<llvm::Value*> next;
    for (std::size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(ir.CreateBinaryIntrinsic(pick, values[i], values[i + 1]));
    if (values.size() % 2) next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

// One chunk of a group: one test of its numerators before its first division, then either the
// refined quotients or the plain divisions, joined by phis. Testing the numerators (rather than
// the quotients, which would need the numerators kept for the fallback) lets each numerator die
// at its quotient.
void rewrite_chunk(llvm::ArrayRef<llvm::BinaryOperator*> chunk, const Reciprocal& rcp) {
  llvm::BinaryOperator* first = chunk.front();
  llvm::Value* b = first->getOperand(1);
  llvm::IRBuilder<> ir(first);
  llvm::Type* f32 = ir.getFloatTy();
  auto c = [&](float v) { return llvm::ConstantFP::get(f32, v); };
  llvm::SmallVector<llvm::Value*> magnitudes;
  for (llvm::BinaryOperator* div : chunk)
    magnitudes.push_back(ir.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, div->getOperand(0)));
  // minnum ignores a NaN, maximum propagates it (and then fails the test).
  llvm::Value* smallest = reduce_tree(ir, llvm::Intrinsic::minnum, magnitudes);
  llvm::Value* largest = reduce_tree(ir, llvm::Intrinsic::maximum, magnitudes);
  llvm::Value* ok = ir.CreateAnd(rcp.ok, ir.CreateAnd(ir.CreateFCmpOGE(smallest, c(0x1p-52f)),
                                                     ir.CreateFCmpOLE(largest, c(0x1p52f))));
  llvm::Instruction* fast_end = nullptr;
  llvm::Instruction* slow_end = nullptr;
  llvm::SplitBlockAndInsertIfThenElse(ok, first, &fast_end, &slow_end);
  llvm::BasicBlock* join = first->getParent();
  llvm::IRBuilder<> fast(fast_end), slow(slow_end), at_join(&join->front());
  for (llvm::BinaryOperator* div : chunk) {
    llvm::Value* a = div->getOperand(0);
    llvm::Value* q = fast.CreateFMul(a, rcp.y);
    llvm::Value* r = fast.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {fast.CreateFNeg(q), b, a});
    llvm::Value* refined = fast.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {r, rcp.y, q});
    llvm::Value* plain = slow.CreateFDiv(a, b);
    llvm::PHINode* phi = at_join.CreatePHI(f32, 2);
    phi->addIncoming(refined, fast_end->getParent());
    phi->addIncoming(plain, slow_end->getParent());
    div->replaceAllUsesWith(phi);
  }
  for (llvm::BinaryOperator* div : chunk) div->eraseFromParent();
}

}  // namespace

int share_divisors(llvm::Module& m, const std::string& symbol) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f || f->empty()) return 0;
  llvm::MapVector<std::pair<llvm::BasicBlock*, llvm::Value*>, llvm::SmallVector<llvm::BinaryOperator*>> groups;
  for (llvm::BasicBlock& bb : *f)
    for (llvm::Instruction& i : bb)
      if (is_ieee_f32_division(i))
        groups[{&bb, i.getOperand(1)}].push_back(llvm::cast<llvm::BinaryOperator>(&i));
  llvm::DominatorTree dom(*f);
  // Chunks of up to kChunk divisions (the numerators and quotients of a chunk are live together)
  // whose numerators are computed before the chunk's first division.
  struct Plan {
    llvm::BinaryOperator* first;
    llvm::SmallVector<llvm::SmallVector<llvm::BinaryOperator*>> chunks;
  };
  std::vector<Plan> plans;
  int rewritten = 0;
  for (auto& [key, group] : groups) {
    if (group.size() < kMinGroup) continue;
    Plan plan{group.front(), {}};  // block order: the group's first division
    for (std::size_t at = 0; at < group.size(); at += kChunk) {
      llvm::ArrayRef<llvm::BinaryOperator*> chunk =
          llvm::ArrayRef(group).slice(at, std::min(kChunk, group.size() - at));
      bool available = llvm::all_of(chunk, [&](llvm::BinaryOperator* d) {
        auto* a = llvm::dyn_cast<llvm::Instruction>(d->getOperand(0));
        return !a || (a != chunk.front() && dom.dominates(a, chunk.front()));
      });
      if (available) plan.chunks.emplace_back(chunk.begin(), chunk.end());
    }
    if (!plan.chunks.empty()) plans.push_back(std::move(plan));
  }
  // Rewriting splits blocks: every plan is made before the first rewrite.
  for (Plan& plan : plans) {
    Reciprocal rcp = reciprocal_at(plan.first);
    for (auto& chunk : plan.chunks) {
      rewrite_chunk(chunk, rcp);
      rewritten += static_cast<int>(chunk.size());
    }
  }
  return rewritten;
}

}  // namespace tessera::detail
