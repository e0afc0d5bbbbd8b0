//===- LowerElementwise.cpp - arith/math ops on tiles -------------------===//
//
// Lowers elementwise arith and math ops on tiles: the op is cloned on
// scalars once per owned element; 16-bit float arithmetic, comparisons and
// math run in f32 and are rounded back per op. tile.device_call becomes one
// func.call per element of its (declared, external) scalar function. On gpu
// an accurate exp over a thread's unrolled elements first tests, per group,
// whether all its arguments lie within +-80: most do, and tile-math-to-nvvm
// then leaves out exp's handling of overflow and subnormal results (about a
// third of its instructions; softmax 3.49 -> 3.71 TB/s on the H200).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CastInterfaces.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

SmallVector<Value> KernelLowering::scalarElementwise(
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
                              [&](Type t) { return isFloat16Or(eltOf(t)); });
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    if (mapping.contains(operand))
      continue;
    Value v = operand;
    if (isa<TensorType>(operand.getType()))
      v = elementOf(b, operand);
    if (promote && isFloat16Or(v.getType()))
      v = arith::ExtFOp::create(b, loc, f32, v);
    mapping.map(operand, v);
  }
  Operation *scalar = b.clone(*op, mapping);
  SmallVector<Value> results;
  for (auto [i, result] : llvm::enumerate(scalar->getResults())) {
    Type elt = eltOf(op->getResult(i).getType());
    bool narrow = promote && isFloat16Or(elt);
    result.setType(narrow ? f32 : elt);
    results.push_back(narrow ? Value(arith::TruncFOp::create(b, loc, elt, result))
                             : Value(result));
  }
  return results;
}

bool KernelLowering::lowerExpWithRangeTest(math::ExpOp op) {
  // Elements per range test: a test over a whole row's 64 elements per
  // thread (softmax at 128 threads) made ptxas use 167 registers instead of
  // 128; groups of 32 or fewer kept 128.
  constexpr size_t kGroup = 32;
  auto type = cast<RankedTensorType>(op.getType());
  Type elt = type.getElementType();
  Layout layout = getLayout(type);
  if (!opts.gpu || !opts.expRangeTest || isApproximate(op) || layout.replicated ||
      !isUnrolled(opts, layout) || layout.perThread < 4 ||
      !(elt.isF32() || isFloat16Or(elt)))
    return false;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  Value limit = arith::ConstantOp::create(
      b, loc, b.getF32FloatAttr(TileDialect::getExpInRangeLimit()));
  // The thread's elements, at constant private indices (so all in this block).
  SmallVector<std::pair<Value, Value>> elements; // (k, x in f32)
  forEachOwned(b, loc, layout, /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 Value x = memref::LoadOp::create(b, loc,
                                                  bufferOf(op.getOperand()), k);
                 if (x.getType() != f32)
                   x = arith::ExtFOp::create(b, loc, f32, x);
                 elements.emplace_back(k, x);
               });
  Value result = newBuffer(type);
  for (size_t g0 = 0; g0 < elements.size(); g0 += kGroup) {
    size_t g1 = std::min(elements.size(), g0 + kGroup);
    Value inRange;
    for (size_t i = g0; i < g1; ++i) {
      Value small = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OLT,
          math::AbsFOp::create(b, loc, elements[i].second), limit);
      inRange = inRange ? arith::AndIOp::create(b, loc, inRange, small) : small;
    }
    SmallVector<Type> types(g1 - g0, f32);
    auto ifOp =
        scf::IfOp::create(b, loc, types, inRange, /*withElseRegion=*/true);
    for (bool fast : {true, false}) {
      OpBuilder rb =
          fast ? ifOp.getThenBodyBuilder() : ifOp.getElseBodyBuilder();
      SmallVector<Value> exps;
      for (size_t i = g0; i < g1; ++i) {
        auto e = math::ExpOp::create(rb, loc, elements[i].second,
                                     op.getFastmathAttr());
        if (fast)
          e->setAttr(TileDialect::getExpInRangeAttrName(), rb.getUnitAttr());
        exps.push_back(e);
      }
      scf::YieldOp::create(rb, loc, exps);
    }
    for (size_t i = g0; i < g1; ++i) {
      Value v = ifOp.getResult(i - g0);
      if (elt != f32)
        v = arith::TruncFOp::create(b, loc, elt, v);
      memref::StoreOp::create(b, loc, v, result, elements[i].first);
    }
  }
  buffers[op.getResult()] = result;
  func->setAttr(TileDialect::getExpRangeTestedAttrName(), b.getUnitAttr());
  return true;
}

void KernelLowering::lowerElementwise(Operation *op) {
  if (auto exp = dyn_cast<math::ExpOp>(op); exp && lowerExpWithRangeTest(exp))
    return;
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto shapeType = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<Value> results;
  for (Value r : op->getResults())
    results.push_back(newBuffer(cast<RankedTensorType>(r.getType())));

  forEachOwned(b, loc, getLayout(shapeType), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 SmallVector<Value> values = scalarElementwise(
                     b, op, [&](OpBuilder &b, Value tile) -> Value {
                       return memref::LoadOp::create(b, loc, bufferOf(tile), k);
                     });
                 for (auto [v, buffer] : llvm::zip(values, results))
                   memref::StoreOp::create(b, loc, v, buffer, k);
               });
  for (auto [r, buf] : llvm::zip(op->getResults(), results))
    buffers[r] = buf;
}

void KernelLowering::lowerDeviceCall(DeviceCallOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getResult().getType();
  // The scalar declaration (the kernel verifier checked any existing one).
  SmallVector<Type> argTypes;
  for (Value a : op.getArgs())
    argTypes.push_back(cast<RankedTensorType>(a.getType()).getElementType());
  auto fnType = FunctionType::get(op.getContext(), argTypes,
                                  {type.getElementType()});
  auto module = func->getParentOfType<ModuleOp>();
  if (!SymbolTable::lookupSymbolIn(module, op.getCalleeAttr())) {
    OpBuilder mb(module.getContext());
    mb.setInsertionPoint(func);
    auto decl = func::FuncOp::create(mb, loc, op.getCallee(), fnType);
    decl.setPrivate();
  }
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 SmallVector<Value> args;
                 for (Value a : op.getArgs())
                   args.push_back(
                       memref::LoadOp::create(b, loc, bufferOf(a), k));
                 auto call = func::CallOp::create(b, loc, op.getCallee(),
                                                  fnType.getResults(), args);
                 memref::StoreOp::create(b, loc, call.getResult(0), dst, k);
               });
  buffers[op.getResult()] = dst;
}
