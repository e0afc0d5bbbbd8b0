// reference_ops.h: the element semantics of the reference interpreter, with an error bound.
//
// Each element of a reference value is an Elem: `v`, the value the target should compute, rounded
// to the node's dtype after every operation (16-bit floats are computed in f32 and rounded per
// operation, as the tile dialect specifies), and `e`, a bound on how far a correct target's value
// may be from v (running error analysis). e = 0: the target must produce exactly v (integers; and
// floats computed only by correctly rounded operations: + - * / sqrt, max/min, neg/abs, casts,
// compares, selects); 0 < e < inf: |target - v| <= e; e = inf (kUnknown): any value is correct
// (integer division by zero, a compare of values closer than their bounds, a result near
// overflow, a NaN or infinity reached through an inexact operation). The bounds assume: accurate
// math (exp exp2 log rsqrt tanh) within 1e-6 relative (docs: about 4e-7); on the GPU the fast_
// forms within their documented bounds (docs/ast-format.md), and a multiply feeding an add may
// be contracted into an fma. Sums accumulate in f32 in any order.
#pragma once

#include <tessera/dtype.h>

#include <limits>
#include <string_view>

namespace tessera::fuzz {

inline constexpr double kUnknown = std::numeric_limits<double>::infinity();

struct Elem {
  double v = 0;
  double e = 0;
};

struct OpContext {
  bool gpu = false;  // fast_ approximations and fma contraction
};

// A float result: r is the exact (double) result of the op on the operands' reference values, pe
// the bound propagated from the operands' bounds, exact_op whether the target rounds the op
// correctly, slack an extra absolute bound for the op's own inaccuracy.
Elem finish_float(DType d, double r, double pe, bool exact_op, double slack = 0);

// (OP TYPE X) for neg abs not exp exp2 log sqrt rsqrt tanh fast_exp fast_sqrt fast_tanh; `d` is
// the dtype of X and of the result. Throws std::runtime_error on an op that does not apply.
Elem unary_op(std::string_view op, DType d, Elem a, const OpContext& ctx);

// (OP TYPE X Y) for add sub mul div fast_div max min and or eq ne lt le gt ge; `d` is the dtype of
// the operands. `a_product` / `b_product`: the operand is a float product the GPU may have fused
// into this add or sub.
Elem binary_op(std::string_view op, DType d, Elem a, Elem b, bool a_product, bool b_product, const OpContext& ctx);

// (cast TYPE X) from `from` to `to`.
Elem cast_op(DType from, DType to, Elem a);

// (select TYPE C X Y) of dtype d.
Elem select_op(DType d, Elem c, Elem x, Elem y);

bool is_float_dtype(DType d);

}  // namespace tessera::fuzz
