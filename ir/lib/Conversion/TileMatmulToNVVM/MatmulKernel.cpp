//===- MatmulKernel.cpp - the matmul class of tile kernels ----------------===//
//
// See MatmulKernel.h. The checks follow the class in Conversion/Passes.td in
// order: the loop, its body, the operands' types and layouts, the store, then
// every tensor op the store depends on. The tile shapes each lowering takes
// are checked by that lowering.
//
//===----------------------------------------------------------------------===//

#include "MatmulKernel.h"

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

bool touchesTensor(Operation *op) {
  return hasTensor(op->getOperandTypes()) || hasTensor(op->getResultTypes());
}

/// The argument number of `v` if it is a kernel argument.
std::optional<unsigned> argumentNumber(func::FuncOp func, Value v) {
  if (!isKernelArgument(func, v))
    return std::nullopt;
  return cast<BlockArgument>(v).getArgNumber();
}

bool isProgramId(Value v, unsigned dim) {
  auto pid = v.getDefiningOp<ProgramIdOp>();
  return pid && pid.getDim() == dim;
}

/// `v` is the i32 cast of the loop's induction variable.
bool isInductionVariable(Value v, scf::ForOp loop) {
  auto cast = v.getDefiningOp<arith::IndexCastOp>();
  return cast && cast.getIn() == loop.getInductionVar();
}

} // namespace

bool mlir::tessera::tile::isAligned(func::FuncOp func, unsigned arg, int64_t unitDim,
                                   int64_t align) {
  auto type = dyn_cast<MemRefType>(func.getArgument(arg).getType());
  if (!type || type.getRank() != 2)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides[unitDim] != 1)
    return false;
  auto attr = func.getArgAttrOfType<IntegerAttr>(arg, TileDialect::getAlignAttrName());
  return attr && attr.getInt() >= align;
}

bool mlir::tessera::tile::hasTensor(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<TensorType>(t); });
}

bool mlir::tessera::tile::isZeroSplat(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue()) : nullptr;
  if (!dense || !dense.isSplat())
    return false;
  auto f = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>());
  return f && f.getValue().isZero();
}

bool mlir::tessera::tile::isUnitReshape(ReshapeOp op) {
  auto nonUnit = [](Type t) {
    SmallVector<int64_t> dims;
    for (int64_t d : cast<RankedTensorType>(t).getShape())
      if (d != 1)
        dims.push_back(d);
    return dims;
  };
  return nonUnit(op.getInput().getType()) == nonUnit(op.getType());
}

bool mlir::tessera::tile::isElementwiseTensorOp(Operation *op) {
  if (!isa_and_nonnull<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      op->getNumRegions() != 0 || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || isa<arith::ConstantOp>(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), [&](Type t) {
    auto operand = dyn_cast<RankedTensorType>(t);
    return operand && operand.getShape() == type.getShape();
  });
}

FailureOr<MatmulKernel>
mlir::tessera::tile::matchMatmulKernel(func::FuncOp func, std::string &why) {
  auto reject = [&](const char *reason) -> FailureOr<MatmulKernel> {
    why = reason;
    return failure();
  };
  if (!func->hasAttr(TileDialect::getKernelAttrName()) ||
      !func.getBody().hasOneBlock())
    return reject("not a tile kernel of one block");
  Block &body = func.getBody().front();

  // One store and one loop carrying a tile, both at the top level.
  MatmulKernel k;
  k.func = func;
  int stores = 0, loops = 0;
  bool other = false;
  func.walk([&](Operation *op) {
    if (auto store = dyn_cast<StoreOp>(op)) {
      ++stores;
      k.store = store;
    } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (hasTensor(loop.getResultTypes())) {
        ++loops;
        k.loop = loop;
      }
    } else if (isa<ReduceOp, TransposeOp, IotaOp, NumProgramsOp, scf::IfOp,
                   scf::WhileOp>(op)) {
      other = true;
    }
  });
  if (other)
    return reject("has a reduce, transpose, iota, num_programs or branch");
  if (stores != 1 || loops != 1 || k.store->getBlock() != &body ||
      k.loop->getBlock() != &body)
    return reject("not one store and one loop carrying a tile");

  // The loop: from 0 by 1, its one tile the accumulator, zeros at first.
  scf::ForOp loop = k.loop;
  if (!matchPattern(loop.getLowerBound(), m_Zero()) ||
      !matchPattern(loop.getStep(), m_One()) || loop.getNumRegionIterArgs() != 1 ||
      !isZeroSplat(loop.getInitArgs()[0]))
    return reject("the loop is not from 0 by 1 with one accumulator of zeros");
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  k.mma = yield.getOperand(0).getDefiningOp<MmaOp>();
  if (!k.mma || k.mma->getBlock() != loop.getBody() ||
      k.mma.getAcc() != loop.getRegionIterArgs()[0] ||
      !k.mma.getResult().hasOneUse())
    return reject("the loop's accumulator is not updated by one mma");
  k.loadA = k.mma.getA().getDefiningOp<LoadOp>();
  k.loadB = k.mma.getB().getDefiningOp<LoadOp>();
  if (!k.loadA || !k.loadB || k.loadA->getBlock() != loop.getBody() ||
      k.loadB->getBlock() != loop.getBody())
    return reject("the mma's operands are not loads in the loop");
  for (Operation &op : *loop.getBody())
    if (&op != k.mma && &op != k.loadA && &op != k.loadB && &op != yield &&
        (touchesTensor(&op) || !isMemoryEffectFree(&op)))
      return reject("the loop does more than load and multiply");

  // A[pid0, k] and B[k, pid1]: aligned bf16, f16, f32 or 8-bit floats (of
  // one type or one of each), no padding; A row-major,
  // B row-major or with contiguous columns (the transposed view of an [N, K]
  // row-major matrix, K-major as wgmma reads it).
  std::optional<unsigned> a = argumentNumber(func, k.loadA.getSource());
  std::optional<unsigned> b = argumentNumber(func, k.loadB.getSource());
  if (!a || !b || k.loadA.getIndices().size() != 2 ||
      k.loadB.getIndices().size() != 2 ||
      !isProgramId(k.loadA.getIndices()[0], 0) ||
      !isInductionVariable(k.loadA.getIndices()[1], loop) ||
      !isInductionVariable(k.loadB.getIndices()[0], loop) ||
      !isProgramId(k.loadB.getIndices()[1], 1))
    return reject("the loads are not A[pid0, k] and B[k, pid1] of arguments");
  if ((k.loadA.getPadding() && !k.loadA.getPadding()->isZero()) ||
      (k.loadB.getPadding() && !k.loadB.getPadding()->isZero()))
    return reject("a load pads with a value other than zero");
  k.argA = *a;
  k.argB = *b;
  auto tileA = cast<RankedTensorType>(k.loadA.getType());
  auto tileB = cast<RankedTensorType>(k.loadB.getType());
  auto acc = cast<RankedTensorType>(k.mma.getType());
  k.inputType = tileA.getElementType();
  // B's type is A's, or the other 8-bit float type (tile.mma's verifier).
  k.inputTypeB = tileB.getElementType();
  if (!isa<BFloat16Type, Float16Type, Float32Type, Float8E4M3FNType,
           Float8E5M2Type>(k.inputType) ||
      !acc.getElementType().isF32())
    return reject("the product is not of bf16, f16, f32 or 8-bit floats into "
                  "f32");
  k.bKMajor = !isAligned(func, k.argB, 1, 16) && isAligned(func, k.argB, 0, 16);
  if (!isAligned(func, k.argA, 1, 16) || (!isAligned(func, k.argB, 1, 16) && !k.bKMajor))
    return reject("A is not row-major, or B neither row-major nor column-major, "
                  "with rows (columns) aligned to 16 bytes");
  // The tile shape is each lowering's own requirement (Conversion/Passes.td).
  k.bm = tileA.getDimSize(0);
  k.bk = tileA.getDimSize(1);
  k.bn = tileB.getDimSize(1);

  // The store: the BM x BN tile of another argument at (pid0, pid1).
  std::optional<unsigned> out = argumentNumber(func, k.store.getDest());
  auto stored = cast<RankedTensorType>(k.store.getValue().getType());
  if (!out || *out == k.argA || *out == k.argB ||
      stored.getShape() != acc.getShape() || k.store.getIndices().size() != 2 ||
      !isProgramId(k.store.getIndices()[0], 0) ||
      !isProgramId(k.store.getIndices()[1], 1))
    return reject("the store is not the BM x BN tile of the output at "
                  "(pid0, pid1)");
  k.argOut = *out;

  // The epilogue: every tensor op the stored value depends on.
  SmallVector<Value> work{k.store.getValue()};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == loop.getResult(0))
      continue;
    Operation *op = v.getDefiningOp();
    if (!op || op->getBlock() != &body)
      return reject("the epilogue uses a tile defined elsewhere");
    if (!seen.insert(op).second)
      continue;
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      if (!dense || !dense.isSplat())
        return reject("the epilogue has a constant that is not a splat");
      continue;
    }
    if (isa<SplatOp>(op))
      continue;
    if (auto load = dyn_cast<LoadOp>(op)) {
      std::optional<unsigned> arg = argumentNumber(func, load.getSource());
      if (!arg || *arg == k.argOut)
        return reject("the epilogue loads from the output");
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      if (!isUnitReshape(reshape))
        return reject("the epilogue reshapes other than by unit dimensions");
      work.push_back(reshape.getInput());
      continue;
    }
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      if (cast<RankedTensorType>(broadcast.getInput().getType()).getRank() !=
          broadcast.getType().getRank())
        return reject("the epilogue broadcasts across ranks");
      work.push_back(broadcast.getInput());
      continue;
    }
    if (isa<DeviceCallOp>(op)) {
      // Elementwise too: its arguments have the result's shape (its verifier).
      k.deviceCalls = true;
      for (Value operand : op->getOperands())
        work.push_back(operand);
      continue;
    }
    if (!isElementwiseTensorOp(op))
      return reject("the epilogue has an op that is not elementwise");
    for (Value operand : op->getOperands())
      work.push_back(operand);
  }
  auto outType = cast<MemRefType>(func.getArgument(k.argOut).getType());
  if (!isa<BFloat16Type, Float16Type, Float32Type>(outType.getElementType()))
    return reject("the output is not bf16, f16 or f32");
  return k;
}
