//===- LowerReduce.cpp - tile.reduce ------------------------------------===//
//
// Lowers tile.reduce: the input is written to the scratch buffer and each
// owned result element combines its slice (in f32 for 16-bit floats).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

Type mlir::tessera::tile::accumulatorType(Type elt) {
  return isFloat16Or(elt) ? Float32Type::get(elt.getContext()) : elt;
}

Value mlir::tessera::tile::extendTo(OpBuilder &b, Location loc, Value v,
                                    Type type) {
  return v.getType() == type ? v : arith::ExtFOp::create(b, loc, type, v);
}

Value mlir::tessera::tile::combine(OpBuilder &b, Location loc, ReduceKind kind,
                                   Value acc, Value x) {
  Type t = acc.getType();
  if (isa<FloatType>(t)) {
    switch (kind) {
    case ReduceKind::sum:
      return arith::AddFOp::create(b, loc, acc, x);
    case ReduceKind::max:
      return arith::MaximumFOp::create(b, loc, acc, x);
    case ReduceKind::min:
      return arith::MinimumFOp::create(b, loc, acc, x);
    }
  }
  if (t.isInteger(1)) { // i1 as unsigned: max = or, min = and, sum = xor.
    switch (kind) {
    case ReduceKind::sum:
      return arith::XOrIOp::create(b, loc, acc, x);
    case ReduceKind::max:
      return arith::OrIOp::create(b, loc, acc, x);
    case ReduceKind::min:
      return arith::AndIOp::create(b, loc, acc, x);
    }
  }
  switch (kind) {
  case ReduceKind::sum:
    return arith::AddIOp::create(b, loc, acc, x);
  case ReduceKind::max:
    return arith::MaxSIOp::create(b, loc, acc, x);
  case ReduceKind::min:
    return arith::MinSIOp::create(b, loc, acc, x);
  }
  llvm_unreachable("unknown reduce kind");
}

void KernelLowering::lowerReduce(ReduceOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType srcType = op.getInput().getType(), type = op.getType();
  Type elt = type.getElementType(), accType = accumulatorType(elt);
  int64_t axis = op.getAxis();
  int64_t size = srcType.getDimSize(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < srcType.getRank(); ++d)
    inner *= srcType.getDimSize(d);
  Value view = writeToScratch(b, loc, op.getInput(), 0);
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        // Result l = outer*inner + in; source = outer*size*inner + r*inner +
        // in.
        Value outer = b.createOrFold<arith::ShRUIOp>(
            loc, l, cidx(b, loc, llvm::Log2_64(inner)));
        Value in =
            b.createOrFold<arith::AndIOp>(loc, l, cidx(b, loc, inner - 1));
        Value base = b.createOrFold<arith::AddIOp>(
            loc,
            b.createOrFold<arith::MulIOp>(loc, outer,
                                          cidx(b, loc, size * inner)),
            in);
        Value acc =
            extendTo(b, loc, readScratch(b, loc, view, base, elt), accType);
        if (size > 1) {
          auto loop = scf::ForOp::create(
              b, loc, cidx(b, loc, 1), cidx(b, loc, size), cidx(b, loc, 1),
              ValueRange{acc},
              [&](OpBuilder &lb, Location loc, Value r, ValueRange iter) {
                Value offset = lb.createOrFold<arith::MulIOp>(
                    loc, r, cidx(lb, loc, inner));
                Value idx = lb.createOrFold<arith::AddIOp>(loc, base, offset);
                Value x = extendTo(
                    lb, loc, readScratch(lb, loc, view, idx, elt), accType);
                scf::YieldOp::create(
                    lb, loc, combine(lb, loc, op.getKind(), iter[0], x));
              });
          acc = loop.getResult(0);
        }
        if (accType != elt)
          acc = arith::TruncFOp::create(b, loc, elt, acc);
        memref::StoreOp::create(b, loc, acc, dst, k);
      });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}
