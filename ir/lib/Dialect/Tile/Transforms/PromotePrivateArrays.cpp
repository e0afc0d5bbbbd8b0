//===- PromotePrivateArrays.cpp - private arrays to SSA values ------------===//
//
// Implements `tile-promote-private-arrays`. convert-tile-to-loops keeps each
// thread's part of a tile in a private array (a `memref.alloca`) and, where a
// tile fits the unroll limit, reads and writes it element by element at
// constant indices: the interior copy of an elementwise kernel is hundreds of
// `memref.load`/`memref.store` pairs around a few dozen loads from memory.
// LLVM's SROA removed them in the end, but every stage before it (the
// conversions to the LLVM dialect, the translation, the optimizer's first
// passes) paid for them: for a small elementwise kernel they were two thirds
// of the ops.
//
// This pass forwards the stored values instead: an alloca of static shape
// whose every use is a `memref.load` or `memref.store` at constant, in-bounds
// indices, all in one block, is replaced by the values stored into it, in
// program order, provided that every load reads an element stored before it
// in that block. Other arrays (indexed by loop variables, used in several
// blocks, passed on, or read before written) are left alone; it assumes
// nothing else writes an alloca (a private array cannot alias anything).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

#define DEBUG_TYPE "tile-promote-private-arrays"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEPROMOTEPRIVATEARRAYS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;

namespace {

/// The row-major position of a load's or store's constant indices within
/// `type`, or -1 if an index is not a constant or lies out of bounds.
int64_t constantPosition(MemRefType type, ValueRange indices) {
  SmallVector<int64_t> position;
  for (auto [index, size] : llvm::zip_equal(indices, type.getShape())) {
    std::optional<int64_t> i = getConstantIntValue(index);
    if (!i || *i < 0 || *i >= size)
      return -1;
    position.push_back(*i);
  }
  return linearize(position, computeStrides(type.getShape()));
}

/// Replaces `alloca` by its stored values if every use qualifies (see the
/// file comment); returns whether it did.
bool promote(memref::AllocaOp alloca) {
  MemRefType type = alloca.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return false;
  Block *block = nullptr;
  SmallVector<Operation *> accesses;
  for (Operation *user : alloca->getUsers()) {
    auto load = dyn_cast<memref::LoadOp>(user);
    auto store = dyn_cast<memref::StoreOp>(user);
    bool asMemref = (load && load.getMemRef() == alloca.getResult()) ||
                    (store && store.getMemRef() == alloca.getResult() &&
                     store.getValueToStore() != alloca.getResult());
    if (!asMemref || (block && user->getBlock() != block))
      return false;
    block = user->getBlock();
    accesses.push_back(user);
  }
  if (!block)
    return false;

  // Replay the accesses in program order: first to check that every load
  // reads a stored element, then to forward the values.
  llvm::sort(accesses,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  auto positionOf = [&](Operation *op) {
    if (auto store = dyn_cast<memref::StoreOp>(op))
      return constantPosition(type, store.getIndices());
    return constantPosition(type, cast<memref::LoadOp>(op).getIndices());
  };
  llvm::DenseSet<int64_t> written;
  for (Operation *op : accesses) {
    int64_t at = positionOf(op);
    if (at < 0 || (isa<memref::LoadOp>(op) && !written.contains(at)))
      return false;
    written.insert(at);
  }
  llvm::DenseMap<int64_t, Value> stored;
  for (Operation *op : accesses) {
    if (auto store = dyn_cast<memref::StoreOp>(op))
      stored[positionOf(op)] = store.getValueToStore();
    else
      op->getResult(0).replaceAllUsesWith(stored.lookup(positionOf(op)));
  }
  for (Operation *op : accesses)
    op->erase();
  alloca->erase();
  return true;
}

struct TilePromotePrivateArraysPass
    : mlir::tessera::tile::impl::TilePromotePrivateArraysBase<
          TilePromotePrivateArraysPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaOp> allocas;
    getOperation()->walk([&](memref::AllocaOp a) { allocas.push_back(a); });
    for (memref::AllocaOp a : allocas)
      promote(a);
  }
};

} // namespace
