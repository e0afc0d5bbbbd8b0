// tessera/expr/load_store_expr.h: kernel parameters, loads, and the store statements.
//
// Defines the placeholder parameter types the launcher passes to a kernel lambda:
//   OutParam<I, D, Rank, Tile...>  output partition I; the program owns tile (program_id<0..Rank-1>)
//                                  of shape [Tile...]: out.store(e), out.load(), out.dim<D>(); storing
//                                  or reading back another program's tile is a compile error
//   InParam<I, D, Rank>            read-only input I: x.load_like(out), x.load<Dims...>(idx...),
//                                  x.dim<D>(); x.store(...) is a compile error
//   ScalarParam<I, D>              run-time scalar I, itself an expression: (arg TYPE I)
// the nodes Load, LoadLike, Own (each with .padded(c<V>): the elements outside the tensor read as
// V instead of zero), the statements Store and Seq, and the free functions load<Dims...>(x, idx...),
// dim<D>(x) and seq(stores...). Each parameter type has `index`, `rank`,
// `dtype` and `static constexpr auto decl()`, its (out ...)/(in ...)/(scalar ...) text.
// Assumes expr_base.h, index_expr.h (Dim) and shape_expr.h (bcast_t).
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessera/expr/expr_base.h"
#include "tessera/expr/index_expr.h"
#include "tessera/expr/shape_expr.h"

namespace tessera::detail {

template <int I, DType D, int Rank, int... Tile> struct OutParam;
template <int I, DType D, int Rank> struct InParam;

template <class T> inline constexpr bool is_out_param_v = false;
template <int I, DType D, int R, int... T>
inline constexpr bool is_out_param_v<OutParam<I, D, R, T...>> = true;
template <class T> inline constexpr bool is_in_param_v = false;
template <int I, DType D, int R> inline constexpr bool is_in_param_v<InParam<I, D, R>> = true;

// The padding of a load node: what its elements outside the tensor read as.
struct ZeroPad {};  // zero: the node has no (pad ...) item
// (pad 0xHEX): V, as the bits of a double (like (const ...)).
template <double V>
struct PadWith {
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("pad", hex_text_v<V>); }
};
// The padding of c<V>: +0 is the default (no item), and every NaN is written as one quiet NaN, so
// that kernels meaning the same have the same text (and cache key).
template <double V>
using pad_t = std::conditional_t<std::bit_cast<std::uint64_t>(V) == 0, ZeroPad,
                                 PadWith<(V != V ? std::numeric_limits<double>::quiet_NaN() : V)>>;

// What the load nodes (Load, LoadLike, Own) share: x.padded(c<V>) is the same load with the
// elements outside the tensor read as V instead of zero. Node has `dtype`, `pad` (its padding) and
// `with_pad<Pad>` (the node with another padding).
template <class Node>
struct LoadBase : ExprBase {
  template <class V>
  constexpr auto padded(V) const {
    static_assert(ConstLiteral<V>,
                  "tessera: padded(...) takes a constant: c<V>, c<-tessera::inf>, c<tessera::inf> or "
                  "c<tessera::quiet_nan>");
    if constexpr (ConstLiteral<V>) return padded_with(V{});
    else return Node{};
  }

 private:
  template <double V>
  static constexpr auto padded_with(ConstLit<V>) {
    static_assert(std::is_same_v<typename Node::pad, ZeroPad>, "tessera: this load is already padded");
    static_assert(pad_representable(V, Node::dtype),
                  "tessera: the padding value is not representable in the loaded dtype (infinities and NaN "
                  "need a float dtype, and f8e4m3 has no infinities; i32 needs an integer, i1 needs 0 or 1, "
                  "and finite values must lie within the dtype's range)");
    if constexpr (pad_representable(V, Node::dtype)) return typename Node::template with_pad<pad_t<V>>{};
    else return Node{};
  }
};

// (load TYPE P IDX* PAD?)
template <class P, class S, class Pad, class... Idx>
struct Load : LoadBase<Load<P, S, Pad, Idx...>> {
  static constexpr DType dtype = P::dtype;
  using shape = S;
  using pad = Pad;
  template <class Q>
  using with_pad = Load<P, S, Q, Idx...>;
  using operands = type_list<Idx...>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    if constexpr (std::is_same_v<Pad, ZeroPad>)
      s.list("load", etype_text_v<Load>, int_text_v<P::index>, node<Idx, Ctx>{}...);
    else
      s.list("load", etype_text_v<Load>, int_text_v<P::index>, node<Idx, Ctx>{}..., node<Pad, Ctx>{});
  }
};

// (load_like TYPE P Q PAD?)
template <class P, class Q, class Pad = ZeroPad>
struct LoadLike : LoadBase<LoadLike<P, Q, Pad>> {
  static constexpr DType dtype = P::dtype;
  using shape = typename Q::shape;
  using pad = Pad;
  template <class R>
  using with_pad = LoadLike<P, Q, R>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    if constexpr (std::is_same_v<Pad, ZeroPad>)
      s.list("load_like", etype_text_v<LoadLike>, int_text_v<P::index>, int_text_v<Q::index>);
    else
      s.list("load_like", etype_text_v<LoadLike>, int_text_v<P::index>, int_text_v<Q::index>, node<Pad, Ctx>{});
  }
};

// (own TYPE Q PAD?)
template <class Q, class Pad = ZeroPad>
struct Own : LoadBase<Own<Q, Pad>> {
  static constexpr DType dtype = Q::dtype;
  using shape = typename Q::shape;
  using pad = Pad;
  template <class R>
  using with_pad = Own<Q, R>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    if constexpr (std::is_same_v<Pad, ZeroPad>)
      s.list("own", etype_text_v<Own>, int_text_v<Q::index>);
    else
      s.list("own", etype_text_v<Own>, int_text_v<Q::index>, node<Pad, Ctx>{});
  }
};

// (store P EXPR): X already has the tile shape of output P.
template <int P, class X>
struct Store {
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("store", int_text_v<P>, node<X, Ctx>{}); }
};

// Several statements, in order.
template <class... Stmts>
struct Seq {};

// What a rejected statement (x.store(...) on an input) returns after its static_assert, so that
// the user sees that one error only.
struct InvalidStmt {};

template <class T> inline constexpr bool is_stmt_v = false;
template <int P, class X> inline constexpr bool is_stmt_v<Store<P, X>> = true;
template <class... S> inline constexpr bool is_stmt_v<Seq<S...>> = (sizeof...(S) > 0);

template <class T>
constexpr bool is_index() {
  if constexpr (ConstLiteral<T>) return true;
  else if constexpr (Expr<T>) return T::dtype == DType::i32 && T::shape::rank == 0;
  else return false;
}

template <int I, DType D, int Rank, int... Tile>
struct OutParam {
  static_assert(sizeof...(Tile) == Rank, "tessera: an output partition needs one tile dim per dim");
  static_assert(Rank >= 1 && Rank <= 3,
                "tessera: an output partition has rank 1 to 3 (one grid axis per dim: program_id<0..2>)");
  static constexpr int index = I;
  static constexpr int rank = Rank;
  static constexpr DType dtype = D;
  using shape = tile_shape_t<Tile...>;  // the program's own tile
  static constexpr auto decl() {
    return sexpr("out", dtype_text<D>(), int_text_v<Rank>, shape_text<shape>::value);
  }

  // Store e (shape [Tile...], dtype D; a rank-0 e or a c<V> is splatted) into this program's tile.
  template <class E>
  constexpr auto store(E) const {
    static_assert(Operand<E>,
                  "tessera: out.store(...) takes a tile expression (write a constant as tessera::c<V>)");
    if constexpr (ConstLiteral<E>) {
      return Store<I, to_expr_t<E, D, shape>>{};
    } else if constexpr (Expr<E>) {
      static_assert(E::shape::rank == 0 || std::is_same_v<typename E::shape, shape>,
                    "tessera: stored tile shape does not match the output tile shape");
      static_assert(E::dtype == D,
                    "tessera: stored tile dtype does not match the output dtype; use tessera::cast<...>");
      if constexpr (E::shape::rank == 0) return Store<I, bcast_t<shape, E>>{};
      else return Store<I, E>{};
    }
  }
  // A program stores only its own tile: other programs' tiles are not its to write.
  template <class E, class I0, class... Is>
  constexpr auto store(E, I0, Is...) const {
    static_assert(always_false<E, I0, Is...>,
                  "tessera: a program stores only its own tile: write out.store(value), without tile indices "
                  "(the tile is the program's own, at program_id<0..Rank-1>()); to write other programs' tiles, "
                  "use the unsafe opt-out tessera::unsafe::cuda_kernel (tessera/unsafe.h)");
    return InvalidStmt{};
  }
  // This program's own tile, as currently stored: in seq(...), as the statements before the one
  // that reads it left it.
  constexpr Own<OutParam> load() const { return {}; }
  // A program reads back only its own tile of an output.
  template <class I0, class... Is>
  constexpr auto load(I0, Is...) const {
    static_assert(always_false<I0, Is...>,
                  "tessera: a program reads back only its own tile of an output: write out.load(), without "
                  "tile indices; to read other tiles, pass the data as an input tensor");
    return Own<OutParam>{};
  }
  template <int Dm>
  constexpr Dim<OutParam, Dm> dim() const { return {}; }
};

template <int I, DType D, int Rank>
struct InParam {
  static constexpr int index = I;
  static constexpr int rank = Rank;
  static constexpr DType dtype = D;
  static constexpr auto decl() { return sexpr("in", dtype_text<D>(), int_text_v<Rank>); }

  // The tile at output q's own tile index, with q's tile shape.
  template <class Q>
  constexpr auto load_like(Q) const {
    static_assert(is_out_param_v<Q>, "tessera: x.load_like(out) takes an output partition");
    if constexpr (is_out_param_v<Q>) {
      static_assert(Q::rank == Rank, "tessera: load_like needs an output partition of the input's rank");
      return LoadLike<InParam, Q>{};
    }
  }
  // The [Dims...] tile at tile index (idx...): element offset idx[d] * Dims[d].
  template <int... Dims, class... Idx>
  constexpr auto load(Idx...) const {
    static_assert(sizeof...(Dims) == Rank, "tessera: load<Dims...> needs one tile dim per dim of the input");
    static_assert(sizeof...(Idx) == Rank, "tessera: load needs one tile index per dim of the input");
    static_assert((is_index<Idx>() && ...),
                  "tessera: a tile index must be an i32 scalar expression (or c<N>)");
    return Load<InParam, tile_shape_t<Dims...>, ZeroPad, to_expr_t<Idx, DType::i32, Shape<>>...>{};
  }
  template <int Dm>
  constexpr Dim<InParam, Dm> dim() const { return {}; }

  template <class... E>
  constexpr auto store(E...) const {
    static_assert(always_false<E...>,
                  "tessera: cannot store into an input tensor: inputs are read-only; "
                  "pass it as an output partition");
    return InvalidStmt{};
  }
};

// (arg TYPE P): a run-time scalar parameter, usable as a rank-0 expression.
template <int I, DType D>
struct ScalarParam : ExprBase {
  static constexpr int index = I;
  static constexpr int rank = 0;
  static constexpr DType dtype = D;
  using shape = Shape<>;
  static constexpr auto decl() { return sexpr("scalar", dtype_text<D>()); }
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("arg", etype_text_v<ScalarParam>, int_text_v<I>);
  }
};

template <class T> inline constexpr bool is_param_v = is_out_param_v<T> || is_in_param_v<T>;
template <int I, DType D> inline constexpr bool is_param_v<ScalarParam<I, D>> = true;

// Flattening of seq(...) arguments into one Seq.
template <class... Ts> struct seq_cat;
template <> struct seq_cat<> { using type = Seq<>; };
template <int P, class X, class... Rest>
struct seq_cat<Store<P, X>, Rest...> {
  template <class T> struct prepend;
  template <class... S> struct prepend<Seq<S...>> { using type = Seq<Store<P, X>, S...>; };
  using type = typename prepend<typename seq_cat<Rest...>::type>::type;
};
template <class... S, class... Rest>
struct seq_cat<Seq<S...>, Rest...> { using type = typename seq_cat<S..., Rest...>::type; };

}  // namespace tessera::detail

namespace tessera {

// load<Dims...>(x, idx...): x.template load<Dims...>(idx...) without the `.template`.
template <int... Dims, class P, class... Idx>
constexpr auto load(P x, Idx... idx) {
  static_assert(detail::is_in_param_v<P>, "tessera: load<Dims...>(x, ...) takes an input tensor parameter");
  if constexpr (detail::is_in_param_v<P>) return x.template load<Dims...>(idx...);
}

// dim<D>(x): run-time size of dim D of tensor parameter x (i32 scalar).
template <int D, class P>
constexpr auto dim(P x) {
  static_assert(detail::is_in_param_v<P> || detail::is_out_param_v<P>,
                "tessera: dim<D>(x) takes a tensor parameter (input or output)");
  if constexpr (detail::is_in_param_v<P> || detail::is_out_param_v<P>) return x.template dim<D>();
}

// seq(out0.store(a), out1.store(b), ...): several statements as one kernel body.
template <class... Stmts>
constexpr auto seq(Stmts...) {
  static_assert(sizeof...(Stmts) > 0 && (detail::is_stmt_v<Stmts> && ...),
                "tessera: seq(...) takes one or more out.store(...) statements");
  if constexpr ((detail::is_stmt_v<Stmts> && ...)) return typename detail::seq_cat<Stmts...>::type{};
}

}  // namespace tessera
