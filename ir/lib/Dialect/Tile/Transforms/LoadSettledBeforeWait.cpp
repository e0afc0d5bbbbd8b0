//===- LoadSettledBeforeWait.cpp - frozen tiles loaded before the wait ----===//
//
// Implements `tile-load-settled-before-wait` (Transforms/Passes.td states
// what it guarantees and which kernels it takes). A kernel launched
// programmatically starts while the kernel before it ends and waits for it
// (griddepcontrol.wait) before it reads anything; a batch-1 product's weight
// stream then starts only after the wait. Its weights are frozen tensors
// (arguments marked `tile.settled`), which no kernel still running writes, so
// the tiles of its K loop's first iterations may be loaded before the wait:
// they are in flight while the kernel before ends.
//
// The rewrite peels the loop's first `steps` iterations: their settled tiles
// are loaded at the top of the kernel, the wait follows, and their bodies run
// before the loop on those tiles, in order. Both halves sit under one
// condition, that the loop has at least `steps` iterations; else nothing is
// loaded early and the loop runs from its first iteration as before. The
// early loads read exactly the tiles the iterations would have read (the same
// index ops, cloned with the induction variable replaced), so no tile outside
// the loop's own is ever read: a kernel compiled for whole tiles has no
// bounds test on them either.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "tile-load-settled-before-wait"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILELOADSETTLEDBEFOREWAIT
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// An op that may be cloned or moved anywhere it dominates its uses.
bool movable(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// Adds to `slice` the ops of the entry block that `values` are computed
/// from; false if one of them is not movable or a value is not of the entry
/// block (its ops or the kernel's arguments).
bool entrySlice(Block &entry, ArrayRef<Value> values,
                llvm::SetVector<Operation *> &slice) {
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def) {
      if (cast<BlockArgument>(v).getOwner() != &entry)
        return false;
      continue;
    }
    if (def->getBlock() != &entry)
      return false;
    if (slice.contains(def))
      continue;
    if (!movable(def))
      return false;
    slice.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  return true;
}

/// A settled load of the loop's body with what computes its operands: the
/// body's ops (movable, from the induction variable and values outside the
/// body) in body order, and the outside values they use.
struct EarlyLoad {
  tt::LoadOp load;
  SmallVector<Operation *> bodyOps;
  SmallVector<Value> outside;
};

/// The EarlyLoad of `load`, if its operands are computed as the pass
/// requires.
std::optional<EarlyLoad> earlyLoad(scf::ForOp loop, tt::LoadOp load) {
  std::optional<tt::BodySlice> slice = tt::pureSliceInBody(
      loop.getBody(), loop.getInductionVar(), load->getOperands());
  if (!slice)
    return std::nullopt;
  return EarlyLoad{load, std::move(slice->ops), std::move(slice->outside)};
}

/// Index constant `v` at `b`.
Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// The rewrite of `fn` (see the file comment); false if `fn` has no loop to
/// take.
bool loadBeforeWait(func::FuncOp fn, int64_t steps) {
  Block &entry = fn.getBody().front();
  scf::ForOp loop;
  SmallVector<EarlyLoad> early;
  for (auto candidate : entry.getOps<scf::ForOp>()) {
    for (auto load : candidate.getBody()->getOps<tt::LoadOp>())
      if (tt::readsSettledArgument(fn, load.getSource()))
        if (std::optional<EarlyLoad> e = earlyLoad(candidate, load))
          early.push_back(std::move(*e));
    if (!early.empty()) {
      loop = candidate;
      break;
    }
  }
  if (!loop)
    return false;

  // What the early loads and the loop's bounds are computed from moves to the
  // top of the kernel.
  SmallVector<Value> needed = {loop.getLowerBound(), loop.getUpperBound(),
                               loop.getStep()};
  for (const EarlyLoad &e : early)
    llvm::append_range(needed, e.outside);
  llvm::SetVector<Operation *> slice;
  if (!entrySlice(entry, needed, slice))
    return false;
  Operation *first = tt::moveToFront(entry, slice.getArrayRef());

  // The iterations' induction values, and whether the loop has `steps`
  // iterations: lb + (steps - 1) step < ub.
  OpBuilder b(first);
  Location loc = loop.getLoc();
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  SmallVector<Value> ivs = {lb};
  APInt lbValue, stepValue;
  const bool constant = matchPattern(lb, m_ConstantInt(&lbValue)) &&
                        matchPattern(step, m_ConstantInt(&stepValue));
  for (int64_t i = 1; i <= steps; ++i)
    ivs.push_back(
        constant ? indexConstant(b, loc,
                                 lbValue.getSExtValue() +
                                     i * stepValue.getSExtValue())
                 : arith::AddIOp::create(
                       b, loc, lb,
                       arith::MulIOp::create(b, loc, step,
                                             indexConstant(b, loc, i))));
  Value enough = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                       ivs[steps - 1], ub);

  // The early loads, iteration by iteration (zero tiles where the loop is
  // too short: then they are not used).
  SmallVector<Type> types;
  for (int64_t i = 0; i < steps; ++i)
    for (EarlyLoad &e : early)
      types.push_back(e.load.getType());
  auto loads = scf::IfOp::create(b, loc, types, enough, /*withElseRegion=*/true);
  {
    OpBuilder t = OpBuilder::atBlockEnd(&loads.getThenRegion().front());
    SmallVector<Value> results;
    for (int64_t i = 0; i < steps; ++i)
      for (EarlyLoad &e : early) {
        IRMapping m;
        m.map(loop.getInductionVar(), ivs[i]);
        for (Operation *op : e.bodyOps)
          t.clone(*op, m);
        results.push_back(t.clone(*e.load, m)->getResult(0));
      }
    scf::YieldOp::create(t, loc, results);
    OpBuilder f = OpBuilder::atBlockEnd(&loads.getElseRegion().front());
    SmallVector<Value> zeros;
    for (Type type : types)
      zeros.push_back(arith::ConstantOp::create(
          f, loc, cast<TypedAttr>(f.getZeroAttr(type))));
    scf::YieldOp::create(f, loc, zeros);
  }
  tt::GridDependencyWaitOp::create(b, loc);

  // The peeled iterations' bodies on those tiles, then the loop from the
  // first iteration after them.
  OpBuilder p(loop);
  auto peeled = scf::IfOp::create(p, loc, loop.getResultTypes(), enough,
                                  /*withElseRegion=*/true);
  auto builderIn = [&](Region &r) {
    Block &block = r.front();
    return block.mightHaveTerminator()
               ? OpBuilder(block.getTerminator())
               : OpBuilder::atBlockEnd(&block);
  };
  {
    OpBuilder t = builderIn(peeled.getThenRegion());
    SmallVector<Value> carried(loop.getInitArgs());
    Block *body = loop.getBody();
    for (int64_t i = 0; i < steps; ++i) {
      IRMapping m;
      m.map(loop.getInductionVar(), ivs[i]);
      m.map(loop.getRegionIterArgs(), carried);
      for (auto [j, e] : llvm::enumerate(early))
        m.map(e.load.getResult(),
              loads.getResult(static_cast<unsigned>(i * early.size() + j)));
      for (Operation &op : body->without_terminator())
        if (op.getNumResults() == 0 || !m.contains(op.getResult(0)))
          t.clone(op, m); // not an early load, whose tile is mapped
      carried.clear();
      for (Value v : body->getTerminator()->getOperands())
        carried.push_back(m.lookupOrDefault(v));
    }
    if (!loop.getResultTypes().empty()) {
      scf::YieldOp::create(t, loc, carried);
      OpBuilder f = builderIn(peeled.getElseRegion());
      scf::YieldOp::create(f, loc, loop.getInitArgs());
    }
  }
  Value from = arith::SelectOp::create(p, loc, enough, ivs[steps], lb);
  loop.getLowerBoundMutable().assign(from);
  loop.getInitArgsMutable().assign(peeled.getResults());
  return true;
}

struct TileLoadSettledBeforeWait
    : public tt::impl::TileLoadSettledBeforeWaitBase<
          TileLoadSettledBeforeWait> {
  using TileLoadSettledBeforeWaitBase::TileLoadSettledBeforeWaitBase;

  void runOnOperation() override {
    if (steps < 1 || steps > 4) {
      getOperation().emitError("tile-load-settled-before-wait: steps must be "
                               "1 to 4, got ")
          << steps;
      return signalPassFailure();
    }
    WalkResult r = getOperation()->walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()) ||
          !fn->hasAttr(tt::TileDialect::getWholeTilesAttrName()) ||
          fn.getBody().empty())
        return WalkResult::advance();
      if (!tt::checkNotLowered(fn, getArgument()))
        return WalkResult::interrupt();
      if (fn.getBody().getOps<tt::GridDependencyWaitOp>().empty())
        loadBeforeWait(fn, steps);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
