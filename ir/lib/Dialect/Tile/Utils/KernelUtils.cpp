//===- KernelUtils.cpp - queries and builders shared by tile passes ------===//
//
// See KernelUtils.h.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

BlockArgument mlir::tessera::tile::kernelArgumentOf(func::FuncOp fn,
                                                   Value source) {
  if (auto t = source.getDefiningOp<memref::TransposeOp>())
    source = t.getIn();
  if (!isKernelArgument(fn, source))
    return {};
  return cast<BlockArgument>(source);
}

bool mlir::tessera::tile::readsSettledArgument(func::FuncOp fn, Value source) {
  BlockArgument arg = kernelArgumentOf(fn, source);
  return arg && fn.getArgAttr(arg.getArgNumber(),
                              TileDialect::getSettledAttrName());
}

Operation *mlir::tessera::tile::moveToFront(Block &block,
                                            ArrayRef<Operation *> ops) {
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  Operation *first = &block.front();
  for (Operation *op : ordered)
    if (op != first)
      op->moveBefore(first);
    else
      first = op->getNextNode();
  return first;
}

std::optional<mlir::tessera::tile::BodySlice>
mlir::tessera::tile::pureSliceInBody(Block *body, Value iv, ValueRange values) {
  BodySlice slice;
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (v == iv) {
      slice.readsInductionVar = true;
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def) {
      if (cast<BlockArgument>(v).getOwner() == body)
        return std::nullopt; // a carried value
      slice.outside.push_back(v);
      continue;
    }
    if (def->getBlock() != body) {
      slice.outside.push_back(v);
      continue;
    }
    if (ops.contains(def))
      continue;
    if (def->getNumRegions() > 0 || !isMemoryEffectFree(def))
      return std::nullopt;
    ops.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  slice.ops.assign(ops.begin(), ops.end());
  llvm::sort(slice.ops,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return slice;
}

bool mlir::tessera::tile::checkNotLowered(func::FuncOp fn, StringRef pass) {
  if (!fn->hasAttr(TileDialect::getBlockSizeAttrName()))
    return true;
  fn.emitError() << pass << " runs on tile IR, but kernel '" << fn.getSymName()
                 << "' was already lowered by convert-tile-to-loops (it carries '"
                 << TileDialect::getBlockSizeAttrName() << "')";
  return false;
}

bool mlir::tessera::tile::isRewidenable(Operation *op) {
  auto ext = dyn_cast<arith::ExtFOp>(op);
  if (!ext)
    return false;
  auto in = dyn_cast<RankedTensorType>(ext.getIn().getType());
  auto out = dyn_cast<RankedTensorType>(ext.getType());
  return in && out && isa<BFloat16Type>(in.getElementType()) &&
         out.getElementType().isF32();
}

bool mlir::tessera::tile::isApproximate(Operation *op) {
  auto fm = dyn_cast<arith::ArithFastMathInterface>(op);
  return fm && arith::bitEnumContainsAll(fm.getFastMathFlagsAttr().getValue(),
                                         arith::FastMathFlags::afn);
}

SmallVector<Value>
mlir::tessera::tile::tileOrigin(OpBuilder &b, Location loc, Value memref,
                                ValueRange indices, ArrayRef<int64_t> shape,
                                SmallVectorImpl<Value> &dims) {
  SmallVector<Value> base;
  for (auto [d, index] : llvm::enumerate(indices)) {
    dims.push_back(memref::DimOp::create(b, loc, memref, d));
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
    base.push_back(b.createOrFold<arith::MulIOp>(
        loc, i, arith::ConstantIndexOp::create(b, loc, shape[d])));
  }
  return base;
}

Value mlir::tessera::tile::tileInBounds(OpBuilder &b, Location loc,
                                        ArrayRef<Value> base,
                                        ArrayRef<Value> dims,
                                        ArrayRef<int64_t> shape) {
  // The tile's last index per dimension, compared unsigned: a negative origin
  // is a multiple of the tile size, so its last index is negative too.
  Value cond;
  for (auto [d, origin] : llvm::enumerate(base)) {
    Value last = origin;
    if (shape[d] != 1)
      last = b.createOrFold<arith::AddIOp>(
          loc, origin, arith::ConstantIndexOp::create(b, loc, shape[d] - 1));
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, last, dims[d]);
    cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
  }
  return cond;
}

SmallVector<Value> mlir::tessera::tile::scalarElementwise(
    OpBuilder &b, Operation *op,
    function_ref<Value(OpBuilder &, Value)> elementOf) {
  Location loc = op->getLoc();
  Type f32 = b.getF32Type();
  auto eltOf = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor ? tensor.getElementType() : t;
  };
  // 16-bit float arithmetic, compares and math run in f32; casts and
  // selects move values unchanged.
  bool promote = !isa<CastOpInterface, arith::SelectOp>(op) &&
                 llvm::any_of(llvm::concat<const Type>(op->getOperandTypes(),
                                                       op->getResultTypes()),
                              [&](Type t) { return isa<Float16Type, BFloat16Type>(eltOf(t)); });
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    if (mapping.contains(operand))
      continue;
    Value v = operand;
    if (isa<TensorType>(operand.getType()))
      v = elementOf(b, operand);
    if (promote && isa<Float16Type, BFloat16Type>(v.getType()))
      v = arith::ExtFOp::create(b, loc, f32, v);
    mapping.map(operand, v);
  }
  Operation *scalar = b.clone(*op, mapping);
  SmallVector<Value> results;
  for (auto [i, result] : llvm::enumerate(scalar->getResults())) {
    Type elt = eltOf(op->getResult(i).getType());
    bool narrow = promote && isa<Float16Type, BFloat16Type>(elt);
    result.setType(narrow ? f32 : elt);
    results.push_back(narrow ? Value(arith::TruncFOp::create(b, loc, elt, result))
                             : Value(result));
  }
  return results;
}

Value mlir::tessera::tile::paddingValue(OpBuilder &b, Location loc, Type elt,
                                       FloatAttr padding) {
  FailureOr<TypedAttr> value = getPaddingValue(elt, padding);
  // The tile.load verifier has checked the value; zero keeps a release build
  // defined should an unverified op get here.
  assert(succeeded(value) && "tile.load padding not of its element type");
  return arith::ConstantOp::create(
      b, loc, succeeded(value) ? *value : TypedAttr(b.getZeroAttr(elt)));
}

FunctionType mlir::tessera::tile::deviceCalleeType(DeviceCallOp call) {
  SmallVector<Type> args;
  for (Value a : call.getArgs())
    args.push_back(cast<RankedTensorType>(a.getType()).getElementType());
  return FunctionType::get(call.getContext(), args,
                           {call.getResult().getType().getElementType()});
}

Value mlir::tessera::tile::scalarDeviceCall(OpBuilder &b, Location loc,
                                            DeviceCallOp call, func::FuncOp fn,
                                            ValueRange args) {
  FunctionType type = deviceCalleeType(call);
  auto module = fn->getParentOfType<ModuleOp>();
  if (!SymbolTable::lookupSymbolIn(module, call.getCalleeAttr())) {
    OpBuilder mb(module.getContext());
    mb.setInsertionPoint(fn);
    func::FuncOp::create(mb, call.getLoc(), call.getCallee(), type)
        .setPrivate();
  }
  return func::CallOp::create(b, loc, call.getCallee(), type.getResults(), args)
      .getResult(0);
}

Value mlir::tessera::tile::combine(OpBuilder &b, Location loc, ReduceKind kind,
                                   Value acc, Value x) {
  Type t = getElementTypeOrSelf(acc.getType());
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
