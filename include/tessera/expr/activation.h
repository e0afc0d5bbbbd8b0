// tessera/expr/activation.h: the activation functions of neural networks, for fused epilogues.
//
// Defines sigmoid, silu and gelu_tanh as compositions of the existing nodes (exp, fast_div, + *),
// so they add no AST node and run on every target. Each is written in the form that has no
// cancellation: gelu_tanh(x) = 0.5 x (1 + tanh(z)) is computed as x / (1 + e^(-2z)), which is
// the same function (0.5 (1 + tanh z) = sigmoid(2z)) but loses nothing where tanh(z) is near -1,
// and needs neither tanh's polynomial for small arguments nor its sign fix-up. On the GPU, `exp` is the accurate exponential (relative error <= 4e-7) and the
// division div.full.f32 (2 ulp), so each result is within 2e-6 relative of the exact function of
// the f32 input, plus |u| 2^-21 for the f32 rounding of the exponent's argument u (on any target;
// it matters only where e^u is far from 1, so the result is tiny or saturated); on the CPU
// target exp and the division are exact. Float tiles only (f32, f16, bf16), as for exp.
// Assumes unary_expr.h and binary_expr.h.
#pragma once

#include "tessera/expr/binary_expr.h"
#include "tessera/expr/unary_expr.h"

namespace tessera {

namespace detail {
// The form every activation here takes: numerator / (1 + e^u).
template <class N, Expr U>
constexpr auto over_one_plus_exp(N numerator, U u) {
  return fast_div(numerator, c<1.0> + exp(u));
}
}  // namespace detail

// sigmoid(x) = 1 / (1 + e^-x).
template <detail::Expr X>
constexpr auto sigmoid(X x) {
  return detail::over_one_plus_exp(c<1.0>, -x);
}

// silu(x) = x sigmoid(x) = x / (1 + e^-x) (also called swish).
template <detail::Expr X>
constexpr auto silu(X x) {
  return detail::over_one_plus_exp(x, -x);
}

// gelu_tanh(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GELU's tanh approximation
// (PyTorch's gelu(x, approximate="tanh")), computed as x / (1 + e^(x (k1 + k2 x^2))) with
// k1 = -2 sqrt(2/pi) and k2 = 0.044715 k1.
template <detail::Expr X>
constexpr auto gelu_tanh(X x) {
  constexpr double k1 = -2.0 * 0.7978845608028654;
  constexpr double k2 = 0.044715 * k1;
  return detail::over_one_plus_exp(x, x * (c<k1> + c<k2> * (x * x)));
}

}  // namespace tessera
