// tessera/expr/loop_expr.h: counted loops carrying tile values.
//
//   auto acc = tessera::for_range(n, [&](auto k, auto acc) { return mma(a(k), b(k), acc); }, init);
//   auto r = tessera::for_range(n, [](auto i, auto s, auto m) { return tessera::carry(s2, m2); }, s0, m0);
//   auto s = tessera::get<0>(r);     // or r.template get<0>(), or auto [s, m] = r;
//
// for_range instantiates the body (never runs it) with the placeholders LoopVar<Body> (the
// induction variable, i32 []) and Carried<Body, K, D, S> (carried value K), tagged by the body's
// closure type. The tag is resolved to the loop's id, its nesting depth (0 = outermost), only at
// serialization: every write<Ctx>() receives Ctx = type_list of the enclosing loops' tags, and a
// For writes its yields with its own tag appended. So nested loops, loops inside loop inits and
// loop results used inside other loops all get consistent, deterministic ids. All of these are
// loop_dependent (their text depends on Ctx); a loop whose several values are read is one For
// node under several Result nodes, written once (text_sink.h).
// Text: (for TYPE ID N (INIT*) (YIELD*)), (iv i32 [] ID), (carried TYPE ID K), (result TYPE K FOR).
// Assumes expr_base.h and load_store_expr.h (is_index).
#pragma once

#include <cstddef>
#include <type_traits>
#include <utility>

#include "tessera/expr/expr_base.h"
#include "tessera/expr/load_store_expr.h"

namespace tessera::detail {

// Index of the innermost enclosing loop tagged Tag in the type_list Ctx, or -1.
template <class Tag, class Ctx> struct loop_id;
template <class Tag, class... Ts>
struct loop_id<Tag, type_list<Ts...>> {
  static constexpr int value = [] {
    int r = -1, i = 0;
    ((r = std::is_same_v<Tag, Ts> ? i : r, ++i), ...);
    return r;
  }();
};

template <class Tag, class Ctx>
constexpr int enclosing_loop_id() {
  constexpr int id = loop_id<Tag, Ctx>::value;
  static_assert(id >= 0, "tessera: a loop variable or carried value is used outside its loop body");
  return id;
}

// Ctx inside the body of one more loop, tagged Tag; and the number of enclosing loops.
template <class Ctx, class Tag> struct push_loop;
template <class... Ts, class Tag>
struct push_loop<type_list<Ts...>, Tag> { using type = type_list<Ts..., Tag>; };
template <class List> struct list_size;
template <class... Ts>
struct list_size<type_list<Ts...>> { static constexpr std::size_t value = sizeof...(Ts); };

// (iv i32 [] ID)
template <class Tag>
struct LoopVar : ExprBase {
  static constexpr DType dtype = DType::i32;
  using shape = Shape<>;
  static constexpr bool loop_dependent = true;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("iv", etype_text_v<LoopVar>, int_text_v<enclosing_loop_id<Tag, Ctx>()>);
  }
};

// (carried TYPE ID K)
template <class Tag, int K, DType D, class S>
struct Carried : ExprBase {
  static constexpr DType dtype = D;
  using shape = S;
  static constexpr bool loop_dependent = true;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("carried", etype_text_v<Carried>, int_text_v<enclosing_loop_id<Tag, Ctx>()>, int_text_v<K>);
  }
};

// What a body with several carried values returns: carry(e0, e1, ...).
template <class... Es>
struct Carry {};

template <class R> struct yields_of { using type = type_list<R>; };
template <class... Es> struct yields_of<Carry<Es...>> { using type = type_list<Es...>; };

// (for TYPE ID N (INIT*) (YIELD*)): not an expression, but typed (TYPE, that of carried value 0)
// and shared by the (result ...) nodes of its carried values; its ID is its nesting depth.
template <class Tag, class N, class Inits, class Yields> struct For;
template <class Tag, class N, class Init0, class... Inits, class... Yields>
struct For<Tag, N, type_list<Init0, Inits...>, type_list<Yields...>> {
  static constexpr std::size_t count = 1 + sizeof...(Inits);
  using inits = type_list<Init0, Inits...>;
  static constexpr DType dtype = Init0::dtype;
  using shape = typename Init0::shape;
  using operands = type_list<N, Init0, Inits...>;  // those outside the loop; the yields are inside
  static constexpr bool loop_dependent = true;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    static_assert(loop_id<Tag, Ctx>::value < 0,
                  "tessera: a loop body object cannot be reused for a loop nested inside itself");
    using Inner = typename push_loop<Ctx, Tag>::type;
    s.list("for", etype_text_v<For>, int_text_v<list_size<Ctx>::value>, node<N, Ctx>{},
           group<node<Init0, Ctx>, node<Inits, Ctx>...>{}, group<node<Yields, Inner>...>{});
  }
};

template <std::size_t K, class L> struct list_at;
template <std::size_t K, class T, class... Ts>
struct list_at<K, type_list<T, Ts...>> : list_at<K - 1, type_list<Ts...>> {};
template <class T, class... Ts> struct list_at<0, type_list<T, Ts...>> { using type = T; };

// (result TYPE K FOR): carried value K of loop F after it finishes.
template <class F, std::size_t K>
struct Result : ExprBase {
  using init = typename list_at<K, typename F::inits>::type;
  static constexpr DType dtype = init::dtype;
  using shape = typename init::shape;
  using operands = type_list<F>;
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("result", etype_text_v<Result>, int_text_v<K>, node<F, Ctx>{});
  }
};

// The values of a loop carrying several values: get<K>(), or structured bindings.
template <class F>
struct Results {
  static constexpr std::size_t size = F::count;
  template <std::size_t K>
  constexpr auto get() const {
    static_assert(K < size, "tessera: get<K>: the loop carries fewer values");
    if constexpr (K < size) return Result<F, K>{};
  }
};

// The type the body returns when called with the loop's placeholders.
template <class Body, class Inits, class Seq> struct body_result;
template <class Body, class... Inits, std::size_t... K>
struct body_result<Body, type_list<Inits...>, std::index_sequence<K...>> {
  using type = decltype(std::declval<Body&>()(
      LoopVar<Body>{}, Carried<Body, static_cast<int>(K), Inits::dtype, typename Inits::shape>{}...));
};

// Yields, with c<V> literals typed like their inits; and whether each matches its init.
template <class Ys, class Is> struct typed_yields;
template <class... Ys, class... Is>
struct typed_yields<type_list<Ys...>, type_list<Is...>> {
  using type = type_list<to_expr_t<Ys, Is::dtype, typename Is::shape>...>;
  template <class Y, class I>
  static constexpr bool matches() {
    if constexpr (Expr<Y>)
      return Y::dtype == I::dtype && std::is_same_v<typename Y::shape, typename I::shape>;
    else return false;
  }
  static constexpr bool ok = (matches<to_expr_t<Ys, Is::dtype, typename Is::shape>, Is>() && ...);
};

}  // namespace tessera::detail

namespace tessera {

// carry(e0, e1, ...): the values a loop body yields when it carries several (or one) values.
template <class... Es>
constexpr detail::Carry<Es...> carry(Es...) {
  static_assert((detail::Operand<Es> && ...), "tessera: carry(...) takes tile expressions");
  return {};
}

// for_range(n, body, init0, init1, ...): run body(i, c0, c1, ...) for i = 0 .. n-1, where ck starts
// as initk and becomes the body's k-th yield. Returns the final value (one carried value) or an
// object with get<K>() (several).
template <class N, class Body, class... Inits>
constexpr auto for_range(N, Body, Inits...) {
  static_assert(detail::is_index<N>(),
                "tessera: for_range trip count must be an i32 scalar expression (or c<N>)");
  static_assert(sizeof...(Inits) > 0,
                "tessera: for_range needs at least one carried value (an init after the body)");
  static_assert((detail::Expr<Inits> && ...), "tessera: for_range init values must be tile expressions");
  if constexpr (sizeof...(Inits) > 0 && (detail::Expr<Inits> && ...)) {
    using Ret = typename detail::body_result<Body, detail::type_list<Inits...>,
                                             std::index_sequence_for<Inits...>>::type;
    using Ys = typename detail::yields_of<Ret>::type;
    constexpr bool arity_ok = detail::list_size<Ys>::value == sizeof...(Inits);
    static_assert(arity_ok,
                  "tessera: the loop body must yield one value per carried init; return tessera::carry(...)");
    if constexpr (arity_ok) {
      using Typed = detail::typed_yields<Ys, detail::type_list<Inits...>>;
      static_assert(Typed::ok,
                    "tessera: a loop body must yield each carried value with the dtype and shape of its init");
      using F = detail::For<Body, detail::to_expr_t<N, DType::i32, Shape<>>, detail::type_list<Inits...>,
                            typename Typed::type>;
      if constexpr (sizeof...(Inits) == 1) return detail::Result<F, 0>{};
      else return detail::Results<F>{};
    }
  }
}

// get<K>(r): carried value K after the loop r (from a for_range with several carried values).
template <std::size_t K, class F>
constexpr auto get(detail::Results<F> r) { return r.template get<K>(); }

}  // namespace tessera

template <class F>
struct std::tuple_size<tessera::detail::Results<F>> : std::integral_constant<std::size_t, F::count> {};
template <std::size_t K, class F>
struct std::tuple_element<K, tessera::detail::Results<F>> { using type = tessera::detail::Result<F, K>; };
