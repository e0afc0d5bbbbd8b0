//===- RewidenAfterReduce.cpp - widen bf16 tiles again after a reduce -----===//
//
// Implements `tile-rewiden-after-reduce`. A kernel like RMSNorm widens its
// bf16 row to f32 (`arith.extf`), reduces it, and uses the widened row again
// after the reduction. Each thread then holds its elements as f32 across the
// reduction's exchange: twice the registers of the loaded bf16 values. Over
// long rows that decides the occupancy (a 1 x 32768 row at 512 threads: 64
// f32 per thread, one program per SM).
//
// For each `arith.extf` of a bf16 tile that has users after a `tile.reduce`
// of its block (the first such reduce after it), this pass inserts a copy of
// the extf, marked `tile.rewiden`, just before the first of those users, and
// makes every user after that reduce use the copy. The bf16 tile is then what
// lives across the reduction; the f32 values are made twice. An extf whose
// users all follow the reduce is moved down to the first of them instead.
//
// Only the form of the copy keeps the two apart: CSE would merge two plain
// extf ops, and ptxas two identical conversions. On gpu, convert-tile-to-loops
// widens each element of a `tile.rewiden` extf from its bf16 value passed
// through `llvm.arithmetic.fence` (no instruction, but not the same value for
// CSE): `cvt.f32.bf16` in the PTX, while the first widening of loaded bf16
// pairs is a shift or a mask of their word (tessera-widen-bf16-pairs, in
// lib/LLVMIR/Transforms/WidenBF16Pairs.cpp).
// f16 tiles are left alone: both widenings would be the same `cvt.f32.f16`.
// A copy is not copied again at a later reduce (a second fenced copy would be
// merged with the first).
//
// Only the extf's block is considered (ops nested in a later op of the block
// count as users after the reduce); reduces inside nested regions are not.
// A kernel it changed is marked `tile.rewidened`. The launcher compiles a
// kernel this way as a variant, for kernels that leave an SM half empty, and
// keeps it if it fits more programs per SM.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#define DEBUG_TYPE "tile-rewiden-after-reduce"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEREWIDENAFTERREDUCE
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// An extf of a bf16 tile to f32, not already a copy made by this pass.
bool isCandidate(arith::ExtFOp ext) {
  return tt::isRewidenable(ext) && !ext->hasAttr(tt::TileDialect::getRewidenAttrName());
}

/// Copies `ext` after the first reduce of its block that some of its users
/// follow, for those users; returns whether it changed anything.
bool rewiden(arith::ExtFOp ext) {
  Block *block = ext->getBlock();
  // The users' ops in the block, in block order.
  SmallVector<std::pair<Operation *, OpOperand *>> uses;
  for (OpOperand &use : ext->getUses())
    if (Operation *op = block->findAncestorOpInBlock(*use.getOwner()))
      uses.push_back({op, &use});
  if (uses.empty())
    return false;
  llvm::sort(uses, [](auto &a, auto &b) {
    return a.first != b.first && a.first->isBeforeInBlock(b.first);
  });
  Operation *last = uses.back().first;
  tt::ReduceOp reduce;
  for (Operation *op = ext->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (auto r = dyn_cast<tt::ReduceOp>(op)) {
      reduce = r;
      break;
    }
  if (!reduce)
    return false;
  Operation *first = nullptr;
  for (auto [op, use] : uses)
    if (reduce->isBeforeInBlock(op)) {
      first = op;
      break;
    }
  // No user before the reduce: moving the extf down is enough.
  if (reduce->isBeforeInBlock(uses.front().first)) {
    ext->moveBefore(first);
    return true;
  }
  OpBuilder b(first);
  auto copy = cast<arith::ExtFOp>(b.clone(*ext));
  copy->setAttr(tt::TileDialect::getRewidenAttrName(), b.getUnitAttr());
  for (auto [op, use] : uses)
    if (reduce->isBeforeInBlock(op))
      use->set(copy.getResult());
  return true;
}

struct TileRewidenAfterReduce
    : public tt::impl::TileRewidenAfterReduceBase<TileRewidenAfterReduce> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return;
      SmallVector<arith::ExtFOp> candidates;
      fn.walk([&](arith::ExtFOp ext) {
        if (isCandidate(ext))
          candidates.push_back(ext);
      });
      bool changed = false;
      for (arith::ExtFOp ext : candidates)
        changed |= rewiden(ext);
      if (changed)
        fn->setAttr(tt::TileDialect::getRewidenedAttrName(),
                    UnitAttr::get(fn.getContext()));
    });
  }
};

} // namespace
