//===- StreamLoads.cpp - copy a loop's streamed tiles ahead into a ring ---===//
//
// Implements `tile-stream-loads` (Transforms/Passes.td states what it
// guarantees and which loads it takes). A K loop of a matrix-vector product
// reads one weight tile per iteration and then waits for it. Loaded into
// registers, the bytes a thread keeps in flight are bounded by its registers
// (tile-unroll-streaming-loops trades registers for more of them); copied
// into a ring in on-chip memory (cp.async on gpu), the tiles of the next
// S - 1 iterations are in flight while the current one is consumed, and no
// register holds them.
//
// The rewrite only moves where a tile's elements come from: the ring holds
// exactly what the load would have returned (zero padding is what an
// asynchronous copy fills in for elements outside the tensor), the source is
// never written by the kernel (the launcher never lets an output alias an
// input), and the indices of iteration i + S - 1 are those of the body's
// index computation (pure scalar ops, cloned with the induction variable
// replaced). A loop with several streamable loads commits one group per
// iteration for all of them.
//
// Bulk rings (option `bulk`) need no group: each ring's slot has barriers,
// so each iteration waits for its slots' round (`tile.stream_ready`) and
// releases them at the end of the body (`tile.stream_release`), after every
// read. Moving a settled argument's first copies above the grid dependency
// wait is sound for the same reason as reading it at all: its bytes never
// change while the kernel, or any kernel before it, runs (the launcher marks
// only frozen tensors settled).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>

#define DEBUG_TYPE "tile-stream-loads"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILESTREAMLOADS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// The loads of `body` whose values reach the input of a tile.broadcast of
/// `body` (through any ops of `body`): a broadcast of loads and elementwise
/// ops on them is computed in the broadcast's layout, each thread loading
/// what it needs (convert-tile-to-loops' broadcast inputs), which a ring in
/// the load's own layout would turn into an exchange between threads.
llvm::DenseSet<Operation *> broadcastSources(Block *body) {
  llvm::DenseSet<Operation *> sources;
  SmallVector<Value> work;
  for (auto b : body->getOps<tt::BroadcastOp>())
    work.push_back(b.getInput());
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!seen.insert(v).second || !def || def->getBlock() != body)
      continue;
    if (isa<tt::LoadOp>(def)) {
      sources.insert(def);
      continue;
    }
    llvm::append_range(work, def->getOperands());
  }
  return sources;
}

/// Whether `load`, directly in `loop`'s body, can be streamed (see the pass
/// description).
bool streamable(tt::LoadOp load, scf::ForOp loop, func::FuncOp fn,
                const llvm::DenseSet<Value> &written, bool bulk) {
  BlockArgument arg = tt::kernelArgumentOf(fn, load.getSource());
  if (!arg || written.contains(arg))
    return false;
  auto align = fn.getArgAttrOfType<IntegerAttr>(
      arg.getArgNumber(), tt::TileDialect::getAlignAttrName());
  if (!align || align.getInt() < 16)
    return false;
  auto memref = cast<MemRefType>(load.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return false;
  if (FloatAttr padding = load.getPaddingAttr();
      padding && (padding.getValueAsDouble() != 0.0 ||
                  std::signbit(padding.getValueAsDouble())))
    return false;
  RankedTensorType type = load.getType();
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0 || (type.getShape().back() * (bits / 8)) % 16 != 0)
    return false;
  // The indices are cloned for an iteration ahead: computed in the body from
  // the induction variable by ops that may be cloned.
  std::optional<tt::BodySlice> indices = tt::pureSliceInBody(
      loop.getBody(), loop.getInductionVar(), load.getIndices());
  if (!indices || !indices->readsInductionVar)
    return false;
  if (bulk)
    return true;
  return llvm::none_of(load->getUsers(), [](Operation *user) {
    return isa<tt::BroadcastOp, tt::ReshapeOp>(user);
  });
}

/// `v` as computed at the iteration `map` maps the induction variable to:
/// the ops of `body` it depends on cloned at `b` (once per map).
Value cloneAt(OpBuilder &b, Value v, Block *body, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return v;
  for (Value o : def->getOperands())
    (void)cloneAt(b, o, body, map);
  Operation *copy = b.clone(*def, map);
  return copy->getResult(cast<OpResult>(v).getResultNumber());
}

Value constIndex(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Copies the tiles of `loads` at the iteration whose induction variable is
/// `at` into slot `slot` of their rings, if `at` < the loop's upper bound: as
/// one committed group, or, into bulk rings (`round` given), as copies of
/// that round.
SmallVector<tt::StreamCopyOp> copyGroup(OpBuilder &b, scf::ForOp loop,
                                        MutableArrayRef<tt::LoadOp> loads,
                                        ArrayRef<Value> rings, Value at,
                                        Value slot, Value round) {
  Location loc = loop.getLoc();
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, at,
                                      loop.getUpperBound());
  IRMapping map;
  map.map(loop.getInductionVar(), at);
  SmallVector<tt::StreamCopyOp> copies;
  for (auto [load, ring] : llvm::zip(loads, rings)) {
    SmallVector<Value> indices;
    for (Value index : load.getIndices())
      indices.push_back(cloneAt(b, index, loop.getBody(), map));
    copies.push_back(tt::StreamCopyOp::create(b, loc, load.getSource(),
                                              indices, ring, slot, valid,
                                              round));
  }
  if (!round)
    tt::StreamCommitOp::create(b, loc);
  return copies;
}

/// A loop's rings and, per ring, its copies before the loop.
struct Streams {
  SmallVector<tt::StreamBufferOp> rings;
  SmallVector<SmallVector<tt::StreamCopyOp>> prologue;
};

Streams stream(scf::ForOp loop, MutableArrayRef<tt::LoadOp> loads,
               int64_t stages, bool bulk) {
  Location loc = loop.getLoc();
  OpBuilder before(loop);
  Streams made;
  SmallVector<Value> rings;
  for (tt::LoadOp load : loads) {
    RankedTensorType type = load.getType();
    SmallVector<int64_t> shape{stages};
    llvm::append_range(shape, type.getShape());
    made.rings.push_back(tt::StreamBufferOp::create(
        before, loc, MemRefType::get(shape, type.getElementType()), bulk));
    rings.push_back(made.rings.back());
  }
  made.prologue.resize(loads.size());
  Value lb = loop.getLowerBound(), step = loop.getStep();
  // The first S - 1 iterations' tiles, before the loop.
  for (int64_t s = 0; s + 1 < stages; ++s) {
    Value at = arith::AddIOp::create(
        before, loc, lb,
        arith::MulIOp::create(before, loc, step, constIndex(before, loc, s)));
    SmallVector<tt::StreamCopyOp> copies =
        copyGroup(before, loop, loads, rings, at, constIndex(before, loc, s),
                  bulk ? constIndex(before, loc, 0) : Value());
    for (auto [r, copy] : llvm::enumerate(copies))
      made.prologue[r].push_back(copy);
  }
  // In the body: iteration i + S - 1's tiles first, then iteration i's taken.
  OpBuilder body = OpBuilder::atBlockBegin(loop.getBody());
  Value iv = loop.getInductionVar();
  Value i = arith::DivUIOp::create(
      body, loc, arith::SubIOp::create(body, loc, iv, lb), step);
  Value s = constIndex(body, loc, stages);
  Value slot = arith::RemUIOp::create(body, loc, i, s);
  Value aheadSlot = arith::RemUIOp::create(
      body, loc, arith::AddIOp::create(body, loc, i, constIndex(body, loc, stages - 1)), s);
  Value ahead = arith::AddIOp::create(
      body, loc, iv,
      arith::MulIOp::create(body, loc, step, constIndex(body, loc, stages - 1)));
  Value aheadRound, round;
  if (bulk) {
    aheadRound = arith::DivUIOp::create(
        body, loc,
        arith::AddIOp::create(body, loc, i, constIndex(body, loc, stages - 1)),
        s);
    round = arith::DivUIOp::create(body, loc, i, s);
  }
  copyGroup(body, loop, loads, rings, ahead, aheadSlot, aheadRound);
  // The wait where the first tile is needed: the body's other loads (a
  // vector read from cache, say) are issued before it (tile-hoist-loads
  // moves them up to their indices), not after a wait for the copies.
  OpBuilder first(loads.front());
  if (bulk) {
    // Each bulk ring's slot is ready there, and released at the end of the
    // body, after every take of it.
    OpBuilder last(loop.getBody()->getTerminator());
    for (Value ring : rings) {
      tt::StreamReadyOp::create(first, loc, ring, slot, round);
      tt::StreamReleaseOp::create(last, loc, ring, slot);
    }
  } else {
    tt::StreamWaitOp::create(first, loc, stages - 1);
  }
  for (auto [load, ring] : llvm::zip(loads, rings)) {
    OpBuilder at(load);
    Value taken = tt::StreamTakeOp::create(at, load.getLoc(), load.getType(),
                                           ring, slot);
    load.getResult().replaceAllUsesWith(taken);
    load->erase();
  }
  return made;
}

/// Moves the bulk rings of `made` whose sources are arguments marked
/// `tile.settled`, their copies before the loop and the pure ops those
/// compute from to the top of the kernel, and puts a
/// tile.grid_dependency_wait after them: those tiles are then copied while
/// the kernel before is still running. Only for a loop in the kernel's entry
/// block whose copies before it depend on pure, region-free ops alone.
void copyBeforeGridWait(func::FuncOp fn, scf::ForOp loop, Streams &made) {
  Block &entry = fn.getBody().front();
  if (loop->getBlock() != &entry)
    return;
  llvm::SetVector<Operation *> moved;
  SmallVector<Value> work;
  for (auto [ring, copies] : llvm::zip(made.rings, made.prologue)) {
    if (copies.empty())
      continue;
    if (!tt::readsSettledArgument(fn, copies.front().getSource()))
      continue;
    moved.insert(ring);
    for (tt::StreamCopyOp copy : copies) {
      moved.insert(copy);
      llvm::append_range(work, copy->getOperands());
    }
  }
  if (moved.empty())
    return;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != &entry || moved.contains(def))
      continue;
    if (def->getNumRegions() > 0 || !isMemoryEffectFree(def))
      return; // a copy depends on something that must stay after the wait
    moved.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  OpBuilder b(tt::moveToFront(entry, moved.getArrayRef()));
  tt::GridDependencyWaitOp::create(b, loop.getLoc());
}

struct TileStreamLoads
    : public tt::impl::TileStreamLoadsBase<TileStreamLoads> {
  using TileStreamLoadsBase::TileStreamLoadsBase;

  void runOnOperation() override {
    if (stages < 2 || stages > 8 || maxBytes <= 0 || minBytes < 0) {
      getOperation().emitError("tile-stream-loads: stages must be within "
                               "2..8, max-bytes positive and min-bytes not "
                               "negative");
      return signalPassFailure();
    }
    WalkResult r = getOperation()->walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return WalkResult::advance();
      if (!tt::checkNotLowered(fn, getArgument()))
        return WalkResult::interrupt();
      llvm::DenseSet<Value> written;
      fn.walk([&](tt::StoreOp store) { written.insert(store.getDest()); });
      SmallVector<std::pair<scf::ForOp, SmallVector<tt::LoadOp>>> found;
      fn.walk([&](scf::ForOp loop) {
        SmallVector<tt::LoadOp> loads;
        int64_t bytes = 0;
        llvm::DenseSet<Operation *> broadcasts = broadcastSources(loop.getBody());
        for (Operation &op : *loop.getBody()) {
          if (op.getNumRegions() > 0 ||
              isa<tt::ReduceOp, tt::TransposeOp, tt::MmaOp, tt::DeviceCallOp,
                  tt::StreamTakeOp, tt::StreamReadyOp>(op))
            return;
          auto load = dyn_cast<tt::LoadOp>(op);
          if (!load || (!bulk && broadcasts.contains(load)) ||
              !streamable(load, loop, fn, written, bulk))
            continue;
          loads.push_back(load);
          RankedTensorType type = load.getType();
          bytes += type.getNumElements() * (type.getElementTypeBitWidth() / 8);
        }
        if (!loads.empty() && bytes >= minBytes &&
            std::min<int64_t>(stages, maxBytes / bytes) >= 2)
          found.push_back({loop, std::move(loads)});
      });
      for (auto &[loop, loads] : found) {
        int64_t bytes = 0;
        for (tt::LoadOp load : loads)
          bytes += load.getType().getNumElements() *
                   (load.getType().getElementTypeBitWidth() / 8);
        Streams made =
            stream(loop, loads, std::min<int64_t>(stages, maxBytes / bytes), bulk);
        // One streamed loop: its rings' areas are not shared with another
        // loop's, so their first tiles may be copied from the kernel's start.
        if (bulk && found.size() == 1 &&
            fn.getBody().getOps<tt::GridDependencyWaitOp>().empty())
          copyBeforeGridWait(fn, loop, made);
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
