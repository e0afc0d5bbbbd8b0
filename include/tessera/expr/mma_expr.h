// tessera/expr/mma_expr.h: tile matrix multiply-accumulate.
//
// Defines Mma<A, B, C> ((mma TYPE A B C), TYPE = the accumulator's "f32 [M N]") and the user
// function mma(a, b, acc) = a @ b + acc for a: [M K], b: [K N], acc: [M N]. a and b share one
// dtype of f16, bf16, f32 (products as tf32 on tensor cores), f8e4m3 or f8e5m2 (exact products);
// the accumulator is f32 (a c<V> accumulator becomes an f32 [M N]
// splat, e.g. mma(a, b, c<0>)). Any disagreement is a static_assert. Assumes expr_base.h.
#pragma once

#include "tessera/expr/expr_base.h"

namespace tessera::detail {

// (mma TYPE A B C)
template <class A, class B, class C>
struct Mma : ExprBase {
  static constexpr DType dtype = C::dtype;
  using shape = typename C::shape;
  using operands = type_list<A, B, C>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("mma", etype_text_v<Mma>, node<A, Ctx>{}, node<B, Ctx>{}, node<C, Ctx>{});
  }
};

template <class A, class B, class C>
constexpr bool mma_shapes_agree() {
  using SA = typename A::shape;
  using SB = typename B::shape;
  using SC = typename C::shape;
  if constexpr (SA::rank != 2 || SB::rank != 2 || SC::rank != 2) return false;
  else return SA::dims[1] == SB::dims[0] && SC::dims[0] == SA::dims[0] && SC::dims[1] == SB::dims[1];
}

}  // namespace tessera::detail

namespace tessera {

// mma(a, b, acc): a @ b + acc, accumulated in f32.
template <detail::Expr A, detail::Expr B, class C>
constexpr auto mma(A, B, C) {
  static_assert(A::shape::rank == 2 && B::shape::rank == 2,
                "tessera: mma operands A and B must be rank-2 tiles");
  static_assert((A::dtype == B::dtype && is_floating(A::dtype)) || (is_float8(A::dtype) && is_float8(B::dtype)),
                "tessera: mma operands A and B must have the same dtype, one of f16, bf16, f32, f8e4m3, "
                "f8e5m2, or be f8e4m3 and f8e5m2 (one of each)");
  static_assert(detail::Operand<C>, "tessera: mma accumulator must be a tile expression or c<V>");
  if constexpr (A::shape::rank == 2 && B::shape::rank == 2 && detail::Operand<C>) {
    using Acc = detail::to_expr_t<C, DType::f32, Shape<A::shape::dims[0], B::shape::dims[1]>>;
    static_assert(Acc::dtype == DType::f32, "tessera: mma accumulator must be f32");
    static_assert(detail::mma_shapes_agree<A, B, Acc>(),
                  "tessera: mma shapes do not agree: A is [M K], B is [K N], acc is [M N]");
    return detail::Mma<A, B, Acc>{};
  }
}

}  // namespace tessera
