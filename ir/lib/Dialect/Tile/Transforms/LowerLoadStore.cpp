//===- LowerLoadStore.cpp - tile.load and tile.store --------------------===//
//
// Lowers tile.load and tile.store to bounds-checked accesses of the global
// memref: each owned element is read (or written) under an scf.if on its
// coordinates; out-of-bounds loads yield the padding value.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

namespace {

Value paddingValue(OpBuilder &b, Location loc, Type elt, PaddingKind kind) {
  if (auto ft = dyn_cast<FloatType>(elt)) {
    APFloat value = kind == PaddingKind::zero
                        ? APFloat::getZero(ft.getFloatSemantics())
                        : APFloat::getInf(ft.getFloatSemantics(),
                                          kind == PaddingKind::neg_inf);
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, value));
  }
  unsigned width = elt.getIntOrFloatBitWidth();
  APInt value = APInt::getZero(width);
  if (width == 1)
    value = APInt(1, kind == PaddingKind::pos_inf ? 1 : 0);
  else if (kind == PaddingKind::neg_inf)
    value = APInt::getSignedMinValue(width);
  else if (kind == PaddingKind::pos_inf)
    value = APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, value));
}

} // namespace

void KernelLowering::lowerLoad(LoadOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> shape = type.getShape();
  Value src = op.getSource();
  SmallVector<Value> dims, base;
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    dims.push_back(memref::DimOp::create(b, loc, src, d));
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
    base.push_back(
        b.createOrFold<arith::MulIOp>(loc, i, cidx(b, loc, shape[d])));
  }
  Value pad = paddingValue(b, loc, type.getElementType(), op.getPadding());
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> coords = delinearize(b, loc, l, shape);
        SmallVector<Value> global;
        Value inBounds;
        for (auto [d, c] : llvm::enumerate(coords)) {
          global.push_back(b.createOrFold<arith::AddIOp>(loc, base[d], c));
          // Unsigned compare: negative indices are out of bounds too.
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global.back(), dims[d]);
          inBounds =
              inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
        }
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{type.getElementType()},
                                      inBounds,
                                      /*withElseRegion=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        Value v = memref::LoadOp::create(tb, loc, src, global);
        scf::YieldOp::create(tb, loc, v);
        OpBuilder eb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb, loc, pad);
        memref::StoreOp::create(b, loc, ifOp.getResult(0), dst, k);
      });
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerStore(StoreOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getValue().getType();
  ArrayRef<int64_t> shape = type.getShape();
  Value dst = op.getDest();
  Layout layout = getLayout(type);
  SmallVector<Value> dims, base;
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    dims.push_back(memref::DimOp::create(b, loc, dst, d));
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
    base.push_back(
        b.createOrFold<arith::MulIOp>(loc, i, cidx(b, loc, shape[d])));
  }
  Value src = bufferOf(op.getValue());
  forEachOwned(
      b, loc, layout, /*needLinear=*/true, [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> coords = delinearize(b, loc, l, shape);
        SmallVector<Value> global;
        Value cond;
        // Replicated tiles: only the first P threads store.
        if (layout.replicated)
          cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       getThreadId(),
                                       cidx(b, loc, layout.numElements));
        for (auto [d, c] : llvm::enumerate(coords)) {
          global.push_back(b.createOrFold<arith::AddIOp>(loc, base[d], c));
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global.back(), dims[d]);
          cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
        }
        Value v = memref::LoadOp::create(b, loc, src, k);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                      /*withElseRegion=*/false);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        memref::StoreOp::create(tb, loc, v, dst, global);
      });
}
