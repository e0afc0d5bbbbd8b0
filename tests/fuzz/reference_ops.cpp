// reference_ops.cpp: element semantics and error bounds (see reference_ops.h).
//
// Operations are computed in double on the operands' reference values and rounded to the dtype.
// For + - * / and sqrt of f32 (or 16-bit) operands, double rounding through double (and through
// f32 for 16-bit results) is innocuous (53 >= 2*24+2, 24 >= 2*11+2), so rounding the double
// result gives exactly the correctly rounded result the target computes.
#include "reference_ops.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz_case.h"

namespace tessera::fuzz {
namespace {

constexpr double kMathRel = 1e-6;  // accurate exp, exp2, log, rsqrt, tanh (documented ~4e-7)
const double kMin32 = std::ldexp(1.0, -126);

bool exact(Elem a) { return a.e == 0; }
bool unknown(Elem a) { return !(a.e < kUnknown); }

Elem int_result(DType d, double r, bool known) { return {round_to(d, r), known ? 0.0 : kUnknown}; }

// i32 arithmetic wraps (the front end emits wrapping add, sub and mul).
int32_t wrap(int64_t x) { return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x))); }

// IEEE maximum/minimum with NaN propagation and -0 ordered below +0.
double maximum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
double minimum(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == b) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

Elem compare(std::string_view op, double a, double b) {
  bool r;
  if (op == "eq") r = a == b;
  else if (op == "ne") r = !(a == b);  // UNE: true on NaN
  else if (op == "lt") r = a < b;
  else if (op == "le") r = a <= b;
  else if (op == "gt") r = a > b;
  else if (op == "ge") r = a >= b;
  else throw std::runtime_error("reference: unknown comparison '" + std::string(op) + "'");
  return {r ? 1.0 : 0.0, 0};
}

bool is_compare(std::string_view op) {
  return op == "eq" || op == "ne" || op == "lt" || op == "le" || op == "gt" || op == "ge";
}

}  // namespace

bool is_float_dtype(DType d) { return is_floating(d); }

Elem finish_float(DType d, double r, double pe, bool exact_op, double slack) {
  Elem out{round_to(d, r), 0};
  if (pe == 0 && exact_op && slack == 0) return out;
  if (!(pe < kUnknown) || std::isnan(r) || std::isnan(pe) || !std::isfinite(out.v)) return {out.v, kUnknown};
  // The target's result t, before its own rounding, is within pe + slack of r; rounding t and r to
  // the dtype may then land one spacing apart (16-bit results: also the f32 step before). The
  // spacing is the one at the larger of |t| and |r|, not at |r|: where the bound is wide (a select
  // on an uncertain condition, then exp) t may lie binades above r and round by far more than r's
  // ulp (seed 281: exp(select(le(log x) 0) y 1) in f16, NaN log, the target's e rounded to 2.71875
  // while the bound from exp(y) ~ 0.03 allowed only e + 3e-5).
  const double top = std::max(std::fabs(r), std::fabs(out.v)) + pe + slack;
  out.e = pe + slack + ulp_of(d, top) + (d != DType::f32 ? ulp_of(DType::f32, top) : 0);
  if (std::fabs(out.v) + out.e >= max_finite(d)) out.e = kUnknown;
  return out;
}

Elem unary_op(std::string_view op, DType d, Elem a, const OpContext& ctx) {
  if (d == DType::i1) {
    if (op != "not") throw std::runtime_error("reference: '" + std::string(op) + "' on i1");
    return {a.v != 0 ? 0.0 : 1.0, a.e};
  }
  if (d == DType::i32) {
    if (unknown(a)) return {0, kUnknown};
    const auto x = static_cast<int32_t>(a.v);
    if (op == "neg") return {static_cast<double>(wrap(-static_cast<int64_t>(x))), 0};
    if (op == "abs") return {static_cast<double>(wrap(std::abs(static_cast<int64_t>(x)))), 0};
    throw std::runtime_error("reference: '" + std::string(op) + "' on i32");
  }
  const double x = a.v, ex = a.e;
  if (op == "neg") return finish_float(d, -x, ex, true);
  if (op == "abs") return finish_float(d, std::fabs(x), ex, true);
  if (unknown(a)) return {0, kUnknown};
  const bool fast = op.starts_with("fast_") && ctx.gpu;
  if (op == "exp" || op == "fast_exp") {
    const double r = std::exp(x);
    const double rel = fast ? std::ldexp(1.0, -22) + std::fabs(x) * std::ldexp(1.0, -24) : kMathRel;
    return finish_float(d, r, r * std::expm1(ex), false, rel * r + (fast ? kMin32 : 0));
  }
  if (op == "exp2") {
    const double r = std::exp2(x);
    return finish_float(d, r, r * std::expm1(ex * std::log(2.0)), false, kMathRel * r);
  }
  if (op == "log") {
    if (ex > 0 && x - ex <= 0) return {0, kUnknown};
    const double r = std::log(x);
    return finish_float(d, r, ex > 0 ? ex / (x - ex) : 0, false, kMathRel * std::fabs(r) + 1e-7);
  }
  if (op == "sqrt" || op == "fast_sqrt") {
    if (ex > 0 && x - ex < 0) return {0, kUnknown};
    const double r = std::sqrt(x);
    const double pe = ex > 0 ? ex / (std::sqrt(x - ex) + r) : 0;
    if (!fast) return finish_float(d, r, pe, true);
    return finish_float(d, r, pe, false, std::ldexp(r, -21) + std::ldexp(1.0, -63));
  }
  if (op == "rsqrt") {
    if (ex > 0 && x - ex <= 0) return {0, kUnknown};
    const double r = 1 / std::sqrt(x);
    return finish_float(d, r, ex > 0 ? 0.5 * ex * std::pow(x - ex, -1.5) : 0, false, kMathRel * std::fabs(r));
  }
  if (op == "tanh" || op == "fast_tanh") {
    const double r = std::tanh(x);
    const double slack = fast ? std::ldexp(std::fabs(r), -10) + 1e-6 : kMathRel * std::fabs(r) + 1e-9;
    return finish_float(d, r, ex, false, slack);
  }
  throw std::runtime_error("reference: unknown unary op '" + std::string(op) + "'");
}

Elem binary_op(std::string_view op, DType d, Elem a, Elem b, bool a_product, bool b_product, const OpContext& ctx) {
  if (is_compare(op)) {
    if (unknown(a) || unknown(b)) return {0, kUnknown};
    if (d == DType::i1) {
      // Booleans compare as the C++ values false < true.
      return compare(op, a.v, b.v);
    }
    if (!exact(a) || !exact(b)) {
      if (!std::isfinite(a.v) || !std::isfinite(b.v) || std::fabs(a.v - b.v) <= a.e + b.e) return {0, kUnknown};
    }
    return compare(op, a.v, b.v);
  }
  if (d == DType::i1) {
    // and with a known false, or with a known true, is known whatever the other operand.
    if (op == "and") {
      if ((exact(a) && a.v == 0) || (exact(b) && b.v == 0)) return {0, 0};
      return {a.v != 0 && b.v != 0 ? 1.0 : 0.0, std::max(a.e, b.e)};
    }
    if (op == "or") {
      if ((exact(a) && a.v != 0) || (exact(b) && b.v != 0)) return {1, 0};
      return {a.v != 0 || b.v != 0 ? 1.0 : 0.0, std::max(a.e, b.e)};
    }
    throw std::runtime_error("reference: '" + std::string(op) + "' on i1");
  }
  if (d == DType::i32) {
    if (unknown(a) || unknown(b)) return {0, kUnknown};
    const auto x = static_cast<int64_t>(a.v), y = static_cast<int64_t>(b.v);
    if (op == "add") return {static_cast<double>(wrap(x + y)), 0};
    if (op == "sub") return {static_cast<double>(wrap(x - y)), 0};
    if (op == "mul") return {static_cast<double>(wrap(x * y)), 0};
    if (op == "max") return {static_cast<double>(std::max(x, y)), 0};
    if (op == "min") return {static_cast<double>(std::min(x, y)), 0};
    if (op == "div") {
      if (y == 0) return {0, kUnknown};  // an unspecified value
      if (x == INT32_MIN && y == -1) return {static_cast<double>(INT32_MIN), 0};
      return {static_cast<double>(x / y), 0};
    }
    throw std::runtime_error("reference: '" + std::string(op) + "' on i32");
  }
  const double x = a.v, y = b.v;
  if (op == "max" || op == "min") {
    const double r = op == "max" ? maximum(x, y) : minimum(x, y);
    if ((std::isnan(x) && !exact(a)) || (std::isnan(y) && !exact(b))) return {0, kUnknown};
    return finish_float(d, r, std::max(a.e, b.e), true);
  }
  if (unknown(a) || unknown(b)) return {0, kUnknown};
  const double ex = a.e, ey = b.e;
  // A result of inexact operands is inexact even where the propagated bound vanishes (a zero of
  // uncertain sign divided by an infinity, or times zero): its sign may still differ.
  const double floor = ex > 0 || ey > 0 ? DBL_MIN : 0;
  if (op == "add" || op == "sub") {
    const double r = op == "add" ? x + y : x - y;
    // An operand product fused into an fma on the GPU is not rounded on its own.
    double slack = 0;
    if (ctx.gpu) {
      if (a_product) slack += ulp_of(d, x);
      if (b_product) slack += ulp_of(d, y);
    }
    return finish_float(d, r, ex + ey, true, slack);  // ex + ey > 0 where an operand is inexact
  }
  if (op == "mul") {
    const double r = x * y;
    const double pe = std::max(floor, std::fabs(x) * ey + std::fabs(y) * ex + ex * ey);
    return finish_float(d, r, pe, true);
  }
  if (op == "div" || op == "fast_div") {
    if (ey > 0 && ey >= std::fabs(y)) return {0, kUnknown};
    const double r = x / y;
    const double pe = ex == 0 && ey == 0 ? 0 : std::max(floor, (ex + std::fabs(r) * ey) / (std::fabs(y) - ey));
    if (op == "div" || !ctx.gpu) return finish_float(d, r, pe, true);
    return finish_float(d, r, pe, false, 2 * ulp_of(DType::f32, r) + kMin32);
  }
  throw std::runtime_error("reference: unknown binary op '" + std::string(op) + "'");
}

Elem cast_op(DType from, DType to, Elem a) {
  if (from == to) return a;
  if (to == DType::i1) {  // x != 0 (NaN: true)
    if (unknown(a)) return {0, kUnknown};
    if (!exact(a) && (std::isnan(a.v) || std::fabs(a.v) <= a.e)) return {0, kUnknown};
    return {a.v != 0 ? 1.0 : 0.0, 0};
  }
  if (from == DType::i1) return {a.v != 0 ? 1.0 : 0.0, a.e};  // to i32 or a float: 0 or 1
  if (from == DType::i32) {
    if (unknown(a)) return {0, kUnknown};
    Elem r{round_to(to, a.v), 0};
    // A 16-bit float from an integer beyond f32's exact range: rounded once or twice.
    if (to != DType::f32 && to != DType::i32 && std::fabs(a.v) > 0x1p24) r.e = ulp_of(to, r.v);
    return r;
  }
  if (to == DType::i32) {  // fptosi: truncation; out of range or NaN is unspecified
    if (unknown(a) || std::isnan(a.v) || std::fabs(std::trunc(a.v)) >= 0x1p31) return {0, kUnknown};
    if (std::trunc(a.v - a.e) != std::trunc(a.v + a.e)) return {0, kUnknown};
    // An integer has no -0: -0.5 and -0 truncate to 0 (+0 when cast back to a float).
    const double t = std::trunc(a.v);
    return {t == 0 ? 0.0 : t, 0};
  }
  // Float to float: one rounding (f16 <-> bf16 go through f32 exactly).
  return finish_float(to, a.v, a.e, true);
}

Elem select_op(DType d, Elem c, Elem x, Elem y) {
  if (!unknown(c) && exact(c)) return c.v != 0 ? x : y;
  // An unknown condition: either operand.
  if (!is_float_dtype(d)) {
    if (exact(x) && exact(y) && x.v == y.v) return x;
    return {x.v, kUnknown};
  }
  if (unknown(x) || unknown(y) || !std::isfinite(x.v) || !std::isfinite(y.v)) return {x.v, kUnknown};
  const bool same = x.v == y.v && std::signbit(x.v) == std::signbit(y.v);
  return {x.v, std::max(same ? 0.0 : DBL_MIN, std::fabs(x.v - y.v) + std::max(x.e, y.e))};
}

}  // namespace tessera::fuzz
