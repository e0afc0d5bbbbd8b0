// tessera/expr/shape_expr.h: nodes that change a tile's shape but not its values.
//
// Defines Broadcast (numpy broadcast of an operand of the same rank, or of rank 0), Reshape
// (row-major, same element count) and Transpose (rank 2), the user functions broadcast_to<Dims...>,
// reshape<Dims...> and transpose, and detail::bcast_t<S, X>: X made to have shape S with explicit
// nodes, as every elementwise op does with its operands. An operand of lower, non-zero rank is first
// reshaped to S's rank with leading 1s, since (broadcast ...) only accepts equal rank or rank 0.
// Assumes expr_base.h.
#pragma once

#include <type_traits>

#include "tessera/expr/expr_base.h"

namespace tessera::detail {

// (broadcast TYPE X)
template <class S, class X>
struct Broadcast : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = S;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("broadcast", etype_text_v<Broadcast>, node<X, Ctx>{});
  }
};

// (reshape TYPE X)
template <class S, class X>
struct Reshape : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = S;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("reshape", etype_text_v<Reshape>, node<X, Ctx>{});
  }
};

// (transpose TYPE X)
template <class X>
struct Transpose : ExprBase {
  static constexpr DType dtype = X::dtype;
  using shape = transpose_t<typename X::shape>;
  using operands = type_list<X>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("transpose", etype_text_v<Transpose>, node<X, Ctx>{});
  }
};

template <class S, class X>
constexpr auto bcast_fn() {
  using XS = typename X::shape;
  if constexpr (std::is_same_v<XS, S>) return std::type_identity<X>{};
  else if constexpr (XS::rank == 0 || XS::rank == S::rank) return std::type_identity<Broadcast<S, X>>{};
  else if constexpr (XS::rank < S::rank)
    return std::type_identity<Broadcast<S, Reshape<pad_rank_t<XS, S::rank>, X>>>{};
  else return std::type_identity<X>{};  // not reachable for shapes that broadcast to S
}

// Whether X broadcasts to exactly S (rank(X) <= rank(S), each aligned dim equal or 1 in X).
template <class XS, class S>
constexpr bool broadcasts_to() {
  if constexpr (XS::rank > S::rank) return false;
  else {
    for (int i = 0; i < XS::rank; ++i) {
      const int x = at(XS::dims, i), s = at(S::dims, i + S::rank - XS::rank);
      if (x != s && x != 1) return false;
    }
    return true;
  }
}

// X itself if it already has shape S, else X wrapped in explicit (reshape) / (broadcast) nodes.
template <class S, class X>
using bcast_t = typename decltype(bcast_fn<S, X>())::type;

}  // namespace tessera::detail

namespace tessera {

// broadcast_to<Dims...>(x): x expanded to shape [Dims...] by numpy rules.
template <int... Dims, detail::Expr X>
constexpr auto broadcast_to(X) {
  using S = tile_shape_t<Dims...>;
  using XS = typename X::shape;
  static_assert(detail::broadcasts_to<XS, S>(),
                "tessera: broadcast_to: the tile cannot be broadcast to the target shape");
  if constexpr (XS::rank <= S::rank) return detail::bcast_t<S, X>{};
  else return X{};
}

// reshape<Dims...>(x): the same elements, row-major, as shape [Dims...].
template <int... Dims, detail::Expr X>
constexpr auto reshape(X) {
  using S = tile_shape_t<Dims...>;
  static_assert(S::size == X::shape::size, "tessera: reshape must keep the number of elements");
  if constexpr (std::is_same_v<S, typename X::shape>) return X{};
  else return detail::Reshape<S, X>{};
}

// transpose(x): x with its two dims swapped (rank 2 only).
template <detail::Expr X>
constexpr auto transpose(X) {
  return detail::Transpose<X>{};
}

}  // namespace tessera
