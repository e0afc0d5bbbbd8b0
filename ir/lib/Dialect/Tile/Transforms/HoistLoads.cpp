//===- HoistLoads.cpp - issue read-only tile loads early ------------------===//
//
// Implements `tile-hoist-loads`. In a tile kernel, a `tile.load` from a memref
// argument that no `tile.store` of the kernel writes (a read-only input: the
// launcher never lets an output alias an input) cannot observe any other op of
// the kernel, so it may be issued as soon as its indices exist. Issuing it
// early matters on gpu: a load written after a reduction would otherwise be
// emitted after the reduction's barrier, with its whole latency exposed.
//
// Each such load moves up within its own block to just after the last op of
// that block defining one of its operands (or to the block's start), but never
// above a load hoisted before it in the same block, so hoisted loads keep their
// relative order. Loads never leave their block (e.g. an `scf.for` body), and
// loads from memrefs that are stored to, or from memrefs that are not kernel
// arguments, stay where they are.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "tile-hoist-loads"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEHOISTLOADS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True when `v` is an argument of `fn`'s entry block.
bool isKernelArgument(func::FuncOp fn, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && !fn.getBody().empty() && arg.getOwner() == &fn.getBody().front();
}

void hoistLoads(func::FuncOp fn) {
  llvm::DenseSet<Value> written;
  fn.walk([&](tt::StoreOp store) { written.insert(store.getDest()); });

  SmallVector<tt::LoadOp> loads;
  fn.walk([&](tt::LoadOp load) {
    if (isKernelArgument(fn, load.getSource()) &&
        !written.contains(load.getSource()))
      loads.push_back(load);
  });

  // The last load hoisted so far in each block (walk order is program order
  // within a block).
  llvm::DenseMap<Block *, Operation *> lastHoisted;
  for (tt::LoadOp load : loads) {
    Operation *op = load.getOperation();
    Block *block = op->getBlock();
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
