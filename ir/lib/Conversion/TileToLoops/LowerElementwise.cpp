//===- LowerElementwise.cpp - arith/math ops on tiles -------------------===//
//
// Lowers elementwise arith and math ops on tiles: the op is cloned on
// scalars once per owned element; 16-bit float arithmetic, comparisons and
// math run in f32 and are rounded back per op. tile.device_call becomes one
// func.call per element of its (declared, external) scalar function. On gpu
// an accurate exp over a thread's unrolled elements first tests, per group,
// whether all its arguments lie within +-69: most do, and convert-math-to-nvvm
// then leaves out exp's handling of overflow and subnormal results (about a
// third of its instructions; softmax 3.49 -> 3.71 TB/s on the H200). For
// softmax's shift by the max of its own widened 16-bit tile the test is one
// compare of the group's least argument, from a minimum taken on the narrow
// values two per instruction, instead of one compare per element. A
// division of such exps by one value (softmax's) then needs no test of its
// numerators: per group that passed, one reciprocal and two fma per quotient
// (no min and max of the numerators as in tessera-share-divisors;
// softmax 4.12 -> 4.19 TB/s on the H200).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CastInterfaces.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

// Elements per range test of exps: a test over a whole row's 64 elements per
// thread (softmax at 128 threads) made ptxas use 167 registers instead of 128;
// groups of 32 or fewer kept 128.
constexpr size_t kExpGroup = 32;

/// For exp(x - broadcast(max(x))), x a widened 16-bit float tile and the max
/// of the whole tile (softmax's shift): the subtraction, and the narrow tile.
/// Every argument then lies in [x_min - max, 0] (or is NaN), so a group's
/// arguments lie within +-limit if and only if fl(x_min - max) > -limit over
/// the group (subtracting one value is monotonic; a NaN fails both tests).
/// x_min comes from the narrow values, two per instruction.
static std::optional<std::pair<arith::SubFOp, Value>>
shiftedByOwnMax(math::ExpOp op) {
  auto sub = op.getOperand().getDefiningOp<arith::SubFOp>();
  if (!sub)
    return std::nullopt;
  auto ext = sub.getLhs().getDefiningOp<arith::ExtFOp>();
  auto broadcast = sub.getRhs().getDefiningOp<BroadcastOp>();
  if (!ext || !broadcast ||
      !isFloat16Or(getElementTypeOrSelf(ext.getIn().getType())))
    return std::nullopt;
  auto max = broadcast.getInput().getDefiningOp<ReduceOp>();
  if (!max || max.getKind() != ReduceKind::max ||
      max.getInput() != sub.getLhs() || max.getType().getNumElements() != 1)
    return std::nullopt;
  return std::make_pair(sub, ext.getIn());
}

bool KernelLowering::lowerExpWithRangeTest(math::ExpOp op) {
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
      b, loc, b.getF32FloatAttr(TileDialect::getExpGroupTestLimit()));
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
  // Softmax's shift: each group's test from its narrow minimum, when the
  // thread's elements pair up in 32-bit registers (private indices 0, 1, ...
  // in order, in chunks of an even number of elements; the thread's count is
  // a multiple of the chunk's, so groups are even too).
  auto shifted = shiftedByOwnMax(op);
  if (shifted && (layout.vec % 2 ||
                  llvm::any_of(llvm::enumerate(elements), [](auto e) {
                    return getConstantIntValue(e.value().first) !=
                           static_cast<int64_t>(e.index());
                  })))
    shifted.reset();
  Value result = newBuffer(type);
  SmallVector<Value> tests;
  for (size_t g0 = 0; g0 < elements.size(); g0 += kExpGroup) {
    size_t g1 = std::min(elements.size(), g0 + kExpGroup);
    Value inRange;
    if (shifted) {
      auto [sub, narrow] = *shifted;
      SmallVector<Value> values;
      for (size_t i = g0; i < g1; ++i)
        values.push_back(memref::LoadOp::create(b, loc, bufferOf(narrow),
                                                elements[i].first));
      Value least = arith::SubFOp::create(
          b, loc, combineInPairs(b, loc, ReduceKind::min, values, f32),
          memref::LoadOp::create(b, loc, bufferOf(sub.getRhs()),
                                 elements[g0].first),
          sub.getFastmathAttr());
      inRange = arith::CmpFOp::create(
          b, loc, arith::CmpFPredicate::OGT, least,
          arith::NegFOp::create(b, loc, limit));
    } else {
      for (size_t i = g0; i < g1; ++i) {
        Value small = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OLT,
            math::AbsFOp::create(b, loc, elements[i].second), limit);
        inRange =
            inRange ? arith::AndIOp::create(b, loc, inRange, small) : small;
      }
    }
    tests.push_back(inRange);
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
  if (elt.isF32())
    expGroupTests[op.getResult()] = std::move(tests);
  func->setAttr(TileDialect::getExpRangeTestedAttrName(), b.getUnitAttr());
  return true;
}

bool KernelLowering::lowerDivisionOfTestedExps(arith::DivFOp op) {
  auto tests = expGroupTests.find(op.getLhs());
  auto broadcast = op.getRhs().getDefiningOp<BroadcastOp>();
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!opts.gpu || isApproximate(op) || tests == expGroupTests.end() ||
      !broadcast || !type || !type.getElementType().isF32() ||
      broadcast.getInput().getType().getNumElements() != 1)
    return false;
  // The exps' tile type and layout, so their elements in the order tested.
  // The tests were made right before the exp, which the division uses: they
  // dominate it.
  Layout layout = getLayout(type);
  OpBuilder b(op);
  Location loc = op.getLoc();
  Type f32 = b.getF32Type();
  auto c = [&](float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v)).getResult();
  };
  SmallVector<std::pair<Value, Value>> elements; // (k, numerator)
  Value divisor;
  forEachOwned(b, loc, layout, /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 if (!divisor)
                   divisor = memref::LoadOp::create(b, loc,
                                                    bufferOf(op.getRhs()), k);
                 elements.emplace_back(
                     k, memref::LoadOp::create(b, loc, bufferOf(op.getLhs()),
                                               k));
               });
  // y = 1/b correctly rounded; q = a*y; r = fma(-q, b, a) exactly;
  // fma(r, y, q) = a/b correctly rounded (Markstein) while nothing under- or
  // overflows: |b| in [2^-24, 2^24] and |a| in [2^-100, 2^100], which a
  // tested exp is (e^+-69 within 2^+-99.6). Then |q| lies within
  // [2^-124, 2^124] and r is a multiple of 2^-147, so representable.
  Value y = arith::DivFOp::create(b, loc, c(1.0f), divisor);
  Value absB = math::AbsFOp::create(b, loc, divisor);
  Value bOk = arith::AndIOp::create(
      b, loc,
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, absB,
                            c(0x1p-24f)),
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, absB,
                            c(0x1p24f)));
  Value result = newBuffer(type);
  for (size_t g = 0, g0 = 0; g0 < elements.size(); ++g, g0 += kExpGroup) {
    size_t g1 = std::min(elements.size(), g0 + kExpGroup);
    Value fastPath = arith::AndIOp::create(b, loc, tests->second[g], bOk);
    SmallVector<Type> types(g1 - g0, f32);
    auto ifOp =
        scf::IfOp::create(b, loc, types, fastPath, /*withElseRegion=*/true);
    OpBuilder fb = ifOp.getThenBodyBuilder();
    SmallVector<Value> quotients;
    for (size_t i = g0; i < g1; ++i) {
      Value a = elements[i].second;
      Value q = arith::MulFOp::create(fb, loc, a, y);
      Value negQ = arith::NegFOp::create(fb, loc, q);
      Value r = math::FmaOp::create(fb, loc, negQ, divisor, a);
      quotients.push_back(math::FmaOp::create(fb, loc, r, y, q));
    }
    scf::YieldOp::create(fb, loc, quotients);
    OpBuilder sb = ifOp.getElseBodyBuilder();
    SmallVector<Value> plain;
    for (size_t i = g0; i < g1; ++i)
      plain.push_back(
          arith::DivFOp::create(sb, loc, elements[i].second, divisor));
    scf::YieldOp::create(sb, loc, plain);
    for (size_t i = g0; i < g1; ++i)
      memref::StoreOp::create(b, loc, ifOp.getResult(i - g0), result,
                              elements[i].first);
  }
  buffers[op.getResult()] = result;
  return true;
}

void KernelLowering::lowerElementwise(Operation *op) {
  if (auto ext = dyn_cast<arith::ExtFOp>(op);
      ext && opts.gpu && ext->hasAttr(kRewidenAttrName))
    return lowerRewiden(ext);
  if (auto exp = dyn_cast<math::ExpOp>(op); exp && lowerExpWithRangeTest(exp))
    return;
  if (auto div = dyn_cast<arith::DivFOp>(op);
      div && lowerDivisionOfTestedExps(div))
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

void KernelLowering::lowerRewiden(arith::ExtFOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = cast<RankedTensorType>(op.getType());
  Value src = bufferOf(op.getIn());
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 Value x = memref::LoadOp::create(b, loc, src, k);
                 Value fenced = LLVM::CallIntrinsicOp::create(
                                    b, loc, x.getType(),
                                    b.getStringAttr("llvm.arithmetic.fence"),
                                    ValueRange{x})
                                    .getResult(0);
                 memref::StoreOp::create(
                     b, loc, arith::ExtFOp::create(b, loc, b.getF32Type(), fenced),
                     dst, k);
               });
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerDeviceCall(DeviceCallOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getResult().getType();
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 SmallVector<Value> args;
                 for (Value a : op.getArgs())
                   args.push_back(
                       memref::LoadOp::create(b, loc, bufferOf(a), k));
                 memref::StoreOp::create(
                     b, loc, scalarDeviceCall(b, loc, op, func, args), dst, k);
               });
  buffers[op.getResult()] = dst;
}
