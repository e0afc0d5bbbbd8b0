// tessera/expr/index_expr.h: integer index sources, the values a kernel computes tile indices from.
//
// Defines the nodes ProgramId (program_id<D>()), NumPrograms (num_programs<D>()), Iota (iota<N>())
// and Dim (a tensor parameter's run-time size along one dim; created by x.dim<D>() or dim<D>(x),
// see load_store_expr.h). All are i32; all but Iota are rank 0. Assumes expr_base.h; a tensor
// parameter type P passed to Dim has static members `index` and `rank`.
#pragma once

#include "tessera/expr/expr_base.h"

namespace tessera::detail {

// (program_id i32 [] D)
template <int D>
struct ProgramId : ExprBase {
  static_assert(D >= 0 && D <= 2, "tessera: program_id<D>: the grid has three axes, D is 0, 1 or 2");
  static constexpr DType dtype = DType::i32;
  using shape = Shape<>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("program_id", etype_text_v<ProgramId>, int_text_v<D>);
  }
};

// (num_programs i32 [] D)
template <int D>
struct NumPrograms : ExprBase {
  static_assert(D >= 0 && D <= 2, "tessera: num_programs<D>: the grid has three axes, D is 0, 1 or 2");
  static constexpr DType dtype = DType::i32;
  using shape = Shape<>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("num_programs", etype_text_v<NumPrograms>, int_text_v<D>);
  }
};

// (iota i32 [N])
template <int N>
struct Iota : ExprBase {
  static constexpr DType dtype = DType::i32;
  using shape = tile_shape_t<N>;
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("iota", etype_text_v<Iota>); }
};

// (dim i32 [] P D)
template <class P, int D>
struct Dim : ExprBase {
  static_assert(D >= 0 && D < P::rank, "tessera: dim<D>: D is not a dim of this tensor parameter");
  static constexpr DType dtype = DType::i32;
  using shape = Shape<>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("dim", etype_text_v<Dim>, int_text_v<P::index>, int_text_v<D>);
  }
};

}  // namespace tessera::detail

namespace tessera {

// Index of this program along grid axis D (i32 scalar).
template <int D>
constexpr detail::ProgramId<D> program_id() { return {}; }

// Number of programs along grid axis D (i32 scalar).
template <int D>
constexpr detail::NumPrograms<D> num_programs() { return {}; }

// The i32 tile [N] holding 0, 1, ..., N-1.
template <int N>
constexpr detail::Iota<N> iota() { return {}; }

}  // namespace tessera
