//===- UnrollStreamingLoops.cpp - more of a loop's loads in flight --------===//
//
// Implements `tile-unroll-streaming-loops`. A K loop of a matrix-vector
// product streams one weight tile per iteration and then waits for it: on
// gpu each thread holds a few 16-byte loads in flight, and an iteration costs
// a memory latency. With batch-1 decode's few programs per SM that is far
// from the bytes in flight the memory system needs to reach its bandwidth.
// Unrolling the loop by U puts U iterations' loads in flight together
// (tile-hoist-loads, which runs after this pass, issues them all at the top
// of the unrolled body), at the cost of U copies of the loaded tiles in
// registers.
//
// Which loops: `scf.for` loops of tile kernels whose body has no regions and
// no reductions, transposes, mma or device calls (those exchange data between
// threads, and their loops keep more tiles live), and at least one streaming
// load: a `tile.load` from a read-only kernel argument whose indices depend on
// the induction variable. U is the largest power of two, at most
// `max-factor`, that keeps U times the streaming loads' bytes per iteration
// within `bytes-in-flight`; a loop of U = 1 is left alone. The unrolled loop
// runs U iterations per step; an epilogue loop runs the last trip count mod U
// (MLIR's loopUnrollByFactor). A kernel with an unrolled loop is marked
// `tile.unrolled_streams`: the U tiles of each stream live in registers, and
// the launcher compiles such a kernel again with a smaller budget when they
// leave an SM half empty (src/compiler/variant_search.cpp).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Transforms/FoldUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tile-unroll-streaming-loops"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEUNROLLSTREAMINGLOOPS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True if `v` is computed (by ops of `body`) from `iv`.
bool dependsOn(Value v, Value iv, Block *body) {
  if (v == iv)
    return true;
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != body)
    return false;
  return llvm::any_of(def->getOperands(),
                      [&](Value o) { return dependsOn(o, iv, body); });
}

/// Bytes the loop's streaming loads read per iteration; 0 if the loop is not
/// one to unroll.
int64_t streamedBytes(scf::ForOp loop, func::FuncOp fn,
                      const llvm::DenseSet<Value> &written) {
  Block *body = loop.getBody();
  int64_t bytes = 0;
  for (Operation &op : *body) {
    if (op.getNumRegions() > 0 ||
        isa<tt::ReduceOp, tt::TransposeOp, tt::MmaOp, tt::DeviceCallOp>(op))
      return 0;
    auto load = dyn_cast<tt::LoadOp>(op);
    if (!load || !tt::isKernelArgument(fn, load.getSource()) ||
        written.contains(load.getSource()) ||
        llvm::none_of(load.getIndices(), [&](Value i) {
          return dependsOn(i, loop.getInductionVar(), body);
        }))
      continue;
    RankedTensorType type = load.getType();
    bytes += type.getNumElements() *
             ((type.getElementTypeBitWidth() + 7) / 8);
  }
  return bytes;
}

bool hasTensorResult(Operation *op) {
  return llvm::any_of(op->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); });
}

struct TileUnrollStreamingLoops
    : public tt::impl::TileUnrollStreamingLoopsBase<TileUnrollStreamingLoops> {
  using TileUnrollStreamingLoopsBase::TileUnrollStreamingLoopsBase;

  void runOnOperation() override {
    if (bytesInFlight <= 0 || maxFactor <= 0 ||
        !llvm::isPowerOf2_64(static_cast<uint64_t>(maxFactor))) {
      getOperation().emitError(
          "tile-unroll-streaming-loops: bytes-in-flight must be positive and "
          "max-factor a positive power of two");
      return signalPassFailure();
    }
    getOperation()->walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return;
      llvm::DenseSet<Value> written;
      fn.walk([&](tt::StoreOp store) { written.insert(store.getDest()); });
      SmallVector<std::pair<scf::ForOp, int64_t>> loops;
      fn.walk([&](scf::ForOp loop) {
        int64_t bytes = streamedBytes(loop, fn, written);
        if (bytes == 0)
          return;
        int64_t factor = 1;
        while (factor < maxFactor && 2 * factor * bytes <= bytesInFlight)
          factor *= 2;
        if (factor > 1)
          loops.emplace_back(loop, factor);
      });
      for (auto [loop, factor] : loops)
        (void)loopUnrollByFactor(loop, factor);
      if (!loops.empty())
        fn->setAttr(tt::TileDialect::getUnrolledStreamsAttrName(),
                    UnitAttr::get(fn.getContext()));
      // The unroller computes the new step and bounds with arith ops on
      // constants: folded, the step is a constant again (which
      // tile-version-interior requires of the loops it tests).
      if (!loops.empty()) {
        OperationFolder folder(fn.getContext());
        fn.walk([&](Operation *op) {
          if (op->getDialect() &&
              op->getDialect()->getNamespace() == "arith" &&
              !isa<arith::ConstantOp>(op) && !hasTensorResult(op))
            (void)folder.tryToFold(op);
        });
      }
    });
  }
};

} // namespace
