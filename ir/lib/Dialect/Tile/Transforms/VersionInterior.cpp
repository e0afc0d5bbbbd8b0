//===- VersionInterior.cpp - one in-bounds test per program ---------------===//
//
// Implements `tile-version-interior`. A loop-free tile kernel with one or more
// top-level tile.load ops, whose top-level tile.load/tile.store ops all have
// indices computed by pure scalar ops, is rewritten as
//
//   scf.if (every such access's tile lies wholly in bounds) {
//     a copy of the body, its top-level accesses marked `tile.interior`
//   } else {
//     the body as it was
//   }
//
// Why: convert-tile-to-loops lowers each access on its own, as an in-bounds
// branch (vector accesses) and a ragged branch (element by element) that join
// after it. On gpu the join merges the values loaded on both branches, and
// ptxas materializes that merge with instructions that read the loaded
// registers, right after the load: the thread then waits for its first load
// before it can even issue the next operand's (seen in the SASS of a bf16 add:
// `LDG.E.128 R4` followed by `PRMT R3, R4, ...`). With the test hoisted to the
// program, the interior copy has no joins: every load of every operand is in
// flight together. Only programs on the tensors' edges run the other copy.
// Measured on the H200: LayerNorm 3.68 -> 3.99 TB/s, RMSNorm 4.03 -> 4.12, the
// fused elementwise chain with fast math 3.39 -> 4.33, bf16 add 4.356 -> 4.366.
// A kernel with one load gains too (its join kept the loaded values packed
// for the ragged branch): row sum 4.540 -> 4.556, row max 4.544 -> 4.558,
// softmax 3.45 -> 3.48 (an earlier measurement, with an earlier lowering, had
// found them 1-2% slower, and they were left alone until then).
//
// The index computations (tile.program_id, arith on scalars, constants) are
// moved to the top of the kernel so that the test can use them; the code
// size of the kernel's body doubles.
//
// Top-level scf.for loops (no regions inside) join the test when every
// access directly in their body has tile indices that do not decrease from
// one iteration to the next (the induction variable cast to i32, plus or
// minus invariants, times non-negative constants) or do not change: their
// tiles at the first and the last iteration bound all the others. A row read
// in chunks, or a K loop, then runs without a bounds check per iteration
// (on the H200, a row sum over 2048-wide chunks of 8192-wide bf16 rows went
// from 0.959 to 0.973 of the one-pass row sum's bandwidth in the same run,
// 4.43 TB/s). Other
// loops (scf.while, loops with regions inside, indices that fall or are
// carried by the loop) leave the kernel alone.
//
// A kernel marked `tile.whole_tiles` carries the launcher's promise that
// every tile of every program is in bounds (src/compiler/whole_tiles.h checks
// it on the host, per launch): its accesses, wherever they are, are marked
// `tile.interior` in place, with no test and no edge copy; so are the copies
// of tile-stream-loads' rings (tile.stream_copy), whose valid copies are
// tiles of the loads they replaced. (The versioned form leaves the copies
// unmarked: a loop's copies run ahead of its iterations, so its first and
// last iterations do not bound their tiles.) On the H200 that
// form (before, only reachable by static shapes or by cutting the branch to
// the edge copy out of the PTX) ran the row sum and RMSNorm 0.2-0.3% faster
// than the versioned kernel, LayerNorm over 1024- and 16384-wide rows 3-3.6%
// faster.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "tile-version-interior"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEVERSIONINTERIOR
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

constexpr StringLiteral kInteriorAttrName = tt::TileDialect::getInteriorAttrName();
constexpr StringLiteral kVersionedAttrName = tt::TileDialect::getVersionedAttrName();

/// The memref, indices and tile shape of a top-level access.
struct Access {
  Operation *op;
  Value memref;
  ValueRange indices;
  ArrayRef<int64_t> shape;
};

/// The access of a tile.load or tile.store; nullopt for other ops.
std::optional<Access> accessOf(Operation &op) {
  if (auto load = dyn_cast<tt::LoadOp>(op))
    return Access{&op, load.getSource(), load.getIndices(), load.getType().getShape()};
  if (auto store = dyn_cast<tt::StoreOp>(op))
    return Access{&op, store.getDest(), store.getIndices(),
                  cast<RankedTensorType>(store.getValue().getType()).getShape()};
  return std::nullopt;
}

/// Adds to `slice` the ops of `block` that `v` is computed from; fails if one
/// of them is not a scalar op without regions and memory effects. (They move
/// to the top of their block, which changes when they run but not whether:
/// they need not be speculatable, as a division by a value that is not a
/// constant is not. The front end's integer divisions never trap: see
/// src/codegen/mlir_gen.cpp.)
LogicalResult collectSlice(Block *block, Value v, llvm::SetVector<Operation *> &slice) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return success(); // a kernel argument
  if (def->getBlock() != block || def->getNumRegions() != 0 || !isMemoryEffectFree(def) ||
      llvm::any_of(def->getResultTypes(), [](Type t) { return isa<ShapedType>(t); }))
    return failure();
  if (slice.contains(def))
    return success();
  for (Value operand : def->getOperands())
    if (failed(collectSlice(block, operand, slice)))
      return failure();
  slice.insert(def);
  return success();
}

/// How an integer inside a loop's body changes with the loop's induction
/// variable, over the loop's iterations.
enum class Trend { invariant, nondecreasing, unknown };

/// A top-level scf.for and the accesses directly in its body.
struct Loop {
  scf::ForOp op;
  SmallVector<Access> accesses;
};

/// The trend of `v`, a scalar used in `loop`'s body. Non-decreasing: the
/// induction variable, cast from index to a narrower integer, plus or minus an
/// invariant, times a non-negative constant. Invariant: a value from the top
/// of the kernel (added to `slice`) or a pure op of the body on invariants.
/// Every op on the way is a ring operation modulo 2^width, so the value the
/// kernel computes is the mathematical one (what evaluateAt computes) modulo
/// 2^width.
Trend trendOf(func::FuncOp fn, scf::ForOp loop, Value v,
              llvm::SetVector<Operation *> &slice, DenseMap<Value, Trend> &memo) {
  if (v == loop.getInductionVar())
    return Trend::nondecreasing;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Block *top = &fn.getBody().front();
  Trend trend = Trend::unknown;
  Operation *def = v.getDefiningOp();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    if (arg.getOwner() == top)
      trend = Trend::invariant; // a kernel argument
  } else if (def->getBlock() != loop.getBody()) {
    if (succeeded(collectSlice(top, v, slice)))
      trend = Trend::invariant;
  } else if (def->getNumRegions() == 0 && isPure(def) &&
             llvm::all_of(def->getResultTypes(), [](Type t) { return t.isIntOrIndex(); })) {
    auto of = [&](unsigned i) { return trendOf(fn, loop, def->getOperand(i), slice, memo); };
    auto combine = [](Trend a, Trend b) {
      if (a == Trend::unknown || b == Trend::unknown)
        return Trend::unknown;
      return a == Trend::invariant && b == Trend::invariant ? Trend::invariant : Trend::nondecreasing;
    };
    auto nonNegativeConstant = [&](unsigned i) {
      APInt c;
      return matchPattern(def->getOperand(i), m_ConstantInt(&c)) && c.isNonNegative();
    };
    bool invariantOperands = llvm::all_of(llvm::seq<unsigned>(0, def->getNumOperands()),
                                          [&](unsigned i) { return of(i) == Trend::invariant; });
    if (invariantOperands)
      trend = Trend::invariant;
    else if (auto cast = dyn_cast<arith::IndexCastOp>(def))
      // Only a narrowing cast is a ring homomorphism (a widening one sign-extends).
      trend = cast.getIn().getType().isIndex() ? of(0) : Trend::unknown;
    else if (isa<arith::AddIOp>(def))
      trend = combine(of(0), of(1));
    else if (isa<arith::SubIOp>(def))
      trend = of(1) == Trend::invariant ? of(0) : Trend::unknown;
    else if (isa<arith::MulIOp>(def))
      // of() on the constant too: defined outside the body, it must join the slice that moves
      // to the top, where the test uses it.
      trend = nonNegativeConstant(1) && of(1) == Trend::invariant   ? of(0)
              : nonNegativeConstant(0) && of(0) == Trend::invariant ? of(1)
                                                                    : Trend::unknown;
  }
  memo[v] = trend;
  return trend;
}

/// The value of `v` (see trendOf) when the induction variable is `iv`, as an
/// i64 holding the mathematical integer for non-decreasing values and the
/// kernel's own value, sign-extended, for invariant ones (ops of the body
/// cloned here).
Value evaluateAt(OpBuilder &b, Location loc, scf::ForOp loop, Value v, Value iv,
                 const DenseMap<Value, Trend> &trends, IRMapping &clones) {
  Type i64 = b.getI64Type();
  auto widen = [&](Value x) -> Value {
    if (x.getType().isIndex())
      return arith::IndexCastOp::create(b, loc, i64, x);
    if (x.getType().getIntOrFloatBitWidth() < 64)
      return arith::ExtSIOp::create(b, loc, i64, x);
    return x;
  };
  if (v == loop.getInductionVar())
    return widen(iv);
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != loop.getBody())
    return widen(v); // computed at the top already
  if (trends.lookup(v) == Trend::invariant) {
    for (Value operand : def->getOperands())
      if (!clones.contains(operand)) {
        Operation *inner = operand.getDefiningOp();
        if (inner && inner->getBlock() == loop.getBody())
          evaluateAt(b, loc, loop, operand, iv, trends, clones); // clones it
      }
    Operation *copy = clones.lookupOrNull(def);
    if (!copy)
      copy = b.clone(*def, clones);
    return widen(copy->getResult(cast<OpResult>(v).getResultNumber()));
  }
  auto at = [&](unsigned i) { return evaluateAt(b, loc, loop, def->getOperand(i), iv, trends, clones); };
  if (isa<arith::IndexCastOp>(def))
    return at(0);
  if (isa<arith::AddIOp>(def))
    return arith::AddIOp::create(b, loc, at(0), at(1));
  if (isa<arith::SubIOp>(def))
    return arith::SubIOp::create(b, loc, at(0), at(1));
  return arith::MulIOp::create(b, loc, at(0), at(1));
}

/// True if every tile `a` accesses in `loop` is in bounds: with tile indices
/// that do not decrease from one iteration to the next, the first and the
/// last iteration's tiles are, and (for an i32 index that changes, which the
/// kernel computes modulo 2^32) the last iteration's index is below 2^31, so
/// that no iteration's index wraps around.
Value loopAccessInBounds(OpBuilder &b, Location loc, scf::ForOp loop, const Access &a,
                         Value first, Value last, const DenseMap<Value, Trend> &trends) {
  Value cond;
  for (Value at : {first, last}) {
    IRMapping clones;
    SmallVector<Value> indices;
    for (Value index : a.indices)
      indices.push_back(evaluateAt(b, loc, loop, index, at, trends, clones));
    SmallVector<Value> dims;
    SmallVector<Value> base = tt::tileOrigin(b, loc, a.memref, indices, a.shape, dims);
    Value ok = tt::tileInBounds(b, loc, base, dims, a.shape);
    if (at == last)
      for (auto [index, value] : llvm::zip(a.indices, indices))
        if (index.getType().isInteger(32) && trends.lookup(index) == Trend::nondecreasing) {
          Value limit = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(int64_t(1) << 31));
          ok = arith::AndIOp::create(
              b, loc, ok, arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, value, limit));
        }
    cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
  }
  return cond;
}

/// The accesses of a top-level loop whose tiles the test can cover, adding
/// the values they need at the top to `slice`; nullopt if the loop compares
/// its bounds unsigned, has a step that is not a positive constant, regions
/// inside, or an access whose memref is not a kernel argument or whose
/// index's trend is unknown.
std::optional<Loop> analyzeLoop(func::FuncOp fn, scf::ForOp loop, llvm::SetVector<Operation *> &slice,
                                DenseMap<Value, Trend> &trends) {
  Block *top = &fn.getBody().front();
  // Signed bounds and a constant positive step (the test divides by it, and
  // the loop may run no iteration).
  APInt step;
  if (loop.getUnsignedCmp() || !matchPattern(loop.getStep(), m_ConstantInt(&step)) || !step.isStrictlyPositive())
    return std::nullopt;
  for (Value bound : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
    if (failed(collectSlice(top, bound, slice)))
      return std::nullopt;
  Loop result{loop, {}};
  for (Operation &op : loop.getBody()->without_terminator()) {
    if (op.getNumRegions() != 0)
      return std::nullopt;
    if (std::optional<Access> a = accessOf(op))
      result.accesses.push_back(*a);
  }
  for (const Access &a : result.accesses) {
    if (!tt::isKernelArgument(fn, a.memref))
      return std::nullopt;
    for (Value index : a.indices)
      if (trendOf(fn, loop, index, slice, trends) == Trend::unknown)
        return std::nullopt;
  }
  return result;
}

void versionKernel(func::FuncOp fn) {
  if (fn.getBody().getBlocks().size() != 1 || fn->hasAttr(kVersionedAttrName))
    return;
  Block &body = fn.getBody().front();
  Operation *terminator = body.getTerminator();
  if (!terminator || terminator->getNumOperands() != 0)
    return;

  SmallVector<Access> accesses;
  SmallVector<scf::ForOp> forOps;
  for (Operation &op : body.without_terminator()) {
    if (std::optional<Access> a = accessOf(op))
      accesses.push_back(*a);
    else if (auto forOp = dyn_cast<scf::ForOp>(op))
      forOps.push_back(forOp);
    else if (isa<LoopLikeOpInterface>(op))
      return; // other loops (scf.while) are left alone
  }
  llvm::SetVector<Operation *> slice;
  DenseMap<Value, Trend> trends;
  SmallVector<Loop> loops;
  for (scf::ForOp forOp : forOps) {
    std::optional<Loop> loop = analyzeLoop(fn, forOp, slice, trends);
    if (!loop)
      return;
    loops.push_back(std::move(*loop));
  }
  auto hasLoad = [](ArrayRef<Access> list) {
    return llvm::any_of(list, [](const Access &a) { return isa<tt::LoadOp>(a.op); });
  };
  if (!hasLoad(accesses) && llvm::none_of(loops, [&](const Loop &l) { return hasLoad(l.accesses); }))
    return;
  for (const Access &a : accesses) {
    if (!tt::isKernelArgument(fn, a.memref))
      return; // only kernel arguments (their sizes are known at the top)
    for (Value index : a.indices)
      if (failed(collectSlice(&body, index, slice)))
        return;
  }

  // The index computations go first, in their order.
  Operation *firstRest = tt::moveToFront(body, slice.getArrayRef());

  // The test: for every access, the last element of its tile is in bounds
  // (the lowering's own test, compared unsigned: a negative tile index fails
  // too); for the accesses in a loop, at its first and last iterations (or
  // the loop runs no iteration).
  // What runs before the wait for the grids the kernel depends on (the
  // copies tile-stream-loads put there) stays before it, outside the versions.
  for (auto wait : body.getOps<tt::GridDependencyWaitOp>())
    if (firstRest->isBeforeInBlock(wait))
      firstRest = wait->getNextNode();
  OpBuilder b(firstRest);
  Location loc = fn.getLoc();
  Value cond;
  auto conjoin = [&](Value ok) { cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok; };
  for (const Access &a : accesses) {
    SmallVector<Value> dims;
    SmallVector<Value> base = tt::tileOrigin(b, loc, a.memref, a.indices, a.shape, dims);
    conjoin(tt::tileInBounds(b, loc, base, dims, a.shape));
  }
  for (Loop &loop : loops) {
    if (loop.accesses.empty())
      continue;
    Value lb = loop.op.getLowerBound(), ub = loop.op.getUpperBound(), step = loop.op.getStep();
    // The last iteration: lb + (ub - lb - 1) / step * step, when ub > lb.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value span = arith::SubIOp::create(b, loc, arith::SubIOp::create(b, loc, ub, lb), one);
    Value last = arith::AddIOp::create(
        b, loc, lb, arith::MulIOp::create(b, loc, arith::DivUIOp::create(b, loc, span, step), step));
    Value ok;
    for (const Access &a : loop.accesses) {
      Value inBounds = loopAccessInBounds(b, loc, loop.op, a, lb, last, trends);
      ok = ok ? arith::AndIOp::create(b, loc, ok, inBounds) : inBounds;
    }
    Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lb, ub);
    conjoin(arith::OrIOp::create(b, loc, empty, ok));
  }

  // The rest of the body moves into the else branch; a copy of it, with its
  // accesses marked, into the then branch.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/true);
  ifOp->setAttr(tt::TileDialect::getVersionsAttrName(), b.getUnitAttr());
  Block *elseBlock = &ifOp.getElseRegion().front();
  Block *thenBlock = &ifOp.getThenRegion().front();
  SmallVector<Operation *> rest;
  for (Operation *op = ifOp->getNextNode(); op && op != terminator; op = op->getNextNode())
    rest.push_back(op);
  OpBuilder tb = OpBuilder::atBlockBegin(thenBlock);
  IRMapping mapping;
  for (Operation *op : rest)
    tb.clone(*op, mapping);
  auto mark = [&](const Access &a) {
    Operation *copy = mapping.lookupOrNull(a.op);
    assert(copy && "every access of the body was cloned");
    copy->setAttr(kInteriorAttrName, tb.getUnitAttr());
  };
  llvm::for_each(accesses, mark);
  for (const Loop &loop : loops)
    llvm::for_each(loop.accesses, mark);
  for (Operation *op : rest)
    op->moveBefore(elseBlock->getTerminator());
  fn->setAttr(kVersionedAttrName, b.getUnitAttr());
}

/// Marks every access of a kernel promised whole tiles `tile.interior`;
/// fails (with an error on the function) if the promise is not a unit
/// attribute.
LogicalResult markWholeTiles(func::FuncOp fn, Attribute promise) {
  if (!isa<UnitAttr>(promise))
    return fn.emitOpError() << "'" << tt::TileDialect::getWholeTilesAttrName()
                            << "' must be a unit attribute, got " << promise;
  UnitAttr unit = UnitAttr::get(fn.getContext());
  fn.walk([&](Operation *op) {
    if (isa<tt::LoadOp, tt::StoreOp, tt::StreamCopyOp>(op))
      op->setAttr(kInteriorAttrName, unit);
  });
  return success();
}

struct TileVersionInterior
    : public tt::impl::TileVersionInteriorBase<TileVersionInterior> {
  void runOnOperation() override {
    WalkResult result = getOperation()->walk([](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return WalkResult::advance();
      if (Attribute promise = fn->getAttr(tt::TileDialect::getWholeTilesAttrName()))
        return failed(markWholeTiles(fn, promise)) ? WalkResult::interrupt() : WalkResult::advance();
      versionKernel(fn);
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
