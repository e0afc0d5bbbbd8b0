//===- SplitKLoop.cpp - a program's K loop shared by the CTAs of a cluster ===//
//
// Implements `tile-split-k-loop` (Transforms/Passes.td states what it
// guarantees and which kernels it takes). A batch-1 product whose output has
// few row tiles runs few programs, each walking a long row: on an H200 the
// 2560-row products of a Qwen3-4B layer are 160 or 320 programs for 132 SMs,
// and each program waits for its loads several times in turn. Sharing each
// program's K loop among the S CTAs of a cluster gives S times the CTAs, each
// a contiguous 1/S of the iterations; their partial sums meet once in
// distributed shared memory (tile.split_sum), and the first CTA alone runs
// what follows the loop.
//
// Only sums are split: each carried value starts at zero and is only ever
// added to, so the iterations' terms may be summed per CTA and the partial
// sums added afterwards (f32 reassociation is the only difference). Nothing
// before the loop writes memory (every CTA runs it), the loop writes none,
// and everything after the split_sum, stores included, runs in rank 0 only:
// an epilogue that reads its own output tile back (a residual add) reads it
// once, before its one write.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tile-split-k-loop"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILESPLITKLOOP
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True if `v` is an f32 tile of zeros: a splat constant or a tile.splat of
/// a zero constant.
bool isZeroTile(Value v) {
  if (matchPattern(v, m_AnyZeroFloat()))
    return true;
  auto splat = v.getDefiningOp<tt::SplatOp>();
  return splat && matchPattern(splat->getOperand(0), m_AnyZeroFloat());
}

/// True if `op`, an op without regions, may write memory (or has effects we
/// cannot see).
bool writesMemory(Operation *op) {
  return !isa<tt::LoadOp>(op) && !isMemoryEffectFree(op);
}

/// The K loop of `fn` if the kernel is one to split (see Passes.td), else
/// null.
scf::ForOp splittableLoop(func::FuncOp fn) {
  if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()) ||
      fn->hasAttr(tt::TileDialect::getSplitKAttrName()) ||
      fn.getBody().getBlocks().size() != 1)
    return {};
  Block &body = fn.getBody().front();
  scf::ForOp loop;
  for (Operation &op : body.without_terminator()) {
    if (auto forOp = dyn_cast<scf::ForOp>(op)) {
      if (loop)
        return {}; // one K loop only
      loop = forOp;
      continue;
    }
    if (op.getNumRegions() > 0 || isa<tt::SplitRankOp, tt::SplitSumOp>(op))
      return {};
    // Every CTA runs what precedes the loop: it may only read.
    if (!loop && writesMemory(&op))
      return {};
  }
  if (!loop || loop.getNumRegionIterArgs() == 0 ||
      body.getTerminator()->getNumOperands() != 0)
    return {};
  for (Operation &op : loop.getBody()->without_terminator())
    if (op.getNumRegions() > 0 || writesMemory(&op))
      return {};
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [arg, init, next] :
       llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs(),
                 yield.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.getElementType().isF32() || !isZeroTile(init))
      return {};
    // next = arg + term, read by the yield alone; arg read by that add alone.
    auto add = next.getDefiningOp<arith::AddFOp>();
    if (!add || add->getBlock() != loop.getBody() || !add->hasOneUse() ||
        !arg.hasOneUse() || (add.getLhs() != arg && add.getRhs() != arg))
      return {};
  }
  return loop;
}

/// Shares `loop`'s iterations among `ctas` CTAs and makes rank 0 alone run
/// what follows (see Passes.td).
void splitKernel(func::FuncOp fn, scf::ForOp loop, int64_t ctas) {
  Location loc = loop.getLoc();
  OpBuilder b(loop);
  auto index = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Folded as they are built: the usual loop (from 0, step 1) keeps only
  // n r / S.
  auto sub = [&](Value x, Value y) { return b.createOrFold<arith::SubIOp>(loc, x, y); };
  auto add = [&](Value x, Value y) { return b.createOrFold<arith::AddIOp>(loc, x, y); };
  auto mul = [&](Value x, Value y) { return b.createOrFold<arith::MulIOp>(loc, x, y); };
  Value rank32 = tt::SplitRankOp::create(b, loc, b.getI32Type());
  Value rank = index(rank32);
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  // n = max(0, ceil((ub - lb) / step)); the rank runs [n r / S, n (r+1) / S).
  Value trips = b.createOrFold<arith::MaxSIOp>(
      loc, constant(0),
      b.createOrFold<arith::CeilDivSIOp>(loc, sub(ub, lb), step));
  auto startOf = [&](Value r) -> Value {
    Value share = b.createOrFold<arith::DivUIOp>(loc, mul(trips, r), constant(ctas));
    return add(lb, mul(share, step));
  };
  Value first = startOf(rank);
  Value end = startOf(add(rank, constant(1)));
  loop.getLowerBoundMutable().assign(first);
  loop.getUpperBoundMutable().assign(end);

  // The values that meet: each result, or its sum reduction moved up.
  SmallVector<Value> partials;
  Operation *last = loop;
  for (Value result : loop.getResults()) {
    auto reduce = result.hasOneUse()
                      ? dyn_cast<tt::ReduceOp>(*result.getUsers().begin())
                      : tt::ReduceOp();
    if (reduce && reduce.getKind() == tt::ReduceKind::sum) {
      reduce->moveAfter(last);
      last = reduce;
      partials.push_back(reduce.getResult());
    } else {
      partials.push_back(result);
    }
  }
  b.setInsertionPointAfter(last);
  auto sum = tt::SplitSumOp::create(b, loc, ValueRange(partials).getTypes(),
                                    partials);
  for (auto [partial, total] : llvm::zip(partials, sum.getResults()))
    partial.replaceAllUsesExcept(total, sum);

  // The rest of the kernel in rank 0.
  Value lead = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, rank32,
      arith::ConstantIntOp::create(b, loc, b.getI32Type(), 0));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, lead,
                                /*withElseRegion=*/false);
  Block &body = fn.getBody().front();
  Block *then = ifOp.thenBlock();
  SmallVector<Operation *> rest;
  for (Operation *op = ifOp->getNextNode(); op != body.getTerminator();
       op = op->getNextNode())
    rest.push_back(op);
  for (Operation *op : rest)
    op->moveBefore(then->getTerminator());
  fn->setAttr(tt::TileDialect::getSplitKAttrName(),
              b.getI32IntegerAttr(static_cast<int32_t>(ctas)));
}

struct TileSplitKLoop : public tt::impl::TileSplitKLoopBase<TileSplitKLoop> {
  using TileSplitKLoopBase::TileSplitKLoopBase;

  void runOnOperation() override {
    if (ctas < 1 || ctas > 8 || !llvm::isPowerOf2_64(ctas)) {
      getOperation().emitError(
          "tile-split-k-loop: ctas must be 1, 2, 4 or 8, got ")
          << ctas;
      return signalPassFailure();
    }
    if (ctas == 1)
      return;
    getOperation()->walk([&](func::FuncOp fn) {
      if (scf::ForOp loop = splittableLoop(fn))
        splitKernel(fn, loop, ctas);
    });
  }
};

} // namespace
