//===- MatmulEpilogue.cpp - a matmul kernel's epilogue on registers -------===//
//
// See MatmulEpilogue.h. The scalar forms follow convert-tile-to-loops: a
// broadcast reads its input at coordinate 0 along the broadcast dimensions, a
// unit reshape drops or inserts coordinates 0, a load is masked by its
// memref's bounds, and an elementwise op is cloned on scalars
// (scalarElementwise: 16-bit math in f32).
//
//===----------------------------------------------------------------------===//

#include "MatmulEpilogue.h"

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tessera::tile;

Value mlir::tessera::tile::materializeScalar(OpBuilder &b, func::FuncOp func,
                                             Value v, IRMapping &mapping) {
  if (Value known = mapping.lookupOrNull(v))
    return known;
  if (isKernelArgument(func, v))
    return v;
  Operation *op = v.getDefiningOp();
  assert(op && op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
         "a scalar of the old body that is not a pure op");
  for (Value operand : op->getOperands())
    materializeScalar(b, func, operand, mapping);
  Operation *clone = b.clone(*op, mapping);
  for (auto [old, now] : llvm::zip(op->getResults(), clone->getResults()))
    mapping.map(old, now);
  return mapping.lookup(v);
}

std::vector<void *> mlir::tessera::tile::elementKey(Value tensor,
                                                    ArrayRef<Value> coords) {
  std::vector<void *> key{tensor.getAsOpaquePointer()};
  for (Value c : coords)
    key.push_back(c.getAsOpaquePointer());
  return key;
}

Value EpilogueValues::at(Value tensor, ArrayRef<Value> coords) {
  std::vector<void *> key = elementKey(tensor, coords);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  Value v = compute(tensor, coords);
  memo.emplace(std::move(key), v);
  return v;
}

void EpilogueValues::preload(Value tensor, ArrayRef<Value> rows,
                             ArrayRef<Value> cols) {
  for (Value col : cols)
    for (Value row : rows)
      preloadAt(tensor, {row, col});
}

void EpilogueValues::preloadAt(Value tensor, ArrayRef<Value> coords) {
  if (!preloaded.insert(elementKey(tensor, coords)).second || tensor == k.loop.getResult(0))
    return;
  Operation *op = tensor.getDefiningOp();
  if (isa<LoadOp>(op)) {
    at(tensor, coords);
    return;
  }
  if (auto f = forwardedElement(op, coords, zero()))
    return preloadAt(f->first, f->second);
  if (isa<SplatOp, arith::ConstantOp>(op))
    return;
  // Elementwise ops and device calls: their tile operands at the same
  // coordinates.
  for (Value operand : op->getOperands())
    if (isa<RankedTensorType>(operand.getType()))
      preloadAt(operand, coords);
}

std::optional<std::pair<Value, SmallVector<Value>>>
mlir::tessera::tile::forwardedElement(Operation *op, ArrayRef<Value> coords,
                                      Value zero) {
  if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
    auto in = cast<RankedTensorType>(broadcast.getInput().getType());
    SmallVector<Value> inner(coords);
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (in.getDimSize(d) == 1)
        inner[d] = zero;
    return std::make_pair(broadcast.getInput(), inner);
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // Unit dimensions only: the other coordinates in order.
    auto out = cast<RankedTensorType>(reshape.getType());
    auto in = cast<RankedTensorType>(reshape.getInput().getType());
    SmallVector<Value> nonUnit, inner;
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (out.getDimSize(d) != 1)
        nonUnit.push_back(coords[d]);
    size_t next = 0;
    for (int64_t d = 0; d < in.getRank(); ++d)
      inner.push_back(in.getDimSize(d) == 1 ? zero : nonUnit[next++]);
    return std::make_pair(reshape.getInput(), inner);
  }
  return std::nullopt;
}

Value EpilogueValues::zero() {
  if (!zeroIndex)
    zeroIndex = arith::ConstantIntOp::create(b, loc, 0, 32);
  return zeroIndex;
}

Value EpilogueValues::compute(Value tensor, ArrayRef<Value> coords) {
  if (tensor == k.loop.getResult(0))
    return accumulatorAt(coords[0], coords[1]);
  Operation *op = tensor.getDefiningOp();
  if (auto cst = dyn_cast<arith::ConstantOp>(op))
    return arith::ConstantOp::create(
        b, loc,
        cast<TypedAttr>(cast<DenseElementsAttr>(cst.getValue()).getSplatValue<Attribute>()));
  if (auto splat = dyn_cast<SplatOp>(op))
    return materialize(splat.getInput());
  if (auto f = forwardedElement(op, coords, zero()))
    return at(f->first, f->second);
  if (auto load = dyn_cast<LoadOp>(op)) {
    if (sharedTile)
      if (Value v = sharedTile(load, coords))
        return v;
    return loadAt(load, coords);
  }
  if (auto call = dyn_cast<DeviceCallOp>(op))
    return callAt(call, coords);
  return scalarElementwise(b, op, [&](OpBuilder &, Value operand) {
           return at(operand, coords);
         }).front();
}

Value EpilogueValues::callAt(DeviceCallOp call, ArrayRef<Value> coords) {
  SmallVector<Value> args;
  for (Value a : call.getArgs())
    args.push_back(at(a, coords));
  return scalarDeviceCall(b, loc, call, k.func, args);
}

Value EpilogueValues::loadAt(LoadOp load, ArrayRef<Value> coords) {
  SmallVector<Value> indices;
  for (Value index : load.getIndices())
    indices.push_back(materialize(index));
  return loadElement(b, loc, load, indices, coords);
}

Value mlir::tessera::tile::loadElement(OpBuilder &b, Location loc, LoadOp load,
                                       ArrayRef<Value> tileIndices,
                                       ArrayRef<Value> coords) {
  auto type = cast<RankedTensorType>(load.getType());
  SmallVector<Value> indices(tileIndices), dims;
  SmallVector<Value> origin = tileOrigin(b, loc, load.getSource(), indices,
                                         type.getShape(), dims);
  Value inBounds;
  for (auto [d, base] : llvm::enumerate(origin)) {
    indices[d] = b.createOrFold<arith::AddIOp>(
        loc, base,
        arith::IndexCastOp::create(b, loc, b.getIndexType(), coords[d]));
    // Unsigned: a negative index is out of bounds too.
    Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                     indices[d], dims[d]);
    inBounds = inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  for (Value &i : indices)
    i = arith::SelectOp::create(b, loc, inBounds, i, zero);
  Value v = memref::LoadOp::create(b, loc, load.getSource(), indices);
  Value padding = paddingValue(b, loc, type.getElementType(),
                               load.getPaddingAttr());
  return arith::SelectOp::create(b, loc, inBounds, v, padding);
}

bool mlir::tessera::tile::storesColumnPairs(MatmulKernel k) {
  auto outType = cast<MemRefType>(k.func.getArgument(k.argOut).getType());
  const int64_t eltBytes = outType.getElementType().getIntOrFloatBitWidth() / 8;
  auto align = k.func.getArgAttrOfType<IntegerAttr>(
      k.argOut, TileDialect::getAlignAttrName());
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(outType.getStridesAndOffset(strides, offset)) &&
         strides[1] == 1 && align && align.getInt() >= 2 * eltBytes;
}

void mlir::tessera::tile::storeColumnPair(OpBuilder &b, Location loc, Value out,
                                          Value rowIn, Value rowIndex, Value col,
                                          Value width, Value v0, Value v1,
                                          bool pairs, ValueRange outer) {
  auto index = [&](Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  };
  auto at = [&](Value c) {
    SmallVector<Value> indices(outer.begin(), outer.end());
    indices.push_back(rowIndex);
    indices.push_back(index(c));
    return indices;
  };
  Type elt = cast<MemRefType>(out.getType()).getElementType();
  const int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  Value colNext = b.createOrFold<arith::AddIOp>(
      loc, col, arith::ConstantIntOp::create(b, loc, 1, 32));
  auto inRow = scf::IfOp::create(b, loc, rowIn, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(inRow.thenBlock());
  Value bothIn = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       colNext, width);
  auto both = scf::IfOp::create(b, loc, bothIn, /*withElseRegion=*/true);
  b.setInsertionPointToStart(both.thenBlock());
  if (pairs) {
    Value vec = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, elt), ValueRange{v0, v1});
    vector::StoreOp::create(b, loc, vec, out, at(col),
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(2 * eltBytes));
  } else {
    memref::StoreOp::create(b, loc, v0, out, at(col));
    memref::StoreOp::create(b, loc, v1, out, at(colNext));
  }
  b.setInsertionPointToStart(both.elseBlock());
  auto single = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, width),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(single.thenBlock());
  memref::StoreOp::create(b, loc, v0, out, at(col));
}

void mlir::tessera::tile::storeFromRegisters(
    OpBuilder &b, Location loc, EpilogueValues &values, Value store, Value out,
    ArrayRef<Value> rows, ArrayRef<Value> cols, Value row0, Value col0,
    Value height, Value width, bool pairs, int64_t maxPreload) {
  SmallVector<Value> rowIns, rowIndices;
  for (Value r : rows) {
    Value row = arith::AddIOp::create(b, loc, row0, r);
    rowIns.push_back(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, height));
    rowIndices.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), row));
  }
  const size_t perRow = cols.size();
  const size_t batch = EpilogueValues::preloadColumns(perRow, rows.size(), maxPreload);
  for (size_t first = 0; first < perRow; first += batch) {
    const size_t end = std::min(perRow, first + batch);
    values.preload(store, rows, cols.slice(first, end - first));
    for (auto [ri, r] : llvm::enumerate(rows))
      for (size_t c = first; c < end; c += 2) {
        Value v0 = values.at(store, {r, cols[c]});
        Value v1 = values.at(store, {r, cols[c + 1]});
        storeColumnPair(b, loc, out, rowIns[ri], rowIndices[ri],
                        arith::AddIOp::create(b, loc, col0, cols[c]), width,
                        v0, v1, pairs);
      }
  }
}

void mlir::tessera::tile::storeElement(OpBuilder &b, Location loc, Value out,
                                       Value rowIn, Value rowIndex, Value col,
                                       Value width, Value v) {
  Value colIn =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col, width);
  auto in = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, rowIn, colIn),
                              /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(in.thenBlock());
  Value colIndex = arith::IndexCastOp::create(b, loc, b.getIndexType(), col);
  memref::StoreOp::create(b, loc, v, out, ValueRange{rowIndex, colIndex});
}
