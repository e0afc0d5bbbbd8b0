//===- LowerFusedElementwise.cpp - elementwise blocks as one element loop --===//
//
// Lowers the edge copy of a versioned kernel (the else branch of the scf.if
// that tile-version-interior made, marked `tile.versions`), and any block of
// more than `fuse-above` tile ops, as one rolled loop over the thread's
// elements when the block is purely elementwise: tile.load, tile.store,
// tile.splat, splat constants and elementwise arith/math ops, on tiles of one
// shape. Each iteration loads its elements under a bounds check (the padding
// value outside; none for accesses marked `tile.interior`), computes every op
// on scalars and stores the results it owns under a bounds check: nothing is
// staged in private buffers.
//
// Why: lowered op by op, the edge copy (per access an in-bounds branch, a
// ragged branch staged through local memory, then every op unrolled over the
// thread's elements) was two thirds of a small elementwise kernel's code, and
// so of the time LLVM, the NVPTX backend and ptxas took to compile it, for
// programs that only touch the tensors' edges. As one loop it is a few dozen
// instructions and keeps its values in registers. A long block lowered op by
// op is a loop per op on cpu and every op unrolled over the thread's elements
// on gpu, and the compile time grows faster than its length: 2000 chained
// adds took minutes (on cpu LLVM's SCEV walks back over the loops before each
// loop and InstCombine sinks values one unrolled loop body at a time; ptxas
// spent 150 s on one basic block of 64000 adds). As one loop they take
// seconds. Blocks of at most `fuse-above` ops keep the op-by-op code.
//
// A memref that is stored to must be accessed at one tile only (the same
// index operands for all its loads and stores): then every element's loads
// still precede its stores, and no element's store changes another's load.
// Blocks with other ops (reductions, broadcasts, layout changes, nested
// regions) are left to the op-by-op lowering.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

namespace {

/// An elementwise arith/math op on tiles (the kernel verifier has checked
/// that such ops have no regions and one shape).
bool isElementwise(Operation *op) {
  Dialect *dialect = op->getDialect();
  StringRef ns = dialect ? dialect->getNamespace() : StringRef();
  return (ns == "arith" || ns == "math") && !isa<arith::ConstantOp>(op) &&
         op->getNumRegions() == 0 && touchesTensors(op);
}

/// The memref and index operands of a tile.load or tile.store.
std::pair<Value, ValueRange> accessOf(Operation *op) {
  if (auto load = dyn_cast<LoadOp>(op))
    return {load.getSource(), load.getIndices()};
  auto store = cast<StoreOp>(op);
  return {store.getDest(), store.getIndices()};
}

/// The shape of every tile of `block` if the block qualifies (see the file
/// comment), else std::nullopt.
std::optional<RankedTensorType> fusableShape(Block &block) {
  std::optional<RankedTensorType> shape;
  auto sameShape = [&](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor)
      return true;
    if (!shape)
      shape = tensor;
    return shape->getShape() == tensor.getShape();
  };
  llvm::DenseMap<Value, ValueRange> storedAt;
  SmallVector<Operation *> accesses;
  for (Operation &op : block) {
    if (op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (op.getNumRegions() != 0)
      return std::nullopt;
    bool tileOp = isa_and_nonnull<TileDialect>(op.getDialect());
    // Program ids are scalars: lowerBlock lowers them as usual.
    if (tileOp && !isa<LoadOp, StoreOp, SplatOp, ProgramIdOp, NumProgramsOp>(op))
      return std::nullopt;
    if (!tileOp && touchesTensors(&op) && !isElementwise(&op)) {
      auto cst = dyn_cast<arith::ConstantOp>(op);
      auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue())
                       : DenseElementsAttr();
      if (!dense || !dense.isSplat())
        return std::nullopt;
    }
    if (!llvm::all_of(op.getOperandTypes(), sameShape) ||
        !llvm::all_of(op.getResultTypes(), sameShape))
      return std::nullopt;
    // Every tile operand is computed in the block (its element is then known).
    for (Value operand : op.getOperands())
      if (isa<TensorType>(operand.getType()) &&
          operand.getParentBlock() != &block)
        return std::nullopt;
    if (isa<LoadOp, StoreOp>(op)) {
      accesses.push_back(&op);
      if (auto store = dyn_cast<StoreOp>(op)) {
        auto [it, fresh] = storedAt.try_emplace(store.getDest(),
                                                store.getIndices());
        if (!fresh && it->second != store.getIndices())
          return std::nullopt;
      }
    }
  }
  for (Operation *op : accesses) {
    auto [memref, indices] = accessOf(op);
    if (auto it = storedAt.find(memref);
        it != storedAt.end() && it->second != indices)
      return std::nullopt;
  }
  if (!shape || accesses.empty())
    return std::nullopt;
  return shape;
}

} // namespace

bool KernelLowering::lowerFusedElementwise(Block &block) {
  std::optional<RankedTensorType> type = fusableShape(block);
  if (!type)
    return false;
  Layout layout = getLayout(*type);
  if (layout.replicated)
    return false;
  ArrayRef<int64_t> shape = type->getShape();
  OpBuilder b(block.getTerminator());
  Location loc = block.getParentOp()->getLoc();

  // Per access, computed once before the loop: the tile's origin and the
  // memref's sizes.
  struct Origin {
    SmallVector<Value> base, dims;
  };
  llvm::DenseMap<Operation *, Origin> origins;
  SmallVector<Operation *> tileOps;
  for (Operation &op : block) {
    if (!touchesTensors(&op))
      continue;
    tileOps.push_back(&op);
    if (isa<LoadOp, StoreOp>(op)) {
      auto [memref, indices] = accessOf(&op);
      Origin &o = origins[&op];
      o.base = tileOrigin(b, loc, memref, indices, shape, o.dims);
    }
  }

  forEachOwned(
      b, loc, layout, /*needLinear=*/true,
      [&](OpBuilder &b, Value, Value l) {
        llvm::DenseMap<Value, Value> element; // tile -> this element's value
        auto elementOf = [&](OpBuilder &, Value tile) {
          return element.lookup(tile);
        };
        for (Operation *op : tileOps) {
          Location opLoc = op->getLoc();
          // An access of a tile wholly inside its memref.
          const bool interior = op->hasAttr(kInteriorAttrName);
          if (auto load = dyn_cast<LoadOp>(op); load && interior) {
            SmallVector<Value> global = globalCoords(b, opLoc, origins[op].base, l, shape);
            element[load.getResult()] = memref::LoadOp::create(b, opLoc, load.getSource(), global);
          } else if (auto store = dyn_cast<StoreOp>(op); store && interior) {
            SmallVector<Value> global = globalCoords(b, opLoc, origins[op].base, l, shape);
            memref::StoreOp::create(b, opLoc, element.lookup(store.getValue()), store.getDest(), global);
          } else if (auto load = dyn_cast<LoadOp>(op)) {
            const Origin &o = origins[op];
            SmallVector<Value> global = globalCoords(b, opLoc, o.base, l, shape);
            Type elt = load.getType().getElementType();
            auto ifOp = scf::IfOp::create(
                b, opLoc, TypeRange{elt}, inBounds(b, opLoc, global, o.dims),
                /*withElseRegion=*/true);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            scf::YieldOp::create(
                tb, opLoc,
                ValueRange{memref::LoadOp::create(tb, opLoc, load.getSource(),
                                                  global)});
            OpBuilder eb = ifOp.getElseBodyBuilder();
            scf::YieldOp::create(
                eb, opLoc,
                ValueRange{paddingValue(eb, opLoc, elt, load.getPaddingAttr())});
            element[load.getResult()] = ifOp.getResult(0);
          } else if (auto store = dyn_cast<StoreOp>(op)) {
            const Origin &o = origins[op];
            SmallVector<Value> global = globalCoords(b, opLoc, o.base, l, shape);
            auto ifOp = scf::IfOp::create(b, opLoc, TypeRange{},
                                          inBounds(b, opLoc, global, o.dims),
                                          /*withElseRegion=*/false);
            OpBuilder tb = ifOp.getThenBodyBuilder();
            memref::StoreOp::create(tb, opLoc, element.lookup(store.getValue()),
                                    store.getDest(), global);
          } else if (auto splat = dyn_cast<SplatOp>(op)) {
            element[splat.getResult()] = splat.getInput();
          } else if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
            auto dense = cast<DenseElementsAttr>(cst.getValue());
            element[cst.getResult()] = arith::ConstantOp::create(
                b, opLoc, cast<TypedAttr>(dense.getSplatValue<Attribute>()));
          } else {
            for (auto [result, v] : llvm::zip(op->getResults(),
                                              scalarElementwise(b, op, elementOf)))
              element[result] = v;
          }
        }
      },
      /*rolled=*/true);
  for (Operation *op : tileOps)
    toErase.push_back(op);
  return true;
}
