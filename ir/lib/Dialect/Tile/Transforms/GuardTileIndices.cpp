//===- GuardTileIndices.cpp - no access to a tile wholly outside its tensor ===//
//
// Implements `tile-guard-tile-indices`. In tessera a tile index may point
// anywhere: a load of a tile wholly outside its tensor (a negative index, or
// one past the last tile) reads padding, a store there is dropped. CUDA Tile
// IR leaves such an access undefined (its partition views pad only the tiles
// that overlap the tensor), so the tileir backend runs this pass before the
// Tile IR writer: it puts every access that may fall outside under a test.
//
// For each tile.load and tile.store of a kernel, unless the kernel carries
// `tile.whole_tiles` (the launcher proved every tile whole) or the access is
// marked `tile.interior`:
//   * the test: along every dimension the tile's origin (index times the
//     tile's extent, in index arithmetic) lies in [0, size), compared
//     unsigned so that a negative origin fails;
//   * a load becomes `scf.if` yielding the load, or else a constant tile of
//     its padding (zero without one);
//   * a store is put inside an `scf.if` with no else.
// An access that overlaps the tensor stays as it was, its elements outside
// padded or dropped by the partition view as before.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEGUARDTILEINDICES
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

/// True when the tile of `shape` at `indices` of `memref` overlaps it: every
/// origin in [0, size) (unsigned: a negative origin is past any size).
Value overlaps(OpBuilder &b, Location loc, Value memref, ValueRange indices,
               ArrayRef<int64_t> shape) {
  SmallVector<Value> dims;
  SmallVector<Value> origin = tt::tileOrigin(b, loc, memref, indices, shape, dims);
  Value cond;
  for (auto [o, size] : llvm::zip(origin, dims)) {
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, o, size);
    cond = cond ? arith::AndIOp::create(b, loc, cond, inside) : inside;
  }
  return cond;
}

void guardLoad(tt::LoadOp load) {
  OpBuilder b(load);
  Location loc = load.getLoc();
  auto type = cast<RankedTensorType>(load.getType());
  Value cond = overlaps(b, loc, load.getSource(), load.getIndices(), type.getShape());
  auto branch = scf::IfOp::create(b, loc, TypeRange{type}, cond, /*withElseRegion=*/true);
  // The load moves into the then branch; the else branch yields its padding.
  OpBuilder thenB = branch.getThenBodyBuilder();
  Operation *moved = thenB.clone(*load.getOperation());
  scf::YieldOp::create(thenB, loc, moved->getResult(0));
  OpBuilder elseB = branch.getElseBodyBuilder();
  Value pad = tt::paddingValue(elseB, loc, type.getElementType(), load.getPaddingAttr());
  Value splat = tt::SplatOp::create(elseB, loc, type, pad);
  scf::YieldOp::create(elseB, loc, splat);
  load.getResult().replaceAllUsesWith(branch.getResult(0));
  load.erase();
}

void guardStore(tt::StoreOp store) {
  OpBuilder b(store);
  Location loc = store.getLoc();
  auto type = cast<RankedTensorType>(store.getValue().getType());
  Value cond = overlaps(b, loc, store.getDest(), store.getIndices(), type.getShape());
  auto branch = scf::IfOp::create(b, loc, TypeRange{}, cond, /*withElseRegion=*/false);
  store->moveBefore(branch.thenBlock()->getTerminator());
}

struct GuardTileIndicesPass
    : tt::impl::TileGuardTileIndicesBase<GuardTileIndicesPass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()) || fn.isExternal())
        continue;
      if (!tt::checkNotLowered(fn, getArgument()))
        return signalPassFailure();
      if (fn->hasAttr(tt::TileDialect::getWholeTilesAttrName()))
        continue;
      SmallVector<Operation *> accesses;
      fn.walk([&](Operation *op) {
        if (isa<tt::LoadOp, tt::StoreOp>(op) &&
            !op->hasAttr(tt::TileDialect::getInteriorAttrName()))
          accesses.push_back(op);
      });
      for (Operation *op : accesses) {
        if (auto load = dyn_cast<tt::LoadOp>(op))
          guardLoad(load);
        else
          guardStore(cast<tt::StoreOp>(op));
      }
    }
  }
};

} // namespace
