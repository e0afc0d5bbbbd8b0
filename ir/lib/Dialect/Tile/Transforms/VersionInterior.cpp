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
// Why: tile-lower-to-loops lowers each access on its own, as an in-bounds
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
// size of the kernel's body doubles, which is why kernels with loops (whose
// bodies are large and whose loads inside loops could not share the test) are
// left alone.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/IRMapping.h"
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

using tt::kInteriorAttrName; // shared with tile-lower-to-loops (KernelLowering.h)
constexpr StringLiteral kVersionedAttrName = tt::TileDialect::getVersionedAttrName();

/// The memref, indices and tile shape of a top-level access.
struct Access {
  Operation *op;
  Value memref;
  ValueRange indices;
  ArrayRef<int64_t> shape;
};

/// Adds to `slice` the ops of `block` that `v` is computed from; fails if one
/// of them is not a pure scalar op without regions.
LogicalResult collectSlice(Block *block, Value v, llvm::SetVector<Operation *> &slice) {
  Operation *def = v.getDefiningOp();
  if (!def)
    return success(); // a kernel argument
  if (def->getBlock() != block || def->getNumRegions() != 0 || !isPure(def) ||
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

void versionKernel(func::FuncOp fn) {
  if (fn.getBody().getBlocks().size() != 1 || fn->hasAttr(kVersionedAttrName))
    return;
  Block &body = fn.getBody().front();
  Operation *terminator = body.getTerminator();
  if (!terminator || terminator->getNumOperands() != 0)
    return;
  bool hasLoop = false;
  fn.walk([&](Operation *op) {
    if (isa<LoopLikeOpInterface>(op))
      hasLoop = true;
  });
  if (hasLoop)
    return;

  SmallVector<Access> accesses;
  for (Operation &op : body.without_terminator()) {
    if (auto load = dyn_cast<tt::LoadOp>(op))
      accesses.push_back({&op, load.getSource(), load.getIndices(), load.getType().getShape()});
    else if (auto store = dyn_cast<tt::StoreOp>(op))
      accesses.push_back({&op, store.getDest(), store.getIndices(),
                          cast<RankedTensorType>(store.getValue().getType()).getShape()});
  }
  if (llvm::none_of(accesses, [](const Access &a) { return isa<tt::LoadOp>(a.op); }))
    return;
  llvm::SetVector<Operation *> slice;
  for (const Access &a : accesses) {
    if (!tt::isKernelArgument(fn, a.memref))
      return; // only kernel arguments (their sizes are known at the top)
    for (Value index : a.indices)
      if (failed(collectSlice(&body, index, slice)))
        return;
  }

  // The index computations go first, in their order.
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  Operation *first = &body.front();
  for (Operation *op : ordered)
    if (op != first)
      op->moveBefore(first);
    else
      first = op->getNextNode();

  // The test: for every access, the last element of its tile is in bounds
  // (the lowering's own test, compared unsigned: a negative tile index fails
  // too).
  Operation *firstRest = ordered.empty() ? &body.front() : ordered.back()->getNextNode();
  OpBuilder b(firstRest);
  Location loc = fn.getLoc();
  Value cond;
  for (const Access &a : accesses) {
    SmallVector<Value> dims;
    SmallVector<Value> base = tt::KernelLowering::tileOrigin(b, loc, a.memref, a.indices, a.shape, dims);
    Value ok = tt::KernelLowering::tileInBounds(b, loc, base, dims, a.shape);
    cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
  }

  // The rest of the body moves into the else branch; a copy of it, with its
  // accesses marked, into the then branch.
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/true);
  ifOp->setAttr(tt::kVersionsAttrName, b.getUnitAttr());
  Block *elseBlock = &ifOp.getElseRegion().front();
  Block *thenBlock = &ifOp.getThenRegion().front();
  SmallVector<Operation *> rest;
  for (Operation *op = ifOp->getNextNode(); op && op != terminator; op = op->getNextNode())
    rest.push_back(op);
  OpBuilder tb = OpBuilder::atBlockBegin(thenBlock);
  IRMapping mapping;
  llvm::SmallPtrSet<Operation *, 8> marked;
  for (const Access &a : accesses)
    marked.insert(a.op);
  for (Operation *op : rest) {
    Operation *copy = tb.clone(*op, mapping);
    if (marked.contains(op))
      copy->setAttr(kInteriorAttrName, tb.getUnitAttr());
  }
  for (Operation *op : rest)
    op->moveBefore(elseBlock->getTerminator());
  fn->setAttr(kVersionedAttrName, b.getUnitAttr());
}

struct TileVersionInterior
    : public tt::impl::TileVersionInteriorBase<TileVersionInterior> {
  void runOnOperation() override {
    getOperation()->walk([](func::FuncOp fn) {
      if (fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        versionKernel(fn);
    });
  }
};

} // namespace
