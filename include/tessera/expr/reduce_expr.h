// tessera/expr/reduce_expr.h: reductions along one axis, keeping the axis with size 1.
//
// Defines Reduce<Kind, Axis, X> ((reduce TYPE sum|max|min AXIS X)) and the user functions
// sum<Axis>(x), max<Axis>(x), min<Axis>(x). A negative Axis counts from the last dim (-1 is the
// last); the serialized AXIS is always the non-negative one. An axis out of range is a
// static_assert ("tessera: reduction axis out of range"). sum needs a numeric (non-i1) tile.
// Assumes expr_base.h.
#pragma once

#include "tessera/expr/expr_base.h"

namespace tessera::detail {

struct reduce_sum { static constexpr auto name = fixed_string("sum"); };
struct reduce_max { static constexpr auto name = fixed_string("max"); };
struct reduce_min { static constexpr auto name = fixed_string("min"); };

// (reduce TYPE KIND AXIS X)
template <class Kind, int Axis, class X>
struct Reduce : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = reduce_t<typename X::shape, Axis>;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("reduce", etype_text_v<Reduce>, Kind::name, int_text_v<Axis>, node<X, Ctx>{});
  }
};

template <class Kind, int Axis, Expr X>
constexpr auto make_reduce(X) {
  constexpr int rank = X::shape::rank;
  constexpr int axis = Axis < 0 ? Axis + rank : Axis;
  static_assert(axis >= 0 && axis < rank, "tessera: reduction axis out of range");
  static_assert(!is_float8(X::dtype), TESSERA_FLOAT8_DATA_ONLY);
  if constexpr (std::is_same_v<Kind, reduce_sum>)
    static_assert(X::dtype != DType::i1,
                  "tessera: sum of an i1 tile is not supported; use tessera::cast<...>");
  if constexpr (axis >= 0 && axis < rank) return Reduce<Kind, axis, X>{};
  else if constexpr (rank > 0) return Reduce<Kind, axis < 0 ? 0 : rank - 1, X>{};  // quiets later checks
  else return X{};
}

}  // namespace tessera::detail

namespace tessera {

template <int Axis, detail::Expr X>
constexpr auto sum(X x) { return detail::make_reduce<detail::reduce_sum, Axis>(x); }
template <int Axis, detail::Expr X>
constexpr auto max(X x) { return detail::make_reduce<detail::reduce_max, Axis>(x); }
template <int Axis, detail::Expr X>
constexpr auto min(X x) { return detail::make_reduce<detail::reduce_min, Axis>(x); }

}  // namespace tessera
