// tessera/expr/binary_expr.h: elementwise two-operand nodes, comparisons and select.
//
// Defines Binary<Op, X, Y> for (add|sub|mul|div|fast_div|max|min|and|or|eq|ne|lt|le|gt|ge TYPE X
// Y) and Select<C, X, Y> for (select TYPE C X Y), with the operators + - * / && || == != < <= > >=
// (in tessera::detail, found by argument-dependent lookup) and tessera::maximum, minimum, select,
// fast_div (approximate float division on the GPU: docs/ast-format.md).
// Rules: the operands' dtypes must match exactly, except that a c<V> literal takes the dtype (and
// shape) of the other operand; shapes broadcast numpy-style and every operand whose shape differs
// from the result is wrapped in explicit (reshape)/(broadcast) nodes (shape_expr.h), so children
// of Binary/Select always have the result shape. + - * / maximum minimum need a numeric (non-i1)
// dtype, && || need i1; comparisons give i1. Assumes expr_base.h and shape_expr.h.
#pragma once

#include <type_traits>

#include "tessera/expr/expr_base.h"
#include "tessera/expr/shape_expr.h"

namespace tessera::detail {

enum class BinaryKind { arith, logic, compare };

#define TESSERA_BINARY_OP(TAG, NAME, KIND)         \
  struct TAG {                                     \
    static constexpr auto name = fixed_string(NAME); \
    static constexpr auto kind = BinaryKind::KIND; \
  };
TESSERA_BINARY_OP(op_add, "add", arith)
TESSERA_BINARY_OP(op_sub, "sub", arith)
TESSERA_BINARY_OP(op_mul, "mul", arith)
TESSERA_BINARY_OP(op_div, "div", arith)
TESSERA_BINARY_OP(op_fast_div, "fast_div", arith)
TESSERA_BINARY_OP(op_max, "max", arith)
TESSERA_BINARY_OP(op_min, "min", arith)
TESSERA_BINARY_OP(op_and, "and", logic)
TESSERA_BINARY_OP(op_or, "or", logic)
TESSERA_BINARY_OP(op_eq, "eq", compare)
TESSERA_BINARY_OP(op_ne, "ne", compare)
TESSERA_BINARY_OP(op_lt, "lt", compare)
TESSERA_BINARY_OP(op_le, "le", compare)
TESSERA_BINARY_OP(op_gt, "gt", compare)
TESSERA_BINARY_OP(op_ge, "ge", compare)
#undef TESSERA_BINARY_OP

// (OP TYPE X Y): X and Y already have the result shape.
template <class Op, class X, class Y>
struct Binary : ExprBase {
  static constexpr DType dtype = Op::kind == BinaryKind::compare ? DType::i1 : X::dtype;
  using shape = typename X::shape;
  using operands = type_list<X, Y>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list(Op::name, etype_text_v<Binary>, node<X, Ctx>{}, node<Y, Ctx>{});
  }
};

// (select TYPE C X Y): C, X and Y already have the result shape.
template <class C, class X, class Y>
struct Select : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = typename X::shape;
  using operands = type_list<C, X, Y>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("select", etype_text_v<Select>, node<C, Ctx>{}, node<X, Ctx>{}, node<Y, Ctx>{});
  }
};

// The dtype shared by value operands A and B (at least one of them an expression).
template <class A, class B>
constexpr DType operand_dtype() {
  if constexpr (Expr<A>) return A::dtype;
  else return B::dtype;
}

// The broadcast shape of the expressions among Ts (c<V> literals have no shape of their own).
template <class... Ts> struct expr_shape;
template <> struct expr_shape<> { using type = Shape<>; };
template <class T, class... Ts>
struct expr_shape<T, Ts...> { using type = typename expr_shape<Ts...>::type; };
template <Expr T, class... Ts>
struct expr_shape<T, Ts...> {
  using type = broadcast_t<typename T::shape, typename expr_shape<Ts...>::type>;
};

template <class T>
constexpr bool is_bool_expr() {
  if constexpr (Expr<T>) return T::dtype == DType::i1;
  else return false;
}

// Plain C++ numbers are accepted by the operators only to be rejected with a clear message: their
// values are run-time values, and only types are recorded.
template <class T>
concept PlainNumber = std::is_arithmetic_v<T>;

template <class T>
constexpr void reject_plain_number() {
  static_assert(!PlainNumber<T>,
                "tessera: a plain C++ number cannot appear in a tile expression (only types are recorded); "
                "write the constant as tessera::c<V>, e.g. x * c<2>");
}
template <class T>
using operand_t = std::conditional_t<PlainNumber<T>, ConstLit<0.0>, T>;

template <class Op, class A0, class B0>
constexpr auto make_binary(A0, B0) {
  reject_plain_number<A0>();
  reject_plain_number<B0>();
  using A = operand_t<A0>;
  using B = operand_t<B0>;
  if constexpr (Expr<A> && Expr<B>)
    static_assert(A::dtype == B::dtype, "tessera: dtype mismatch in elementwise op; use tessera::cast<...>");
  constexpr DType D = operand_dtype<A, B>();
  if constexpr (Op::kind == BinaryKind::arith)
    static_assert(D != DType::i1,
                  "tessera: arithmetic on i1 tiles is not supported; use && / || or tessera::cast<...>");
  if constexpr (Op::kind != BinaryKind::logic)
    static_assert(!is_float8(D), TESSERA_FLOAT8_DATA_ONLY);
  if constexpr (Op::kind == BinaryKind::logic)
    static_assert(D == DType::i1, "tessera: && and || need i1 (boolean) tiles");
  using S = typename expr_shape<A, B>::type;
  using X = to_expr_t<A, D, S>;
  using Y = to_expr_t<B, D, S>;
  return Binary<Op, bcast_t<S, X>, bcast_t<S, Y>>{};
}

// Two operands of which at least one is an expression (the other may be a c<V> literal).
template <class A, class B>
concept BinaryOperands = Operand<A> && Operand<B> && (Expr<A> || Expr<B>);
// The same, or an expression and a plain number (rejected by make_binary with a clear message).
template <class A, class B>
concept BinaryArgs =
    (Operand<A> || PlainNumber<A>) && (Operand<B> || PlainNumber<B>) && (Expr<A> || Expr<B>);

#define TESSERA_BINARY_OPERATOR(SYM, TAG) \
  template <class A, class B> requires BinaryArgs<A, B> \
  constexpr auto operator SYM(A a, B b) { return make_binary<TAG>(a, b); }
TESSERA_BINARY_OPERATOR(+, op_add)
TESSERA_BINARY_OPERATOR(-, op_sub)
TESSERA_BINARY_OPERATOR(*, op_mul)
TESSERA_BINARY_OPERATOR(/, op_div)
TESSERA_BINARY_OPERATOR(&&, op_and)
TESSERA_BINARY_OPERATOR(||, op_or)
TESSERA_BINARY_OPERATOR(==, op_eq)
TESSERA_BINARY_OPERATOR(!=, op_ne)
TESSERA_BINARY_OPERATOR(<, op_lt)
TESSERA_BINARY_OPERATOR(<=, op_le)
TESSERA_BINARY_OPERATOR(>, op_gt)
TESSERA_BINARY_OPERATOR(>=, op_ge)
#undef TESSERA_BINARY_OPERATOR

}  // namespace tessera::detail

namespace tessera {

// Elementwise maximum / minimum (numeric dtypes).
template <class A, class B> requires detail::BinaryArgs<A, B>
constexpr auto maximum(A a, B b) { return detail::make_binary<detail::op_max>(a, b); }
template <class A, class B> requires detail::BinaryArgs<A, B>
constexpr auto minimum(A a, B b) { return detail::make_binary<detail::op_min>(a, b); }

// fast_div(a, b): a / b through an approximate reciprocal on the GPU (float dtypes; error bound
// in docs/ast-format.md); the CPU target divides exactly.
template <class A, class B> requires detail::BinaryArgs<A, B>
constexpr auto fast_div(A a, B b) {
  static_assert(is_floating(detail::operand_dtype<detail::operand_t<A>, detail::operand_t<B>>()),
                "tessera: fast_div needs floating-point tiles (f32, f16, bf16)");  // fp8: make_binary says
  return detail::make_binary<detail::op_fast_div>(a, b);
}

// select(c, a, b): a where the i1 tile c is true, else b; c, a and b broadcast together.
template <class C, class A0, class B0>
constexpr auto select(C, A0, B0) {
  static_assert(detail::is_bool_expr<C>(), "tessera: select(c, a, b) needs an i1 (boolean) condition tile c");
  detail::reject_plain_number<A0>();
  detail::reject_plain_number<B0>();
  using A = detail::operand_t<A0>;
  using B = detail::operand_t<B0>;
  static_assert(detail::BinaryOperands<A, B>,
                "tessera: select(c, a, b): a and b must be tile expressions (one of them may be c<V>)");
  if constexpr (detail::Expr<C> && detail::BinaryOperands<A, B>) {  // else: reported above
    if constexpr (detail::Expr<A> && detail::Expr<B>)
      static_assert(A::dtype == B::dtype,
                    "tessera: dtype mismatch in elementwise op; use tessera::cast<...>");
    constexpr DType D = detail::operand_dtype<A, B>();
    using S = typename detail::expr_shape<C, A, B>::type;
    using X = detail::to_expr_t<A, D, S>;
    using Y = detail::to_expr_t<B, D, S>;
    return detail::Select<detail::bcast_t<S, C>, detail::bcast_t<S, X>, detail::bcast_t<S, Y>>{};
  }
}

}  // namespace tessera
