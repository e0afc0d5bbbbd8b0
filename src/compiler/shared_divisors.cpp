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
//   result_i = a_i == 0 ? q_i : c_i  (the sign of a zero quotient)
//
// which is exact when y is the correctly rounded reciprocal and nothing underflows or overflows:
// guaranteed for 2^-24 <= |b| <= 2^24 and 2^-76 <= |q_i| <= 2^76 (then |a_i| >= 2^-100 and the
// residual r_i is a representable float). If b or any q_i (a_i != 0) is out of that range, or NaN,
// one branch for the whole group takes the plain divisions instead. Checked bit for bit against
// IEEE division on the host (every significand of b in [1, 2) against 70 numerators, and 7e8
// random pairs over the guarded range with signed zeros) and on the GPU by tests/unit.
// The test and branch cover up to 32 divisions at once (their numerators and quotients are live
// together): measured on the H200 (benchmarks/results/...-experiments-session6.log, run 8), the
// accurate softmax over 8192-wide bf16 rows ran 3.22 TB/s with div.rn, 2.49 with a test and
// branch per division, 3.34 per 8, 3.42 per 16 and 3.45 per 32.
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

// One chunk of a group: the refined quotients at its first division, one test, and the plain
// divisions on a branch taken only when the test fails.
void rewrite_chunk(llvm::ArrayRef<llvm::BinaryOperator*> chunk, const Reciprocal& rcp) {
  llvm::BinaryOperator* first = chunk.front();
  llvm::Value* b = first->getOperand(1);
  llvm::IRBuilder<> ir(first);
  llvm::Type* f32 = ir.getFloatTy();
  auto c = [&](float v) { return llvm::ConstantFP::get(f32, v); };
  llvm::Value* ok = rcp.ok;
  llvm::SmallVector<llvm::Value*> fast;
  for (llvm::BinaryOperator* div : chunk) {
    llvm::Value* a = div->getOperand(0);
    llvm::Value* q = ir.CreateFMul(a, rcp.y);
    llvm::Value* r = ir.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {ir.CreateFNeg(q), b, a});
    llvm::Value* refined = ir.CreateIntrinsic(llvm::Intrinsic::fma, {f32}, {r, rcp.y, q});
    llvm::Value* zero = ir.CreateFCmpOEQ(a, c(0.0f));
    fast.push_back(ir.CreateSelect(zero, q, refined));
    llvm::Value* abs_q = ir.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, q);
    llvm::Value* in_range = ir.CreateAnd(ir.CreateFCmpOGE(abs_q, c(0x1p-76f)), ir.CreateFCmpOLE(abs_q, c(0x1p76f)));
    ok = ir.CreateAnd(ok, ir.CreateOr(zero, in_range));
  }
  // if (!ok) { the plain divisions }: the chunk's results are phis after the branch.
  llvm::Instruction* slow_end = llvm::SplitBlockAndInsertIfThen(ir.CreateNot(ok), first, /*Unreachable=*/false);
  llvm::BasicBlock* slow = slow_end->getParent();
  llvm::BasicBlock* join = first->getParent();
  llvm::BasicBlock* fast_block = slow->getSinglePredecessor();
  ir.SetInsertPoint(slow_end);
  llvm::IRBuilder<> at_join(&join->front());
  for (auto [div, quick] : llvm::zip(chunk, fast)) {
    llvm::Value* plain = ir.CreateFDiv(div->getOperand(0), b);
    llvm::PHINode* phi = at_join.CreatePHI(f32, 2);
    phi->addIncoming(quick, fast_block);
    phi->addIncoming(plain, slow);
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
