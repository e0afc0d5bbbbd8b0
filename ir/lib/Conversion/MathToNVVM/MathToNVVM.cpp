//===- MathToNVVM.cpp - libdevice-free lowering of scalar math ops --------===//
//
// Implements `convert-math-to-nvvm`. The NVPTX backend has no instructions for
// most transcendental functions: `llvm.exp.f32`, `llvm.log.f32`,
// `llvm.sin.f32`,
// ... fail instruction selection (checked with llc -mcpu=sm_90 -mattr=+ptx90;
// only exp2, sqrt, fabs, floor/ceil/trunc/round(even)/rint, fma, min/max,
// copysign and powi select). This pass rewrites the scalar math ops that
// `convert-math-to-llvm` would turn into such intrinsics (or not convert at
// all) into arithmetic around the PTX approximate instructions ex2, lg2, sin,
// cos and rsqrt, called with `llvm.call_intrinsic`, plus short polynomials
// where those instructions are only accurate in absolute terms (log near 1,
// sin near 0, expm1/log1p/tanh/erf for small arguments).
//
// Measured on an H200 against double-precision libm (8192 points per
// function): relative error <= 4e-7 for exp, exp2, expm1, log, log2, log10,
// log1p, rsqrt, tanh, sinh, cosh, asinh, acosh, atanh, cbrt and erf; pow
// 1.5e-6 (the error of log2(x) grows with |y|); sin and cos on [-pi, pi]
// 3.7e-7 absolute (sin.approx/cos.approx), so relative error is large near
// their zeros other than sin's at 0; erfc 3e-7 absolute; tan follows sin/cos.
// atan, atan2, asin and acos have no lowering here and are rejected.
//
// Ops marked `afn` (the DSL's fast_exp, fast_sqrt, fast_tanh, fast_div) take
// the hardware approximations instead: exp as ex2.approx.ftz(x * log2(e))
// (relative error <= 2^-22 + |x| * 2^-24, results below 2^-126 flush to
// zero), sqrt.approx.f32, tanh.approx.f32 (about 2^-11 relative) and
// div.full.f32 (2 ulp) for arith.divf.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/MathToNVVM/MathToNVVM.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <numbers>

#define DEBUG_TYPE "convert-math-to-nvvm"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTMATHTONVVM
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using mlir::tessera::tile::isApproximate;
using mlir::tessera::tile::TileDialect;

namespace {

/// Builds f32 scalar arithmetic at one insertion point.
struct F32Builder {
  OpBuilder &b;
  Location loc;

  Type f32() { return b.getF32Type(); }
  Value c(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value neg(Value x) { return arith::NegFOp::create(b, loc, x); }
  Value abs(Value x) { return math::AbsFOp::create(b, loc, x); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  Value floor(Value x) { return math::FloorOp::create(b, loc, x); }
  Value copysign(Value mag, Value sign) {
    return math::CopySignOp::create(b, loc, mag, sign);
  }
  Value cmp(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value intrinsic(StringRef name, Value x) {
    return LLVM::CallIntrinsicOp::create(b, loc, f32(), b.getStringAttr(name),
                                         ValueRange{x})
        .getResult(0);
  }
  /// Horner evaluation of sum(coeffs[i] * x^i).
  Value poly(Value x, ArrayRef<double> coeffs) {
    Value r = c(coeffs.back());
    for (double k : llvm::reverse(coeffs.drop_back())) {
      Value m = mul(r, x);
      r = add(m, c(k));
    }
    return r;
  }

  // PTX approximate instructions.
  Value ex2(Value x) { return intrinsic("llvm.nvvm.ex2.approx.f32", x); }
  Value lg2(Value x) { return intrinsic("llvm.nvvm.lg2.approx.f", x); }
  Value sinApprox(Value x) { return intrinsic("llvm.nvvm.sin.approx.f", x); }
  Value cosApprox(Value x) { return intrinsic("llvm.nvvm.cos.approx.f", x); }
  Value rsqrtApprox(Value x) {
    return intrinsic("llvm.nvvm.rsqrt.approx.f", x);
  }
  Value sqrtApprox(Value x) { return intrinsic("llvm.nvvm.sqrt.approx.f", x); }
  /// tanh.approx.f32 has no LLVM intrinsic: inline PTX.
  Value tanhApprox(Value x) {
    return LLVM::InlineAsmOp::create(
               b, loc, f32(), ValueRange{x}, "tanh.approx.f32 $0, $1;", "=f,f",
               /*has_side_effects=*/false, /*is_align_stack=*/false,
               LLVM::tailcallkind::TailCallKind::None,
               LLVM::AsmDialectAttr(), ArrayAttr())
        .getResult(0);
  }
  Value divFull(Value x, Value y) {
    return LLVM::CallIntrinsicOp::create(b, loc, f32(),
                                         b.getStringAttr("llvm.nvvm.div.full"),
                                         ValueRange{x, y})
        .getResult(0);
  }
  /// e^x = 2^(x * log2 e) on the ex2 unit, flushing subnormal results.
  Value fastExp(Value x) {
    Value t = mul(x, c(std::numbers::log2e));
    return intrinsic("llvm.nvvm.ex2.approx.ftz.f32", t);
  }

  // Composite functions. Every operand is computed in its own statement so
  // that the emitted order does not depend on the compiler's argument
  // evaluation order.
  /// exp(x) = 2^t * (1 + e) where t = x*log2(e) rounded and e = x - t*ln2
  /// (two fma with ln2 split in a high and a low float: e is within 2^-41 of
  /// its exact value for |x| <= 104); plain 2^t for |x| >= 80 where the
  /// result is 0 or inf anyway.
  Value exp(Value x) {
    auto [corrected, r] = expParts(x, "llvm.nvvm.ex2.approx.f32");
    Value finite = cmp(arith::CmpFPredicate::OLT, abs(x),
                       c(TileDialect::getExpInRangeLimit()));
    return select(finite, corrected, r);
  }
  /// exp(x) for |x| < 80 (known to the caller): the corrected value of
  /// exp() alone. ex2.approx.ftz gives what ex2.approx does there (2^t is
  /// normal, a subnormal t gives 1 either way), so the result is exp(x) bit
  /// for bit.
  Value expInRange(Value x) {
    return expParts(x, "llvm.nvvm.ex2.approx.ftz.f32").first;
  }
  /// exp's corrected value 2^t * (1 + e) and 2^t, with 2^t from `ex2`.
  std::pair<Value, Value> expParts(Value x, StringRef ex2) {
    float ln2Hi = static_cast<float>(std::numbers::ln2);
    double ln2Lo = std::numbers::ln2 - static_cast<double>(ln2Hi);
    Value t = mul(x, c(static_cast<float>(std::numbers::log2e)));
    Value r = intrinsic(ex2, t);
    Value negT = neg(t);
    Value e = math::FmaOp::create(b, loc, negT, c(ln2Hi), x);
    e = math::FmaOp::create(b, loc, negT, c(ln2Lo), e);
    return {math::FmaOp::create(b, loc, r, e, r), r};
  }
  /// log((1 + s) / (1 - s)) = 2 * (s + s^3/3 + ... + s^11/11), |s| <= 1/4.
  Value logSeries(Value s) {
    Value s2 = mul(s, s);
    Value p = poly(s2, {2.0, 2.0 / 3, 2.0 / 5, 2.0 / 7, 2.0 / 9, 2.0 / 11});
    return mul(s, p);
  }
  /// A logarithm of x: lg2.approx(x) * lg2Scale, except for x in (0.6, 1.6)
  /// where lg2.approx is only accurate in absolute terms; there
  /// ln(x) * lnScale from the series with s = (x - 1) / (x + 1).
  Value logarithm(Value x, double lg2Scale, double lnScale) {
    using P = arith::CmpFPredicate;
    Value one = c(1.0);
    Value num = sub(x, one);
    Value s = div(num, add(x, one));
    Value near = logSeries(s);
    if (lnScale != 1.0) {
      Value k = c(lnScale);
      near = mul(near, k);
    }
    Value far = lg2(x);
    if (lg2Scale != 1.0) {
      Value k = c(lg2Scale);
      far = mul(far, k);
    }
    Value above = cmp(P::OGT, x, c(0.6));
    Value below = cmp(P::OLT, x, c(1.6));
    Value isNear = arith::AndIOp::create(b, loc, above, below);
    return select(isNear, near, far);
  }
  Value log(Value x) { return logarithm(x, std::numbers::ln2, 1.0); }

  /// expm1: Taylor polynomial below |x| = 0.35, exp(x) - 1 above.
  Value expm1(Value x) {
    Value one = c(1.0);
    Value a = abs(x);
    Value p = poly(x, {1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720,
                       1.0 / 5040, 1.0 / 40320});
    Value small = mul(x, p);
    Value big = sub(exp(x), one);
    Value isSmall = cmp(arith::CmpFPredicate::OLT, a, c(0.35));
    return select(isSmall, small, big);
  }

  /// log1p: series in s = x / (2 + x) below |x| = 0.5, log(1 + x) above.
  Value log1p(Value x) {
    Value one = c(1.0), two = c(2.0);
    Value s = div(x, add(x, two));
    Value small = logSeries(s);
    Value big = log(add(x, one));
    Value isSmall = cmp(arith::CmpFPredicate::OLT, abs(x), c(0.5));
    return select(isSmall, small, big);
  }

  /// sin: Taylor polynomial below |x| = 0.5 (sin.approx is only accurate in
  /// absolute terms), sin.approx above.
  Value sin(Value x) {
    Value x2 = mul(x, x);
    Value p = poly(x2, {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880});
    Value small = mul(x, p);
    Value big = sinApprox(x);
    Value isSmall = cmp(arith::CmpFPredicate::OLT, abs(x), c(0.5));
    return select(isSmall, small, big);
  }

  /// tanh: odd Taylor polynomial below |x| = 0.55, 1 - 2/(exp(2|x|) + 1)
  /// above (both accurate to a few ulp of f32). Above, a relative error d in
  /// e = exp(2|x|) moves the result by at most 2e/(e + 1)^2 * d <= 0.375 d,
  /// and 1 - 2r >= 0.5: so e is ex2.approx(2|x| log2 e) (relative error
  /// under 2^-22 + |2x| 2^-24, |x| <= 9 before tanh rounds to 1) and 1/(e+1)
  /// the approximate reciprocal (1 ulp; e + 1 >= 4), a result within 2e-7.
  Value tanh(Value x) {
    Value one = c(1.0);
    Value a = abs(x);
    Value t = mul(a, c(2.0 * std::numbers::log2e));
    Value e = intrinsic("llvm.nvvm.ex2.approx.ftz.f32", t);
    Value r = intrinsic("llvm.nvvm.rcp.approx.ftz.f", add(e, one));
    Value big = math::FmaOp::create(b, loc, c(-2.0), r, one);
    Value x2 = mul(x, x);
    Value p =
        poly(x2, {1.0, -1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835,
                  -1382.0 / 155925, 21844.0 / 6081075, -929569.0 / 638512875});
    Value small = mul(x, p);
    Value isSmall = cmp(arith::CmpFPredicate::OLT, a, c(0.55));
    Value signedBig = copysign(big, x);
    return select(isSmall, small, signedBig);
  }

  /// erf: Maclaurin series below |x| = 0.5, Abramowitz-Stegun 7.1.26 above
  /// (absolute error below 1.5e-7).
  Value erf(Value x) {
    Value one = c(1.0);
    Value a = abs(x);
    Value x2 = mul(x, x);
    double s = 2.0 / std::sqrt(std::numbers::pi);
    Value series =
        poly(x2, {s, -s / 3, s / 10, -s / 42, s / 216, -s / 1320, s / 9360});
    Value small = mul(x, series);
    Value t = div(one, add(one, mul(a, c(0.3275911))));
    Value q = poly(
        t, {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429});
    Value p = mul(t, q);
    Value e = exp(neg(x2));
    Value big = sub(one, mul(p, e));
    Value isSmall = cmp(arith::CmpFPredicate::OLT, a, c(0.5));
    Value signedBig = copysign(big, x);
    return select(isSmall, small, signedBig);
  }

  /// pow(x, y) = 2^(y * log2|x|), negated for x < 0 and odd integer y, NaN
  /// for x < 0 and non-integer y; pow(x, 0) = pow(1, y) = 1.
  Value pow(Value x, Value y) {
    using P = arith::CmpFPredicate;
    Value zero = c(0.0), one = c(1.0), half = c(0.5), nan = c(std::nan(""));
    Value l = lg2(abs(x));
    Value r = ex2(mul(y, l));
    Value yInt = cmp(P::OEQ, floor(y), y);
    Value yHalf = mul(y, half);
    Value yHalfFrac = cmp(P::ONE, floor(yHalf), yHalf);
    Value yOdd = arith::AndIOp::create(b, loc, yInt, yHalfFrac);
    Value negR = neg(r);
    Value negResult = select(yInt, select(yOdd, negR, r), nan);
    r = select(cmp(P::OLT, x, zero), negResult, r);
    Value yZero = cmp(P::OEQ, y, zero);
    Value xOne = cmp(P::OEQ, x, one);
    Value isOne = arith::OrIOp::create(b, loc, yZero, xOne);
    return select(isOne, one, r);
  }

  Value tan(Value x) {
    Value s = sin(x);
    Value co = cosApprox(x);
    return div(s, co);
  }
  /// sinh = (e + e / (e + 1)) / 2 with e = expm1(x) below |x| = 1,
  /// (u - 1/u) / 2 with u = exp(x) above.
  Value sinh(Value x) {
    Value one = c(1.0), half = c(0.5);
    Value e = expm1(x);
    Value q = div(e, add(e, one));
    Value small = mul(add(e, q), half);
    Value u = exp(x);
    Value inv = div(one, u);
    Value big = mul(sub(u, inv), half);
    Value isSmall = cmp(arith::CmpFPredicate::OLT, abs(x), one);
    return select(isSmall, small, big);
  }
  /// cosh = (u + 1/u) / 2 with u = exp(|x|).
  Value cosh(Value x) {
    Value one = c(1.0), half = c(0.5);
    Value u = exp(abs(x));
    Value inv = div(one, u);
    return mul(add(u, inv), half);
  }
  /// asinh|x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), with the sign of x.
  Value asinh(Value x) {
    Value one = c(1.0);
    Value a = abs(x);
    Value x2 = mul(a, a);
    Value root = sqrt(add(x2, one));
    Value q = div(x2, add(one, root));
    Value r = log1p(add(a, q));
    return copysign(r, x);
  }
  /// acosh = log(x + sqrt((x - 1) * (x + 1))).
  Value acosh(Value x) {
    Value one = c(1.0);
    Value xm1 = sub(x, one);
    Value xp1 = add(x, one);
    Value root = sqrt(mul(xm1, xp1));
    return log(add(x, root));
  }
  /// atanh = log1p(2x / (1 - x)) / 2 below |x| = 0.5,
  /// log((1 + x) / (1 - x)) / 2 above.
  Value atanh(Value x) {
    Value one = c(1.0), two = c(2.0), half = c(0.5);
    Value oneMinus = sub(one, x);
    Value num = mul(x, two);
    Value small = log1p(div(num, oneMinus));
    Value onePlus = add(one, x);
    Value big = log(div(onePlus, oneMinus));
    Value isSmall = cmp(arith::CmpFPredicate::OLT, abs(x), half);
    return mul(select(isSmall, small, big), half);
  }
  /// cbrt = sign(x) * 2^(log2|x| / 3).
  Value cbrt(Value x) {
    Value third = c(1.0 / 3);
    Value l = lg2(abs(x));
    Value r = ex2(mul(l, third));
    return copysign(r, x);
  }
};

/// Returns the f32 replacement values of `op` (one per result), or nullopt if
/// the op is left to convert-math-to-llvm.

std::optional<SmallVector<Value>> expand(Operation *op, F32Builder &f,
                                         ArrayRef<Value> in) {
  using Result = std::optional<SmallVector<Value>>;
  auto one = [](Value v) -> Result { return SmallVector<Value>{v}; };
  if (isApproximate(op)) {
    Result fast =
        TypeSwitch<Operation *, Result>(op)
            .Case([&](math::ExpOp) { return one(f.fastExp(in[0])); })
            .Case([&](math::SqrtOp) { return one(f.sqrtApprox(in[0])); })
            .Case([&](math::TanhOp) { return one(f.tanhApprox(in[0])); })
            .Case([&](arith::DivFOp) { return one(f.divFull(in[0], in[1])); })
            .Default([](Operation *) -> Result { return std::nullopt; });
    if (fast)
      return fast;
  }
  return TypeSwitch<Operation *, Result>(op)
      .Case([&](math::ExpOp) {
        return one(op->hasAttr(TileDialect::getExpInRangeAttrName())
                       ? f.expInRange(in[0])
                       : f.exp(in[0]));
      })
      .Case([&](math::Exp2Op) { return one(f.ex2(in[0])); })
      .Case([&](math::ExpM1Op) { return one(f.expm1(in[0])); })
      .Case([&](math::LogOp) { return one(f.log(in[0])); })
      .Case([&](math::Log2Op) {
        return one(f.logarithm(in[0], 1.0, std::numbers::log2e));
      })
      .Case([&](math::Log10Op) {
        return one(f.logarithm(in[0], std::numbers::ln2 / std::numbers::ln10,
                               std::numbers::log10e));
      })
      .Case([&](math::Log1pOp) { return one(f.log1p(in[0])); })
      .Case([&](math::RsqrtOp) { return one(f.rsqrtApprox(in[0])); })
      .Case([&](math::TanhOp) { return one(f.tanh(in[0])); })
      .Case([&](math::SinOp) { return one(f.sin(in[0])); })
      .Case([&](math::CosOp) { return one(f.cosApprox(in[0])); })
      .Case([&](math::SincosOp) {
        Value s = f.sin(in[0]);
        Value co = f.cosApprox(in[0]);
        return Result(SmallVector<Value>{s, co});
      })
      .Case([&](math::TanOp) { return one(f.tan(in[0])); })
      .Case([&](math::PowFOp) { return one(f.pow(in[0], in[1])); })
      .Case([&](math::SinhOp) { return one(f.sinh(in[0])); })
      .Case([&](math::CoshOp) { return one(f.cosh(in[0])); })
      .Case([&](math::ErfOp) { return one(f.erf(in[0])); })
      .Case([&](math::ErfcOp) {
        Value unit = f.c(1.0);
        return one(f.sub(unit, f.erf(in[0])));
      })
      .Case([&](math::AsinhOp) { return one(f.asinh(in[0])); })
      .Case([&](math::AcoshOp) { return one(f.acosh(in[0])); })
      .Case([&](math::AtanhOp) { return one(f.atanh(in[0])); })
      .Case([&](math::CbrtOp) { return one(f.cbrt(in[0])); })
      .Default([](Operation *) -> Result { return std::nullopt; });
}

/// Math ops with neither an NVPTX instruction nor an expansion here.
bool isUnsupported(Operation *op) {
  return isa<math::AtanOp, math::Atan2Op, math::AsinOp, math::AcosOp>(op);
}

struct ConvertMathToNVVMPass
    : mlir::tessera::impl::ConvertMathToNVVMBase<ConvertMathToNVVMPass> {
  using ConvertMathToNVVMBase::ConvertMathToNVVMBase;

  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<math::MathDialect>(op->getDialect()) ||
          (isa<arith::DivFOp>(op) && isApproximate(op)))
        ops.push_back(op);
    });
    bool failed = false;
    for (Operation *op : ops) {
      if (mlir::failed(rewrite(op)))
        failed = true;
    }
    if (failed)
      signalPassFailure();
  }

  LogicalResult rewrite(Operation *op) {
    Type type = op->getResult(0).getType();
    OpBuilder b(op);
    F32Builder f{b, op->getLoc()};
    bool unsupported = isUnsupported(op);
    bool handled = unsupported || isExpanded(op);
    if (!handled)
      return success();
    if (!type.isF32() && !type.isF16() && !type.isBF16())
      return op->emitOpError()
             << "on " << type
             << " is not supported by the gpu target: only scalar f32, f16 "
                "and bf16 have a lowering without libdevice";
    if (unsupported)
      return op->emitOpError("has no lowering without libdevice on the gpu "
                             "target");
    SmallVector<Value> in;
    for (Value v : op->getOperands())
      in.push_back(
          v.getType() == f.f32()
              ? v
              : arith::ExtFOp::create(b, op->getLoc(), f.f32(), v).getResult());
    std::optional<SmallVector<Value>> out = expand(op, f, in);
    assert(out && "isExpanded and expand disagree");
    for (auto [result, v] : llvm::zip(op->getResults(), *out)) {
      Value r = v;
      if (result.getType() != f.f32())
        r = arith::TruncFOp::create(b, op->getLoc(), result.getType(), v);
      result.replaceAllUsesWith(r);
    }
    op->erase();
    return success();
  }

  static bool isExpanded(Operation *op) {
    // sqrt and division have accurate NVPTX instructions: only their f32
    // (or 16-bit) approximate forms are rewritten here.
    if (isApproximate(op) && isa<math::SqrtOp, arith::DivFOp>(op)) {
      Type t = op->getResult(0).getType();
      return t.isF32() || t.isF16() || t.isBF16();
    }
    return isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
               math::Log2Op, math::Log10Op, math::Log1pOp, math::RsqrtOp,
               math::TanhOp, math::SinOp, math::CosOp, math::SincosOp,
               math::TanOp, math::PowFOp, math::SinhOp, math::CoshOp,
               math::ErfOp, math::ErfcOp, math::AsinhOp, math::AcoshOp,
               math::AtanhOp, math::CbrtOp>(op);
  }
};

} // namespace
