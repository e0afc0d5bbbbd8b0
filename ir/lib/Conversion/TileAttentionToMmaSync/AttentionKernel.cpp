//===- AttentionKernel.cpp - the attention class of tile kernels ----------===//
//
// See AttentionKernel.h. The checks follow the class in Conversion/Passes.td
// in order: the kernel's shape (one loop, one store), the loop's carried
// tiles, its two products and their operands, every other tensor op of the
// loop, then the store and what it depends on.
//
//===----------------------------------------------------------------------===//

#include "AttentionKernel.h"

#include "../TileMatmulToNVVM/MatmulKernel.h"

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

/// The tile.load behind `v` through unit reshapes, if any.
LoadOp loadBehind(Value v) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>()) {
    if (!isUnitReshape(reshape))
      return {};
    v = reshape.getInput();
  }
  return v.getDefiningOp<LoadOp>();
}

/// A load of the tile [1, ..., 1, rows, cols] of a kernel argument whose last
/// dimension is contiguous and whose tile.align is 16 or more, padded with
/// zeros: what 16-byte cp.async copies can read.
bool isCopyableLoad(func::FuncOp func, LoadOp load, int64_t rows,
                    int64_t cols) {
  if (!load || !isKernelArgument(func, load.getSource()) ||
      (load.getPadding() && !load.getPadding()->isZero()))
    return false;
  auto shape = cast<RankedTensorType>(load.getType()).getShape();
  if (shape.size() < 2 || shape[shape.size() - 2] != rows ||
      shape.back() != cols ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return false;
  auto type = cast<MemRefType>(load.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return false;
  unsigned arg = cast<BlockArgument>(load.getSource()).getArgNumber();
  auto align =
      func.getArgAttrOfType<IntegerAttr>(arg, TileDialect::getAlignAttrName());
  return align && align.getInt() >= 16;
}

/// Ops the lowering evaluates element by element at a thread's coordinates
/// (besides elementwise ops): splats, splat constants, same-rank broadcasts,
/// unit reshapes, iota.
bool isPerElementOp(Operation *op) {
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    return !isa<TensorType>(cst.getType()) || (dense && dense.isSplat());
  }
  if (auto broadcast = dyn_cast<BroadcastOp>(op))
    return cast<RankedTensorType>(broadcast.getInput().getType()).getRank() ==
           broadcast.getType().getRank();
  if (auto reshape = dyn_cast<ReshapeOp>(op))
    return isUnitReshape(reshape);
  return isa<SplatOp, IotaOp>(op) || isElementwiseTensorOp(op);
}

/// `v` has the same value in every iteration of `loop`: defined outside it,
/// or by a pure scalar op of its body on such values.
bool isLoopInvariant(Value v, scf::ForOp loop) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return cast<BlockArgument>(v).getOwner() != loop.getBody();
  if (op->getBlock() != loop.getBody())
    return true;
  if (op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
      hasTensor(op->getResultTypes()))
    return false;
  return llvm::all_of(op->getOperands(),
                      [&](Value x) { return isLoopInvariant(x, loop); });
}

} // namespace

FailureOr<AttentionKernel>
mlir::tessera::tile::matchAttentionKernel(func::FuncOp func, std::string &why) {
  auto reject = [&](const char *reason) -> FailureOr<AttentionKernel> {
    why = reason;
    return failure();
  };
  if (!func->hasAttr(TileDialect::getKernelAttrName()) ||
      !func.getBody().hasOneBlock())
    return reject("not a tile kernel of one block");
  Block &body = func.getBody().front();

  AttentionKernel k;
  k.func = func;
  int stores = 0, loops = 0, mmas = 0;
  bool other = false;
  func.walk([&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op)) {
      ++stores;
      k.store = store;
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      ++loops;
      k.loop = loop;
    } else if (isa<MmaOp>(op)) {
      ++mmas;
    } else if (op->getNumRegions() != 0 && op != func) {
      other = true;
    }
  });
  if (other)
    return reject("has a branch or another region");
  if (stores != 1 || loops != 1 || mmas != 2 || k.loop->getBlock() != &body ||
      k.store->getBlock() != &body || !k.loop->isBeforeInBlock(k.store))
    return reject("not one loop with two mmas and one store after it");

  // The loop: from 0 by 1, carrying f32 tiles.
  scf::ForOp loop = k.loop;
  Block *inner = loop.getBody();
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()) ||
      !hasTensor(loop.getResultTypes()))
    return reject("the loop is not from 0 by 1 carrying tiles");
  for (Operation &op : *inner)
    if (auto mma = dyn_cast<MmaOp>(&op)) {
      if (!k.scores)
        k.scores = mma;
      else
        k.values = mma;
    }
  if (!k.scores || !k.values)
    return reject("the mmas are not both in the loop");

  // S = mma(Q, transpose(K), zeros): Q loaded before the loop, K in it.
  auto transpose = k.scores.getB().getDefiningOp<TransposeOp>();
  if (!transpose || transpose->getBlock() != inner || !transpose->hasOneUse() ||
      !isZeroSplat(k.scores.getAcc()))
    return reject("the first mma is not of a transposed tile into zeros");
  k.loadQ = loadBehind(k.scores.getA());
  k.loadK = loadBehind(transpose.getInput());
  k.loadV = loadBehind(k.values.getB());
  // Q at the same tile in every iteration: loaded before the loop, or in it
  // (where the front end emits what the user loaded before the loop) at
  // loop-invariant indices.
  auto invariantQ = [&] {
    return k.loadQ->getBlock() == &body ||
           (k.loadQ->getBlock() == inner &&
            llvm::all_of(k.loadQ.getIndices(),
                         [&](Value i) { return isLoopInvariant(i, loop); }));
  };
  if (!k.loadQ || !invariantQ() || !k.loadK || k.loadK->getBlock() != inner ||
      !k.loadV || k.loadV->getBlock() != inner)
    return reject("the mmas' operands are not Q loaded at loop-invariant "
                  "indices and K and V loaded in the loop");
  auto scoreType = k.scores.getType();
  auto qType = k.scores.getA().getType();
  k.bq = qType.getDimSize(0);
  k.d = qType.getDimSize(1);
  k.bkv = scoreType.getDimSize(1);
  k.inputType = qType.getElementType();
  if (!isa<BFloat16Type, Float16Type>(k.inputType) ||
      !scoreType.getElementType().isF32())
    return reject("the products are not of bf16 or f16 into f32");
  auto pType = k.values.getA().getType();
  auto vType = k.values.getB().getType();
  if (pType.getShape() != scoreType.getShape() ||
      pType.getElementType() != k.inputType ||
      vType.getElementType() != k.inputType ||
      k.values.getType().getShape() != ArrayRef<int64_t>{k.bq, k.d})
    return reject("the second mma is not [BQ, BKV] x [BKV, D] of the first's "
                  "types");
  if (!isCopyableLoad(func, k.loadQ, k.bq, k.d) ||
      !isCopyableLoad(func, k.loadK, k.bkv, k.d) ||
      !isCopyableLoad(func, k.loadV, k.bkv, k.d))
    return reject("Q, K and V are not zero-padded loads of arguments with "
                  "contiguous rows aligned to 16 bytes");

  // The carried tiles: [BQ, 1] rows and one [BQ, D] accumulator, which the
  // second mma updates.
  auto yield = cast<scf::YieldOp>(inner->getTerminator());
  int accumulators = 0;
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || !type.getElementType().isF32())
      return reject("the loop carries something other than f32 tiles");
    if (type.getShape() == ArrayRef<int64_t>{k.bq, k.d}) {
      ++accumulators;
      k.accumulator = i;
      if (yield.getOperand(i) != k.values.getResult())
        return reject("the [BQ, D] tile is not updated by the second mma");
    } else if (type.getShape() != ArrayRef<int64_t>{k.bq, 1}) {
      return reject("the loop carries a tile other than [BQ, 1] and [BQ, D]");
    }
  }
  if (accumulators != 1 || !k.values.getResult().hasOneUse())
    return reject("the loop does not carry one [BQ, D] accumulator");

  // Every other tensor op of the loop is evaluated per element: at a thread's
  // coordinates of [BQ, BKV], [BQ, D] and [BQ, 1] tiles.
  auto operandOfMmas = [&](Operation *op) {
    for (Operation *user : op->getUsers())
      if (!isa<MmaOp, TransposeOp, ReshapeOp>(user))
        return false;
    return true;
  };
  for (Operation &op : *inner) {
    if (&op == k.scores || &op == k.values || &op == transpose ||
        &op == yield)
      continue;
    bool tensors = hasTensor(op.getOperandTypes()) ||
                   hasTensor(op.getResultTypes());
    if (!tensors) {
      if (!isMemoryEffectFree(&op))
        return reject("the loop has a scalar op with side effects");
      continue;
    }
    if (auto load = dyn_cast<LoadOp>(&op)) {
      if ((load == k.loadK || load == k.loadV) && !operandOfMmas(load))
        return reject("K or V is used other than by the mmas");
      if (load.getSource() == k.store.getDest())
        return reject("the loop loads from the output");
      continue;
    }
    if (auto reduce = dyn_cast<ReduceOp>(&op)) {
      auto in = reduce.getInput().getType();
      if (reduce.getAxis() != 1 || in.getRank() != 2 ||
          in.getDimSize(0) != k.bq ||
          (in.getDimSize(1) != k.bkv && in.getDimSize(1) != k.d) ||
          !in.getElementType().isF32())
        return reject("a reduce is not of an f32 [BQ, BKV] or [BQ, D] tile "
                      "along its rows");
      continue;
    }
    if (!isPerElementOp(&op))
      return reject("the loop has a tensor op the lowering does not evaluate "
                    "per element");
  }

  // The store: a [1, ..., 1, BQ, D] tile of an argument other than the
  // inputs.
  auto outType = dyn_cast<MemRefType>(k.store.getDest().getType());
  SmallVector<int64_t> stored(
      cast<RankedTensorType>(k.store.getValue().getType()).getShape());
  if (!isKernelArgument(func, k.store.getDest()) || !outType ||
      stored.size() < 2 || stored[stored.size() - 2] != k.bq ||
      stored.back() != k.d ||
      llvm::any_of(ArrayRef(stored).drop_back(2), [](int64_t d) { return d != 1; }) ||
      !isa<BFloat16Type, Float16Type, Float32Type>(outType.getElementType()))
    return reject("the store is not a [1, ..., 1, BQ, D] tile of a bf16, f16 "
                  "or f32 argument");
  for (LoadOp load : {k.loadQ, k.loadK, k.loadV})
    if (load.getSource() == k.store.getDest())
      return reject("the store writes an input");
  // Every tensor op outside the loop (the query tile, the carried tiles'
  // initial values, what the loop reads of them, the epilogue) is a load or
  // evaluated per element.
  for (Operation &op : body) {
    if (&op == loop || &op == k.store || (!hasTensor(op.getOperandTypes()) &&
                                          !hasTensor(op.getResultTypes())))
      continue;
    if (auto load = dyn_cast<LoadOp>(&op)) {
      if (load.getSource() == k.store.getDest())
        return reject("the kernel loads from its output");
      continue;
    }
    if (!isPerElementOp(&op))
      return reject("a tensor op outside the loop is not a load or "
                    "elementwise");
  }
  return k;
}
