//===- ExpandF8Conversions.cpp - 8-bit float conversions as integer ops ---===//
//
// Implements `tile-expand-f8-conversions`, for every target: LLVM has no
// 8-bit float types (the conversion to the LLVM dialect stores them as i8), so
// each conversion from or to f8E4M3FN / f8E5M2 (extf, truncf, int <-> float,
// and comparisons) goes through f32, whose conversions become integer
// arithmetic on the bits, and each 8-bit float constant becomes an i8 constant
// bitcast to its type. Narrowing rounds to nearest even and saturates (the
// GPU's cvt.rn.satfinite, and tessera's host conversion in dtype.h); widening
// is exact. The front end routes every conversion through f32, but
// canonicalization folds chains such as truncf(extf x) and truncf(sitofp x)
// into one op; converting through f32 here restores what was written (exactly
// so for f16, bf16 and integer sources). Assumes the front end's other rule:
// 8-bit floats take no arithmetic; an op that breaks it is reported, since
// nothing after this pass could lower it.
//
// With hardware-conversions (sm_89 and newer), the f32 -> f8 and f8 -> f16
// steps of scalars and 1-d vectors are sm_89's paired cvt instructions
// instead, which round and saturate as the integer form does; tensors (a
// tensor-core epilogue has none left, to_loops none) keep the integer form.
// The loops lowering converts element by element, so scalar f32 -> f8
// conversions of one block are then paired two to an instruction
// (pairSingleConversions).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <bit>

#define DEBUG_TYPE "tile-expand-f8-conversions"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEEXPANDF8CONVERSIONS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;

namespace {

/// An 8-bit float format: mantissa bits, exponent bias, whether the all-ones
/// exponent holds infinities (E5M2) or only the all-ones code is NaN (E4M3),
/// and the code of the largest finite magnitude.
struct Format {
  int manBits, bias;
  bool hasInf;
  int64_t maxBits;
};

std::optional<Format> formatOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return Format{3, 7, false, 0x7e};
  if (isa<Float8E5M2Type>(t))
    return Format{2, 15, true, 0x7b};
  return std::nullopt;
}

bool isFloat8(Type t) { return formatOf(getElementTypeOrSelf(t)).has_value(); }

/// Builds ops of the shape of `like` (a scalar, vector or tensor type) with
/// other element types.
struct Bits {
  PatternRewriter &b;
  Location loc;
  Type like;

  Type of(Type elt) const {
    if (auto shaped = dyn_cast<ShapedType>(like))
      return shaped.clone(elt);
    return elt;
  }
  Value constant(TypedAttr scalar) const {
    Type type = of(scalar.getType());
    if (auto shaped = dyn_cast<ShapedType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(shaped, scalar));
    return arith::ConstantOp::create(b, loc, scalar);
  }
  Value i32(int64_t v) const {
    return constant(b.getI32IntegerAttr(static_cast<int32_t>(v)));
  }
  /// An integer constant of v's element type (i32 or i16).
  Value intLike(Value v, int64_t c) const {
    return constant(b.getIntegerAttr(getElementTypeOrSelf(v.getType()), c));
  }
  Value f32(float v) const { return constant(b.getF32FloatAttr(v)); }
  Value bitcast(Type elt, Value v) const {
    return arith::BitcastOp::create(b, loc, of(elt), v);
  }
  Value shr(Value v, int64_t s) const {
    return arith::ShRUIOp::create(b, loc, v, intLike(v, s));
  }
  Value shl(Value v, int64_t s) const {
    return arith::ShLIOp::create(b, loc, v, intLike(v, s));
  }
  Value band(Value v, int64_t m) const {
    return arith::AndIOp::create(b, loc, v, intLike(v, m));
  }
  Value bor(Value v, int64_t m) const {
    return arith::OrIOp::create(b, loc, v, intLike(v, m));
  }
  Value add(Value v, int64_t c) const {
    return arith::AddIOp::create(b, loc, v, intLike(v, c));
  }
  Value cmp(arith::CmpIPredicate p, Value v, int64_t c) const {
    return arith::CmpIOp::create(b, loc, p, v, intLike(v, c));
  }
  Value select(Value c, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value select(Value c, int64_t x, Value y) const { return select(c, i32(x), y); }
};

/// The bits of 2^e as an f32 (e a normal exponent).
float powerOfTwo(int e) {
  return std::bit_cast<float>(static_cast<uint32_t>(127 + e) << 23);
}

/// f8 -> f32, exactly: normal codes rebias their exponent, subnormal codes
/// are their mantissa times the smallest subnormal, the all-ones codes are
/// NaN (E4M3: 0x7f only; E5M2: infinities at 0x7c).
Value widenToF32(PatternRewriter &rewriter, Location loc, Value in) {
  const Format f = *formatOf(getElementTypeOrSelf(in.getType()));
  Bits x{rewriter, loc, in.getType()};
  Value code = arith::ExtUIOp::create(rewriter, loc,
                                      x.of(rewriter.getI32Type()),
                                      x.bitcast(rewriter.getI8Type(), in));
  Value sign = x.shl(x.band(code, 0x80), 24);
  Value mag = x.band(code, 0x7f);
  Value normal = x.add(x.shl(mag, 23 - f.manBits),
                       static_cast<int64_t>(127 - f.bias) << 23);
  Value scaled = arith::MulFOp::create(
      rewriter, loc,
      arith::UIToFPOp::create(rewriter, loc, x.of(rewriter.getF32Type()),
                              mag),
      x.f32(powerOfTwo(1 - f.bias - f.manBits)));
  Value subnormal = x.bitcast(rewriter.getI32Type(), scaled);
  Value r = x.select(x.cmp(arith::CmpIPredicate::ult, mag, 1 << f.manBits),
                     subnormal, normal);
  if (f.hasInf) {
    Value special = x.select(x.cmp(arith::CmpIPredicate::eq, mag, 0x7c),
                             0x7f800000, x.i32(0x7fc00000));
    r = x.select(x.cmp(arith::CmpIPredicate::uge, mag, 0x7c), special, r);
  } else {
    r = x.select(x.cmp(arith::CmpIPredicate::eq, mag, 0x7f), 0x7fc00000, r);
  }
  Value bits = arith::OrIOp::create(rewriter, loc, sign, r);
  return x.bitcast(rewriter.getF32Type(), bits);
}

/// f32 -> f8 (`to`, an f8 type or a shape of one), to nearest even,
/// saturating: a normal result rounds the f32 code at the kept mantissa bits
/// (the bias trick) and rebiases it; a subnormal one is |x| + 2^23 units of
/// the smallest subnormal, whose f32 sum the FPU rounds to a whole number of
/// units; past the largest finite code the result is that code; NaN gives
/// 0x7f. The sign is copied.
Value narrowFromF32(PatternRewriter &rewriter, Location loc, Value in,
                    Type to) {
  const Format f = *formatOf(getElementTypeOrSelf(to));
  Bits x{rewriter, loc, to};
  Type i32 = rewriter.getI32Type(), f32 = rewriter.getF32Type();
  Value bits = x.bitcast(i32, in);
  Value sign = x.band(x.shr(bits, 24), 0x80);
  Value a = x.band(bits, 0x7fffffff);
  const int shift = 23 - f.manBits;
  Value lsb = x.band(x.shr(a, shift), 1);
  Value rounded = x.shr(
      arith::AddIOp::create(rewriter, loc, a,
                            x.add(lsb, (int64_t{1} << (shift - 1)) - 1)),
      shift);
  Value normal =
      x.add(rounded, -(static_cast<int64_t>(127 - f.bias) << f.manBits));
  const float unitsBase = powerOfTwo(24 - f.bias - f.manBits);
  Value sum = arith::AddFOp::create(rewriter, loc, x.bitcast(f32, a),
                                    x.f32(unitsBase));
  Value subnormal =
      arith::SubIOp::create(rewriter, loc, x.bitcast(i32, sum),
                            x.i32(std::bit_cast<int32_t>(unitsBase)));
  const int64_t minNormal = static_cast<int64_t>(128 - f.bias) << 23;
  Value r = x.select(x.cmp(arith::CmpIPredicate::ult, a, minNormal),
                     subnormal, normal);
  r = arith::MinUIOp::create(rewriter, loc, r, x.i32(f.maxBits));
  r = x.select(x.cmp(arith::CmpIPredicate::ugt, a, 0x7f800000), 0x7f, r);
  Value code = arith::TruncIOp::create(
      rewriter, loc, x.of(rewriter.getI8Type()),
      arith::OrIOp::create(rewriter, loc, sign, r));
  return x.bitcast(getElementTypeOrSelf(to), code);
}

/// Whether the hardware conversions take values of `type`: scalars and 1-d
/// vectors of fixed length.
bool pairable(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  return !isa<ShapedType>(type) ||
         (vector && vector.getRank() == 1 && !vector.isScalable());
}

/// The elements of a scalar or 1-d vector `v`, and back.
SmallVector<Value> elementsOf(PatternRewriter &rewriter, Location loc, Value v) {
  auto vector = dyn_cast<VectorType>(v.getType());
  if (!vector)
    return {v};
  SmallVector<Value> out;
  for (int64_t i = 0; i < vector.getNumElements(); ++i)
    out.push_back(vector::ExtractOp::create(rewriter, loc, v, i));
  return out;
}
Value fromElements(PatternRewriter &rewriter, Location loc, Type type,
                   ArrayRef<Value> elements) {
  if (!isa<VectorType>(type))
    return elements.front();
  return vector::FromElementsOp::create(rewriter, loc, cast<VectorType>(type),
                                        elements);
}

/// A two-lane instruction applied to `values` two at a time, an odd last one
/// paired with `pad`: `convert(first, second)` returns a 2-element vector of
/// the pair's results in order. One result per value, in order.
SmallVector<Value> pairwise(PatternRewriter &rewriter, Location loc,
                            ArrayRef<Value> values, Value pad,
                            function_ref<Value(Value, Value)> convert) {
  SmallVector<Value> out;
  for (size_t i = 0; i < values.size(); i += 2) {
    const bool both = i + 1 < values.size();
    Value pair = convert(values[i], both ? values[i + 1] : pad);
    out.push_back(vector::ExtractOp::create(rewriter, loc, pair, 0));
    if (both)
      out.push_back(vector::ExtractOp::create(rewriter, loc, pair, 1));
  }
  return out;
}

/// f32 -> f8 with sm_89's cvt.rn.satfinite, two elements an instruction. The
/// instruction puts its first operand's code in the high byte, so a pair goes
/// in as (second, first) and comes out as a vector<2xi8> in element order.
Value narrowFromF32Hardware(PatternRewriter &rewriter, Location loc, Value in,
                            Type to) {
  Type f8 = getElementTypeOrSelf(to);
  Bits x{rewriter, loc, to};
  auto pairType = VectorType::get({2}, rewriter.getI8Type());
  Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  SmallVector<Value> codes = pairwise(
      rewriter, loc, elementsOf(rewriter, loc, in), zero,
      [&](Value first, Value second) -> Value {
        return NVVM::ConvertF32x2ToF8x2Op::create(
            rewriter, loc, pairType, second, first, NVVM::FPRoundingMode::RN,
            NVVM::SaturationMode::SATFINITE, /*relu=*/false, f8);
      });
  Value code = fromElements(rewriter, loc, x.of(rewriter.getI8Type()), codes);
  return x.bitcast(f8, code);
}

/// f8 -> f16 with sm_89's cvt.rn.f16x2.e4m3x2 (or e5m2x2), two elements an
/// instruction (exact).
Value widenToF16Hardware(PatternRewriter &rewriter, Location loc, Value in) {
  Type f8 = getElementTypeOrSelf(in.getType());
  Bits x{rewriter, loc, in.getType()};
  auto pairType = VectorType::get({2}, rewriter.getI8Type());
  auto halvesType = VectorType::get({2}, rewriter.getF16Type());
  Value zero = arith::ConstantOp::create(rewriter, loc, rewriter.getI8IntegerAttr(0));
  SmallVector<Value> halves = pairwise(
      rewriter, loc, elementsOf(rewriter, loc, x.bitcast(rewriter.getI8Type(), in)),
      zero, [&](Value first, Value second) -> Value {
        Value pair = vector::FromElementsOp::create(rewriter, loc, pairType,
                                                    ValueRange{first, second});
        return NVVM::ConvertF8x2ToF16x2Op::create(
            rewriter, loc, halvesType, pair, rewriter.getBoolAttr(false),
            TypeAttr::get(f8));
      });
  return fromElements(rewriter, loc, x.of(rewriter.getF16Type()), halves);
}

/// `v` (a float, or a shape of floats) converted to element type `elt`: extf
/// or truncf, or `v` itself.
Value convertFloat(PatternRewriter &rewriter, Location loc, Value v,
                   Type elt) {
  Type from = getElementTypeOrSelf(v.getType());
  if (from == elt)
    return v;
  Type to = Bits{rewriter, loc, v.getType()}.of(elt);
  if (from.getIntOrFloatBitWidth() < elt.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(rewriter, loc, to, v);
  return arith::TruncFOp::create(rewriter, loc, to, v);
}

/// f8 -> f16, exactly and without f32 (the warp mma stages f8 operands as
/// f16): an E5M2 code is the high byte of its f16; an E4M3 code's exponent and
/// mantissa shifted into an f16's, times 2^8 (bias 15 for 7), which also
/// normalizes its subnormals; the E4M3 code 0x7f is NaN.
Value widenToF16(PatternRewriter &rewriter, Location loc, Value in) {
  const Format f = *formatOf(getElementTypeOrSelf(in.getType()));
  Bits x{rewriter, loc, in.getType()};
  Type i16 = rewriter.getI16Type(), f16 = rewriter.getF16Type();
  Value code = arith::ExtUIOp::create(rewriter, loc, x.of(i16),
                                      x.bitcast(rewriter.getI8Type(), in));
  if (f.hasInf)
    return x.bitcast(f16, x.shl(code, 8));
  Value sign = x.shl(x.band(code, 0x80), 8);
  Value mag = x.band(code, 0x7f);
  Value bits = arith::OrIOp::create(rewriter, loc, sign, x.shl(mag, 7));
  Value scaled = arith::MulFOp::create(
      rewriter, loc, x.bitcast(f16, bits),
      x.constant(rewriter.getFloatAttr(f16, 256.0)));
  Value nan = x.bitcast(f16, x.bor(sign, 0x7e00));
  Value isNan = x.cmp(arith::CmpIPredicate::eq, mag, 0x7f);
  return x.select(isNan, nan, scaled);
}

/// The conversions the patterns make: integer arithmetic, or with `hardware`
/// sm_89's cvt instructions where the value is a scalar or a 1-d vector.
struct Converter {
  bool hardware = false;

  Value toF32(PatternRewriter &rewriter, Location loc, Value in) const {
    if (!hardware || !pairable(in.getType()))
      return widenToF32(rewriter, loc, in);
    Value h = widenToF16Hardware(rewriter, loc, in);
    Type f32 = Bits{rewriter, loc, in.getType()}.of(rewriter.getF32Type());
    return arith::ExtFOp::create(rewriter, loc, f32, h);
  }
  Value toF16(PatternRewriter &rewriter, Location loc, Value in) const {
    if (!hardware || !pairable(in.getType()))
      return widenToF16(rewriter, loc, in);
    return widenToF16Hardware(rewriter, loc, in);
  }
  Value fromF32(PatternRewriter &rewriter, Location loc, Value in,
                Type to) const {
    if (!hardware || !pairable(to))
      return narrowFromF32(rewriter, loc, in, to);
    return narrowFromF32Hardware(rewriter, loc, in, to);
  }
};

/// A pattern on `Op` with the pass's Converter.
template <class Op>
struct ConvertingPattern : OpRewritePattern<Op> {
  ConvertingPattern(MLIRContext *ctx, Converter convert)
      : OpRewritePattern<Op>(ctx), convert(convert) {}
  Converter convert;
};

/// A conversion from f8: to f16 directly, else widened to f32, then to the
/// result type (exact for every float type: each holds every f8 value).
struct ExtendF8 : ConvertingPattern<arith::ExtFOp> {
  using ConvertingPattern::ConvertingPattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getIn().getType()) || isFloat8(op.getType()))
      return failure();
    if (getElementTypeOrSelf(op.getType()).isF16()) {
      rewriter.replaceOp(op, convert.toF16(rewriter, op.getLoc(), op.getIn()));
      return success();
    }
    Value w = convert.toF32(rewriter, op.getLoc(), op.getIn());
    rewriter.replaceOp(op, convertFloat(rewriter, op.getLoc(), w,
                                        getElementTypeOrSelf(op.getType())));
    return success();
  }
};

/// A conversion to f8 from another float: the source as an f32 (exact from
/// f16 and bf16, which canonicalization folds `truncf(extf x)` into), then
/// narrowed once.
struct TruncateToF8 : ConvertingPattern<arith::TruncFOp> {
  using ConvertingPattern::ConvertingPattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getType()) || isFloat8(op.getIn().getType()))
      return failure();
    Value in = convertFloat(rewriter, op.getLoc(), op.getIn(),
                            rewriter.getF32Type());
    rewriter.replaceOp(op,
                       convert.fromF32(rewriter, op.getLoc(), in, op.getType()));
    return success();
  }
};

/// An integer to f8 (canonicalization folds `truncf(sitofp x)`): the
/// integer's f32, then narrowed, as the front end wrote it.
template <class IntToFp>
struct IntToF8 : ConvertingPattern<IntToFp> {
  using ConvertingPattern<IntToFp>::ConvertingPattern;
  LogicalResult matchAndRewrite(IntToFp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getType()))
      return failure();
    Bits x{rewriter, op.getLoc(), op.getType()};
    Value w = IntToFp::create(rewriter, op.getLoc(),
                              x.of(rewriter.getF32Type()), op.getIn());
    rewriter.replaceOp(op, this->convert.fromF32(rewriter, op.getLoc(), w,
                                                 op.getType()));
    return success();
  }
};

/// An f8 to an integer: the f8's f32 (exact), converted.
template <class FpToInt>
struct F8ToInt : ConvertingPattern<FpToInt> {
  using ConvertingPattern<FpToInt>::ConvertingPattern;
  LogicalResult matchAndRewrite(FpToInt op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getIn().getType()))
      return failure();
    Value w = this->convert.toF32(rewriter, op.getLoc(), op.getIn());
    rewriter.replaceOpWithNewOp<FpToInt>(op, op.getType(), w);
    return success();
  }
};

/// A comparison of f8 values (canonicalization may fold the comparison of
/// two widened values into one of the f8 values): the same on their f32s.
struct CompareF8 : ConvertingPattern<arith::CmpFOp> {
  using ConvertingPattern::ConvertingPattern;
  LogicalResult matchAndRewrite(arith::CmpFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getLhs().getType()))
      return failure();
    Value l = convert.toF32(rewriter, op.getLoc(), op.getLhs());
    Value r = convert.toF32(rewriter, op.getLoc(), op.getRhs());
    rewriter.replaceOpWithNewOp<arith::CmpFOp>(op, op.getPredicate(), l, r);
    return success();
  }
};

/// An 8-bit float constant: its bits as an i8 constant, bitcast.
struct F8Constant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    if (!isFloat8(op.getType()))
      return failure();
    Type i8 = rewriter.getI8Type();
    TypedAttr bits;
    if (auto scalar = dyn_cast<FloatAttr>(op.getValue()))
      bits = rewriter.getIntegerAttr(
          i8, scalar.getValue().bitcastToAPInt().getZExtValue());
    else if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue()))
      bits = dense.bitcast(i8);
    else
      return failure();
    Value c = arith::ConstantOp::create(rewriter, op.getLoc(), bits);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), c);
    return success();
  }
};

/// A hardware narrowing of one f32 value (narrowFromF32Hardware's odd last
/// element, paired with 0): its second lane is unused.
bool convertsOneValue(NVVM::ConvertF32x2ToF8x2Op cvt) {
  return matchPattern(cvt.getA(), m_PosZeroFloat()) &&
         llvm::all_of(cvt->getUsers(), [](Operation *user) {
           auto extract = dyn_cast<vector::ExtractOp>(user);
           return extract && !extract.hasDynamicPosition() &&
                  extract.getStaticPosition() == ArrayRef<int64_t>{0};
         });
}

/// Joins the one-value narrowings of each block two to an instruction: the
/// later one's value becomes the earlier one's second operand (its high
/// byte, lane 1) where it is defined before the earlier one, so the joined
/// instruction takes the earlier one's place. Same format, rounding,
/// saturation and relu only.
void pairSingleConversions(Operation *root) {
  DominanceInfo dominance(root);
  SmallVector<NVVM::ConvertF32x2ToF8x2Op> singles;
  root->walk([&](NVVM::ConvertF32x2ToF8x2Op cvt) {
    if (convertsOneValue(cvt))
      singles.push_back(cvt);
  });
  auto joinable = [&](NVVM::ConvertF32x2ToF8x2Op first,
                      NVVM::ConvertF32x2ToF8x2Op second) {
    return first->getBlock() == second->getBlock() &&
           first.getDstTy() == second.getDstTy() &&
           first.getRnd() == second.getRnd() &&
           first.getSat() == second.getSat() &&
           first.getRelu() == second.getRelu() &&
           dominance.properlyDominates(second.getB(), first);
  };
  for (size_t i = 0; i + 1 < singles.size();) {
    NVVM::ConvertF32x2ToF8x2Op first = singles[i], second = singles[i + 1];
    if (!joinable(first, second)) {
      ++i;
      continue;
    }
    first.getAMutable().assign(second.getB());
    OpBuilder b(first);
    b.setInsertionPointAfter(first);
    Value lane1 = vector::ExtractOp::create(b, second.getLoc(), first.getResult(), 1);
    for (Operation *user : llvm::make_early_inc_range(second->getUsers())) {
      user->getResult(0).replaceAllUsesWith(lane1);
      user->erase();
    }
    second->erase();
    i += 2;
  }
}

struct TileExpandF8Conversions
    : mlir::tessera::tile::impl::TileExpandF8ConversionsBase<
          TileExpandF8Conversions> {
  using Base::Base;

  void runOnOperation() override {
    // One walk, no folding: a folder would turn the constants' bitcasts back
    // into 8-bit float constants. No pattern creates an op another matches
    // (conversions it creates are between f32 and other types).
    RewritePatternSet patterns(&getContext());
    const Converter convert{hardwareConversions};
    patterns.add<ExtendF8, TruncateToF8, IntToF8<arith::SIToFPOp>,
                 IntToF8<arith::UIToFPOp>, F8ToInt<arith::FPToSIOp>,
                 F8ToInt<arith::FPToUIOp>, CompareF8>(&getContext(), convert);
    patterns.add<F8Constant>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    if (hardwareConversions)
      pairSingleConversions(getOperation());
    // What is left of 8-bit floats moves bits: loads, stores, selects,
    // bitcasts, loop values. Arithmetic on them has no lowering, nor has a
    // conversion between the two 8-bit formats (the front end writes it
    // through f32 and no fold joins two truncf).
    WalkResult walk = getOperation()->walk([&](Operation *op) {
      Dialect *dialect = op->getDialect(); // null for an unregistered op
      if (!dialect || !isa<arith::ArithDialect, math::MathDialect>(dialect) ||
          isa<arith::BitcastOp, arith::SelectOp>(op))
        return WalkResult::advance();
      if (llvm::none_of(op->getOperandTypes(), isFloat8) &&
          llvm::none_of(op->getResultTypes(), isFloat8))
        return WalkResult::advance();
      op->emitOpError()
          << "computes on 8-bit floats: they take no arithmetic "
             "(tile-expand-f8-conversions)";
      return WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
