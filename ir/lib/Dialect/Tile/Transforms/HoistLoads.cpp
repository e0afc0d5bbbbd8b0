//===- HoistLoads.cpp - issue read-only tile loads early ------------------===//
//
// Implements `tile-hoist-loads`. In a tile kernel, a `tile.load` from a memref
// argument that no `tile.store` of the kernel writes (a read-only input: the
// launcher never lets an output alias an input) cannot observe any other op of
// the kernel, so it may be issued as soon as its indices exist. Issuing it
// early matters on gpu: a load written after a reduction would otherwise be
// emitted after the reduction's barrier, with its whole latency exposed.
//
// Only loads whose indices depend on a program id or a loop variable are
// hoisted: they stream data that is read once, from memory. A load at the
// same indices in every program and iteration (a weight vector, say) is
// served by the caches after the first programs; issuing it early would only
// keep its values in registers across the reductions, costing occupancy. Such
// an invariant load is instead sunk, with the pure ops computed from it
// alone (casts, reshapes), to just before the first op that needs them.
//
// A `tile.program_id` is the same everywhere in a program, so one inside a
// loop body moves to the start of the function first: an index computed from
// it in the body (the front end emits the id where the user wrote it, often
// after a broadcast) then no longer holds a streaming load back. Ids already
// in the function's own block stay where they are.
//
// Each such load moves up within its own block to just after the last op of
// that block defining one of its operands (or to the block's start), but never
// above a load hoisted before it in the same block, so hoisted loads keep their
// relative order. In a block that waits for streamed tiles (tile-stream-loads)
// the side-effect-free scalar ops of the block that compute a load's indices
// move up first, the same way: in a loop unrolled by
// tile-unroll-streaming-loops each copy of the body computes its induction
// variable where it starts, which would otherwise hold its loads behind the
// previous copies' waits. Loads never leave their block (e.g. an `scf.for` body), and
// loads from memrefs that are stored to, or from memrefs that are not kernel
// arguments, stay where they are. No load moves above a
// `tile.grid_dependency_wait` (what an earlier kernel writes is read after it).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "tile-hoist-loads"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEHOISTLOADS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True when `v` is computed from a tile.program_id or from a block argument
/// other than the kernel's (a loop variable); memoized in `memo`.
bool varies(func::FuncOp fn, Value v, llvm::DenseMap<Operation *, bool> &memo) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return !tt::isKernelArgument(fn, v);
  if (isa<tt::ProgramIdOp>(def))
    return true;
  if (auto it = memo.find(def); it != memo.end())
    return it->second;
  memo[def] = false; // operands are defined before their users: no cycles
  bool depends = llvm::any_of(def->getOperands(), [&](Value operand) {
    return varies(fn, operand, memo);
  });
  return memo[def] = depends;
}

/// The op of `block` that is or contains `op` (null if none).
Operation *ancestorIn(Block *block, Operation *op) {
  return block->findAncestorOpInBlock(*op);
}

/// Sinks the invariant loads of `block` and the pure ops computed from them
/// alone to just before their first user in `block`.
void sinkInvariantLoads(Block *block,
                        const llvm::DenseSet<Operation *> &invariantLoads) {
  // Chain members, in program order.
  llvm::DenseSet<Operation *> chain;
  SmallVector<Operation *> members;
  for (Operation &op : *block) {
    bool member = invariantLoads.contains(&op);
    if (!member && isPure(&op) && op.getNumRegions() == 0 &&
        op.getNumResults() == 1 && op.getNumOperands() > 0)
      member = llvm::all_of(op.getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return def && (chain.contains(def) || matchPattern(v, m_Constant()));
      }) && llvm::any_of(op.getOperands(), [&](Value v) {
        return chain.contains(v.getDefiningOp());
      });
    if (member) {
      chain.insert(&op);
      members.push_back(&op);
    }
  }
  // Last member first, so that a chain moves down together.
  for (Operation *op : llvm::reverse(members)) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *u = ancestorIn(block, user);
      if (u && (!first || u->isBeforeInBlock(first)))
        first = u;
    }
    if (first && op->getNextNode() != first)
      op->moveBefore(first);
  }
}

/// Moves `op`, a side-effect-free scalar op of `block` (an index computed
/// for a load), and first the ops of `block` it is computed from, to just
/// after the last op of `block` defining one of its operands.
void hoistScalarChain(Operation *op, Block *block) {
  if (op->getBlock() != block || op->getNumRegions() > 0 || !isPure(op) ||
      llvm::any_of(op->getResultTypes(),
                   [](Type t) { return isa<ShapedType>(t); }))
    return;
  Operation *after = nullptr;
  for (Value operand : op->getOperands())
    if (Operation *def = operand.getDefiningOp();
        def && def->getBlock() == block) {
      hoistScalarChain(def, block);
      if (!after || after->isBeforeInBlock(def))
        after = def;
    }
  if (after) {
    if (after->getNextNode() != op)
      op->moveAfter(after);
  } else if (&block->front() != op) {
    op->moveBefore(block, block->begin());
  }
}

void hoistLoads(func::FuncOp fn) {
  SmallVector<tt::ProgramIdOp> ids;
  Block &entry = fn.front();
  fn.walk([&](tt::ProgramIdOp id) {
    if (id->getBlock() != &entry)
      ids.push_back(id);
  });
  for (tt::ProgramIdOp id : llvm::reverse(ids))
    id->moveBefore(&entry, entry.begin());

  llvm::DenseSet<Value> written;
  fn.walk([&](tt::StoreOp store) { written.insert(store.getDest()); });

  SmallVector<tt::LoadOp> loads;
  llvm::DenseSet<Operation *> invariant;
  llvm::SetVector<Block *> invariantBlocks;
  llvm::DenseMap<Operation *, bool> memo;
  fn.walk([&](tt::LoadOp load) {
    if (!tt::isKernelArgument(fn, load.getSource()) ||
        written.contains(load.getSource()))
      return;
    if (llvm::any_of(load.getIndices(),
                     [&](Value i) { return varies(fn, i, memo); })) {
      loads.push_back(load);
    } else {
      invariant.insert(load);
      invariantBlocks.insert(load->getBlock());
    }
  });
  for (Block *block : invariantBlocks)
    sinkInvariantLoads(block, invariant);

  llvm::DenseSet<Block *> streamedBlocks;
  fn.walk([&](tt::StreamWaitOp wait) { streamedBlocks.insert(wait->getBlock()); });

  // The last load hoisted so far in each block (walk order is program order
  // within a block).
  llvm::DenseMap<Block *, Operation *> lastHoisted;
  for (tt::LoadOp load : loads) {
    Operation *op = load.getOperation();
    Block *block = op->getBlock();
    if (streamedBlocks.contains(block))
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp())
          hoistScalarChain(def, block);
    Operation *after = nullptr; // insert after this op; null: block start
    auto later = [&](Operation *candidate) {
      if (candidate && (!after || after->isBeforeInBlock(candidate)))
        after = candidate;
    };
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == block)
        later(def);
    }
    if (auto it = lastHoisted.find(block); it != lastHoisted.end())
      later(it->second);
    // Never above the wait for the grids the kernel depends on: an earlier
    // kernel may still be writing what the load reads.
    for (auto wait : block->getOps<tt::GridDependencyWaitOp>())
      if (wait->isBeforeInBlock(op))
        later(wait);
    if (after) {
      if (after != op && after->isBeforeInBlock(op))
        op->moveAfter(after);
    } else if (&block->front() != op) {
      op->moveBefore(block, block->begin());
    }
    lastHoisted[block] = op;
  }
}

struct TileHoistLoads
    : public tt::impl::TileHoistLoadsBase<TileHoistLoads> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp fn) {
      if (fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        hoistLoads(fn);
    });
  }
};

} // namespace
