// tessera/expr/expr_base.h: what every tile expression node is, and constants.
//
// A node is an empty literal type deriving from detail::ExprBase whose *type* encodes its whole
// subtree: static members `dtype` (DType) and `shape` (a Shape<...> type), children stored as
// template arguments and listed in `operands` (a type_list; absent for leaves), and
// `template <class Ctx> static constexpr void write(text_sink&)` writing its text in
// docs/ast-format.md (see text_sink.h). Ctx is a type_list of the tags of the enclosing loops (see
// loop_expr.h); a node whose text depends on them (a loop variable, a carried value, a loop, or a
// node with one of those among its operands) is loop_dependent. part_of(node<N, Ctx>) tells the
// sink how to write node N: a typed node with operands may be shared (written once, then referred
// to), and a node that depends on no loop is written in the empty context, so that its uses inside
// and outside loops are one node. text_v<Node, Ctx> is a node's text as a fixed_string.
//
// Also defines the untyped literal c<V> (ConstLit<V>: it takes the dtype and shape of the other
// operand of the op it is used in), the typed splat constant Const<D, S, V>, full<D, Dims...>(c<V>),
// the values tessera::inf and tessera::quiet_nan, and which values a load can be padded with
// (pad_representable).
// Assumes dtype.h, shape.h, fixed_string.h and text_sink.h.
#pragma once

#include <bit>
#include <concepts>
#include <initializer_list>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessera/dtype.h"
#include "tessera/expr/fixed_string.h"
#include "tessera/expr/text_sink.h"
#include "tessera/shape.h"

namespace tessera::detail {

struct ExprBase {};

template <class T>
concept Expr = std::is_base_of_v<ExprBase, T> && requires {
  { T::dtype } -> std::convertible_to<DType>;
  typename T::shape;
};

template <class... Ts> struct type_list {};

// The message of every op that rejects an 8-bit float tile (a string literal, as static_assert needs).
#define TESSERA_FLOAT8_DATA_ONLY                                                                      \
  "tessera: f8e4m3 and f8e5m2 tiles hold data: load, store, select, reshape, transpose, broadcast, " \
  "carry them in loops, use them as mma operands, or cast them; cast<DType::f32>(x) before arithmetic, " \
  "comparisons, math and reductions"

// ---- text of types ----------------------------------------------------------------------------

template <DType D>
constexpr auto dtype_text() {
  if constexpr (D == DType::f32) return fixed_string("f32");
  else if constexpr (D == DType::f16) return fixed_string("f16");
  else if constexpr (D == DType::bf16) return fixed_string("bf16");
  else if constexpr (D == DType::i32) return fixed_string("i32");
  else if constexpr (D == DType::f8e4m3) return fixed_string("f8e4m3");
  else if constexpr (D == DType::f8e5m2) return fixed_string("f8e5m2");
  else return fixed_string("i1");
}

template <class S> struct shape_text;
template <int... Ds>
struct shape_text<Shape<Ds...>> { static constexpr auto value = bracket<'[', ']'>(int_text_v<Ds>...); };

// "f32 [64 64]", "i32 []"
template <DType D, class S>
inline constexpr auto type_text_v = concat(dtype_text<D>(), " ", shape_text<S>::value);

template <class E>
inline constexpr auto etype_text_v = type_text_v<E::dtype, typename E::shape>;

// ---- how the sink writes a node (text_sink.h) ---------------------------------------------------
//
// These traits are class templates whose values are template arguments (std::integral_constant),
// for two reasons. A trait computed by a constexpr function would instantiate its operands' traits
// while it is being evaluated, and GCC counts such nested evaluations against -fconstexpr-depth,
// one level of the tree at a time. And every variable template specialization or function named
// after a node type costs GCC a mangled name of that type; the integral_constant bases are shared.

template <class N> struct operands_of { using type = type_list<>; };
template <class N> requires requires { typename N::operands; }
struct operands_of<N> { using type = typename N::operands; };
template <class N> using operands_t = typename operands_of<N>::type;

// Whether node N's text depends on the enclosing loops (see the file comment).
template <class N> struct loop_dependent;
template <class List> struct any_loop_dependent;
template <class... Ops>
struct any_loop_dependent<type_list<Ops...>> : std::bool_constant<(loop_dependent<Ops>::value || ...)> {};
template <class N> struct loop_dependent : any_loop_dependent<operands_t<N>> {};
template <class N> requires requires { N::loop_dependent; }
struct loop_dependent<N> : std::bool_constant<N::loop_dependent> {};

// Typed nodes with operands may be shared; leaves (and statements) are always written in place.
template <class N>
struct shareable : std::bool_constant<requires { N::dtype; typename N::shape; } &&
                                      !std::is_same_v<operands_t<N>, type_list<>>> {};

// The context node N is written in inside the loops Ctx: Ctx if its text depends on them, else
// the empty one (the same text, and one node for every use).
template <class N, class Ctx>
using node_context_t = std::conditional_t<loop_dependent<N>::value, Ctx, type_list<>>;

// A hash of node N's text inside Ctx (a context node_context_t gives): of its own text and its
// operands' hashes. Instantiated once per node type and context, so its cost follows the DAG, not
// the tree.
constexpr std::uint64_t hash_list(std::initializer_list<std::uint64_t> xs) {
  std::uint64_t h = 0;
  for (std::uint64_t x : xs) h = std::rotl(h ^ x, 29) * 0x9e3779b97f4a7c15ull;
  return h;
}
template <class N, class Ctx, class Ops = operands_t<N>> struct node_hash;
template <class N, class Ctx, class... Ops>
struct node_hash<N, Ctx, type_list<Ops...>>
    : std::integral_constant<std::uint64_t,
                             hash_list({label_hash_of(&N::template write<Ctx>),
                                        node_hash<Ops, node_context_t<Ops, Ctx>>::value...})> {};

template <class N, class Ctx>
constexpr text_part part_of(node<N, Ctx>) {
  using context = node_context_t<N, Ctx>;
  if constexpr (shareable<N>::value)
    return {part_kind::shared, nullptr, 0, &N::template write<context>, etype_text_v<N>.data, etype_text_v<N>.size(),
            &node_hash<N, context>::value};
  else return {part_kind::writer, nullptr, 0, &N::template write<context>};
}

// ---- constants --------------------------------------------------------------------------------

template <double V>
struct ConstLit {};

template <class T> inline constexpr bool is_const_lit_v = false;
template <double V> inline constexpr bool is_const_lit_v<ConstLit<V>> = true;

template <class T>
concept ConstLiteral = is_const_lit_v<T>;

// An expression, or a c<V> literal that will take its dtype and shape from the context.
template <class T>
concept Operand = Expr<T> || ConstLiteral<T>;

// The largest finite value of a float dtype.
constexpr double largest_finite(DType d) {
  switch (d) {
    case DType::f16: return 65504.0;
    case DType::bf16: return 3.3895313892515355e38;  // (2 - 2^-7) * 2^127
    case DType::f8e4m3: return 448.0;
    case DType::f8e5m2: return 57344.0;
    default: return static_cast<double>(std::numeric_limits<float>::max());
  }
}

// Whether V can be a constant of dtype D: i32 needs an integer, i1 needs 0 or 1; an 8-bit float
// needs a value within its finite range (rounded to nearest even), or NaN, or (E5M2) an infinity.
// A constant of a wider float past its range is an infinity, as IEEE rounding makes it.
constexpr bool representable(double v, DType d) {
  if (d == DType::i1) return v == 0.0 || v == 1.0;
  if (d == DType::i32)
    return v >= -2147483648.0 && v <= 2147483647.0 && v == static_cast<double>(static_cast<std::int64_t>(v));
  if (is_float8(d)) {
    const bool infinite = v == std::numeric_limits<double>::infinity() || v == -std::numeric_limits<double>::infinity();
    if (v != v || (infinite && d == DType::f8e5m2)) return true;
    return v >= -largest_finite(d) && v <= largest_finite(d);
  }
  return true;
}

// Whether V can be the padding value of a load of dtype D (see LoadBase::padded): infinities and
// NaN need a float dtype that has them, finite values must lie within the dtype's finite range
// (they are rounded to nearest even, as c<V> is), i32 needs an integer and i1 needs 0 or 1.
constexpr bool pad_representable(double v, DType d) {
  const bool nan = v != v, infinite = v == std::numeric_limits<double>::infinity() ||
                                      v == -std::numeric_limits<double>::infinity();
  if (!is_floating(d)) return !nan && !infinite && representable(v, d);
  if (is_float8(d)) return representable(v, d);
  if (nan || infinite) return true;
  return v >= -largest_finite(d) && v <= largest_finite(d);
}

// (const TYPE 0xHEX): V splatted over shape S, dtype D.
template <DType D, class S, double V>
struct Const : ExprBase {
  static_assert(representable(V, D),
                "tessera: constant is not representable in the dtype it takes (i32 needs an integer, "
                "i1 needs 0 or 1, f8e4m3 a value within +-448 or NaN, f8e5m2 within +-57344, NaN or "
                "an infinity)");
  static constexpr DType dtype = D;
  using shape = S;
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("const", etype_text_v<Const>, hex_text_v<V>); }
};

// T itself if it is an expression; a c<V> literal becomes Const<D, S, V>.
template <class T, DType D, class S> struct to_expr { using type = T; };
template <double V, DType D, class S> struct to_expr<ConstLit<V>, D, S> { using type = Const<D, S, V>; };
template <class T, DType D, class S>
using to_expr_t = typename to_expr<T, D, S>::type;

template <double V>
constexpr ConstLit<-V> operator-(ConstLit<V>) { return {}; }

}  // namespace tessera::detail

namespace tessera {

// c<V>: an untyped constant (any arithmetic V; stored as a double). In a binary op, select, store
// or loop yield it takes the dtype and shape of the other operand: `x * c<2>`, `out.store(c<0>)`.
template <auto V>
  requires std::is_arithmetic_v<decltype(V)>
inline constexpr detail::ConstLit<static_cast<double>(V)> c{};

// Infinity and a quiet NaN, for constants and padding values: c<-inf>, c<quiet_nan>.
inline constexpr double inf = std::numeric_limits<double>::infinity();
inline constexpr double quiet_nan = std::numeric_limits<double>::quiet_NaN();

// full<D, Dims...>(c<V>): a tile of dtype D and shape [Dims...] filled with V.
template <DType D, int... Dims, double V>
constexpr auto full(detail::ConstLit<V>) {
  return detail::Const<D, tile_shape_t<Dims...>, V>{};
}

}  // namespace tessera
