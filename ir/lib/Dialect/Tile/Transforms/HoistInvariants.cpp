//===- HoistInvariants.cpp - compute loop invariants once ------------------===//
//
// Implements `tile-hoist-invariants`. A kernel's AST has no bindings: a value
// the user computes before a `for_range` and uses in its body (a norm's
// inverse RMS, say) is an expression that the front end emits where it is
// used, inside the loop body. Every iteration then recomputes it: a reduction
// over a whole row, with its own loop and barriers, per step of a matrix-
// vector product's K loop. This pass moves such computations out of their
// loop again, so that they run once, as the user wrote them.
//
// What moves is what is worth keeping rather than recomputing: loops and ifs,
// reductions, scalars, and tiles of one element (a reduction's result), with
// the invariant ops of the body they are computed from. Invariant loads and
// element-wise ops on whole tiles stay where they are unless such an op needs
// them: re-reading a weight vector from the caches costs less than holding it
// in registers across the loop (tile-hoist-loads then sinks it to its use).
//
// An op is invariant in a loop when everything it and its regions use is
// defined outside the loop or by invariant ops, and it has no effect other
// than reading read-only kernel arguments: pure ops, `tile.load` from a memref
// argument that no `tile.store` of the kernel writes, and ops with regions
// made only of such ops. Running such an op when the loop runs no iteration
// is harmless: its loads are bounds-checked, or, in a `tile.whole_tiles`
// kernel, were proven in bounds by the launcher for every access of the AST
// whether or not its loop runs (src/compiler/whole_tiles.h). Loops are
// processed innermost first, so a computation leaves every loop it does not
// depend on.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#define DEBUG_TYPE "tile-hoist-invariants"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEHOISTINVARIANTS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True if `op` (and every op nested in it) only reads memrefs that no store
/// of the kernel writes and has no other effect.
bool onlyReadsInputs(Operation *op, const llvm::DenseSet<Value> &written,
                     func::FuncOp fn) {
  WalkResult r = op->walk([&](Operation *nested) {
    if (auto load = dyn_cast<tt::LoadOp>(nested)) {
      if (tt::isKernelArgument(fn, load.getSource()) &&
          !written.contains(load.getSource()))
        return WalkResult::advance();
      return WalkResult::interrupt();
    }
    if (isa<scf::YieldOp>(nested) || isPure(nested))
      return WalkResult::advance();
    // Loops and ifs: their own effects are those of their bodies.
    if (nested->getNumRegions() > 0 &&
        nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// True if every value `op` and its regions use is defined inside `op`,
/// outside `loop`, or by an op of `invariant`.
bool usesOnlyInvariants(Operation *op, scf::ForOp loop,
                        const llvm::DenseSet<Operation *> &invariant) {
  auto ok = [&](Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Operation *owner = arg.getOwner()->getParentOp();
      // An argument of a block of `op` (an inner loop's variable), or of a
      // block around the loop (the kernel's arguments).
      return op->isAncestor(owner) || !loop->isAncestor(owner);
    }
    Operation *def = v.getDefiningOp();
    return op->isProperAncestor(def) || !loop->isProperAncestor(def) ||
           invariant.contains(def);
  };
  WalkResult r = op->walk([&](Operation *nested) {
    return llvm::all_of(nested->getOperands(), ok) ? WalkResult::advance()
                                                   : WalkResult::interrupt();
  });
  return !r.wasInterrupted();
}

/// Worth computing once rather than per iteration: ops with regions,
/// reductions, and ops other than constants whose results are scalars or
/// one-element tiles.
bool worthHoisting(Operation *op) {
  if (op->getNumRegions() > 0 || isa<tt::ReduceOp>(op))
    return true;
  // Constants cost nothing to keep where they are (they move only with an op
  // that uses them).
  if (op->hasTrait<OpTrait::ConstantLike>())
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type t) {
    auto tile = dyn_cast<RankedTensorType>(t);
    return !tile || tile.getNumElements() == 1;
  });
}

void hoistFrom(scf::ForOp loop, func::FuncOp fn,
               const llvm::DenseSet<Value> &written) {
  Block *body = loop.getBody();
  // The invariant ops of the body, in program order.
  llvm::DenseSet<Operation *> invariant;
  for (Operation &op : body->without_terminator())
    if (onlyReadsInputs(&op, written, fn) &&
        usesOnlyInvariants(&op, loop, invariant))
      invariant.insert(&op);
  // Those worth hoisting and the invariant ops of the body they use.
  llvm::SetVector<Operation *> move;
  SmallVector<Operation *> work;
  for (Operation &op : body->without_terminator())
    if (invariant.contains(&op) && worthHoisting(&op))
      work.push_back(&op);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!move.insert(op))
      continue;
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp();
            def && def->getBlock() == body && invariant.contains(def))
          work.push_back(def);
    });
  }
  // In program order, so that each op still follows what it uses.
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
    if (move.contains(&op))
      op.moveBefore(loop);
}

struct TileHoistInvariants
    : public tt::impl::TileHoistInvariantsBase<TileHoistInvariants> {
  void runOnOperation() override {
    WalkResult r = getOperation()->walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return WalkResult::advance();
      if (!tt::checkNotLowered(fn, getArgument()))
        return WalkResult::interrupt();
      llvm::DenseSet<Value> written;
      fn.walk([&](tt::StoreOp store) { written.insert(store.getDest()); });
      // Post-order: inner loops first, so that what leaves an inner loop can
      // leave the outer one too.
      fn.walk([&](scf::ForOp loop) { hoistFrom(loop, fn, written); });
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
