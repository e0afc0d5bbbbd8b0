// tessera/expr/unary_expr.h: elementwise one-operand nodes and dtype conversion.
//
// Defines Unary<Op, X> ((neg|exp|exp2|log|sqrt|rsqrt|tanh|fast_exp|fast_sqrt|fast_tanh|abs|not
// TYPE X)) and Cast<D, X> ((cast TYPE X)), with the user functions exp, exp2, log, sqrt, rsqrt,
// tanh and the approximate fast_exp, fast_sqrt, fast_tanh (float tiles only), abs and unary -
// (f32/f16/bf16/i32), ! (i1 only) and cast<D>(x). Result shape = operand shape.
// The fast_ functions trade accuracy for speed on the GPU, visibly at each use (their error
// bounds are in docs/ast-format.md); on the CPU target they compute the accurate function.
// The operators live in tessera::detail, found by argument-dependent lookup on node types; the
// functions live in tessera and are re-exported to tessera::detail by dsl.h, so an unqualified
// `exp(t)` also resolves. Assumes expr_base.h.
#pragma once

#include "tessera/expr/expr_base.h"

namespace tessera::detail {

enum class UnaryKind { floating, numeric, boolean };

#define TESSERA_UNARY_OP(TAG, NAME, KIND)           \
  struct TAG {                                      \
    static constexpr auto name = fixed_string(NAME); \
    static constexpr auto kind = UnaryKind::KIND;   \
  };
TESSERA_UNARY_OP(op_neg, "neg", numeric)
TESSERA_UNARY_OP(op_exp, "exp", floating)
TESSERA_UNARY_OP(op_exp2, "exp2", floating)
TESSERA_UNARY_OP(op_log, "log", floating)
TESSERA_UNARY_OP(op_sqrt, "sqrt", floating)
TESSERA_UNARY_OP(op_rsqrt, "rsqrt", floating)
TESSERA_UNARY_OP(op_tanh, "tanh", floating)
TESSERA_UNARY_OP(op_fast_exp, "fast_exp", floating)
TESSERA_UNARY_OP(op_fast_sqrt, "fast_sqrt", floating)
TESSERA_UNARY_OP(op_fast_tanh, "fast_tanh", floating)
TESSERA_UNARY_OP(op_abs, "abs", numeric)
TESSERA_UNARY_OP(op_not, "not", boolean)
#undef TESSERA_UNARY_OP

// (OP TYPE X)
template <class Op, class X>
struct Unary : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = typename X::shape;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list(Op::name, etype_text_v<Unary>, node<X, Ctx>{}); }
};

template <class Op, Expr X>
constexpr Unary<Op, X> make_unary(X) {
  static_assert(!is_float8(X::dtype), TESSERA_FLOAT8_DATA_ONLY);
  if constexpr (Op::kind == UnaryKind::floating)
    static_assert(is_floating(X::dtype),
                  "tessera: math functions (exp, exp2, log, sqrt, rsqrt, tanh, fast_...) need a floating-point tile "
                  "(f32, f16, bf16); use tessera::cast<...>");
  else if constexpr (Op::kind == UnaryKind::numeric)
    static_assert(X::dtype != DType::i1, "tessera: - and abs need a numeric tile, not i1");
  else
    static_assert(X::dtype == DType::i1, "tessera: ! needs an i1 (boolean) tile");
  return {};
}

template <Expr X> constexpr auto operator-(X x) { return make_unary<op_neg>(x); }
template <Expr X> constexpr auto operator!(X x) { return make_unary<op_not>(x); }

// (cast TYPE X)
template <DType D, class X>
struct Cast : ExprBase {
  static constexpr DType dtype = D;
  using shape = typename X::shape;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("cast", etype_text_v<Cast>, node<X, Ctx>{}); }
};

}  // namespace tessera::detail

namespace tessera {

template <detail::Expr X> constexpr auto exp(X x) { return detail::make_unary<detail::op_exp>(x); }
template <detail::Expr X> constexpr auto exp2(X x) { return detail::make_unary<detail::op_exp2>(x); }
template <detail::Expr X> constexpr auto log(X x) { return detail::make_unary<detail::op_log>(x); }
template <detail::Expr X> constexpr auto sqrt(X x) { return detail::make_unary<detail::op_sqrt>(x); }
template <detail::Expr X> constexpr auto rsqrt(X x) { return detail::make_unary<detail::op_rsqrt>(x); }
template <detail::Expr X> constexpr auto tanh(X x) { return detail::make_unary<detail::op_tanh>(x); }
template <detail::Expr X> constexpr auto abs(X x) { return detail::make_unary<detail::op_abs>(x); }
// Approximate math (GPU): e^x as 2^(x*log2 e) on the ex2 unit, square root and tanh on the
// special-function unit. See docs/ast-format.md for their error bounds.
template <detail::Expr X> constexpr auto fast_exp(X x) { return detail::make_unary<detail::op_fast_exp>(x); }
template <detail::Expr X> constexpr auto fast_sqrt(X x) { return detail::make_unary<detail::op_fast_sqrt>(x); }
template <detail::Expr X> constexpr auto fast_tanh(X x) { return detail::make_unary<detail::op_fast_tanh>(x); }

// cast<D>(x): x converted to dtype D (x itself if it already has dtype D). A c<V> becomes an
// rank-0 constant of dtype D.
template <DType D, class X>
constexpr auto cast(X) {
  static_assert(detail::Operand<X>, "tessera: cast<D>(x) takes a tile expression");
  if constexpr (detail::ConstLiteral<X>) return detail::to_expr_t<X, D, Shape<>>{};
  else if constexpr (X::dtype == D) return X{};
  else return detail::Cast<D, X>{};
}

}  // namespace tessera
