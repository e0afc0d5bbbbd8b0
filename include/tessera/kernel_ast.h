// tessera/kernel_ast.h: a kernel lambda's AST text, built at C++ compile time.
//
// detail::kernel_ast<Fn, Params...> instantiates the generic, capture-free kernel lambda Fn with
// the placeholder parameters Params... (OutParam / InParam / ScalarParam, numbered 0, 1, ... in
// order) inside decltype only; the lambda is never run. The returned statement type (a Store or a
// Seq of Stores) is serialized into `text`, a fixed_string holding
//   (kernel (params PARAM*) (body STMT*))
// exactly as docs/ast-format.md specifies; view() is a std::string_view usable in constant
// expressions. fixed_string itself lives in expr/fixed_string.h. Assumes the expression headers.
#pragma once

#include <string_view>
#include <type_traits>
#include <utility>

#include "tessera/expr/expr_base.h"
#include "tessera/expr/fixed_string.h"
#include "tessera/expr/load_store_expr.h"

namespace tessera::detail {

template <class... Params, std::size_t... I>
constexpr bool params_numbered(std::index_sequence<I...>) {
  return ((Params::index == static_cast<int>(I)) && ...);
}

// (body STMT*)
template <class Stmt> struct BodyText;
template <int P, class X>
struct BodyText<Store<P, X>> {
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("body", node<Store<P, X>, Ctx>{}); }
};
template <class... Ss>
struct BodyText<Seq<Ss...>> {
  template <class Ctx>
  static constexpr void write(text_sink& s) { s.list("body", node<Ss, Ctx>{}...); }
};

// (kernel (params PARAM*) (body STMT*))
template <class Body, class... Params>
struct KernelText {
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    s.list("kernel", sexpr("params", Params::decl()...), node<BodyText<Body>, Ctx>{});
  }
};

template <class Fn, class... Params>
struct kernel_ast {
  static_assert((is_param_v<Params> && ...),
                "tessera: kernel parameters must be OutParam / InParam / ScalarParam placeholders");
  static_assert(params_numbered<Params...>(std::index_sequence_for<Params...>{}),
                "tessera: kernel parameter placeholders must be numbered 0, 1, ... in order");
  static_assert(std::is_empty_v<Fn>, "tessera: a kernel lambda must not capture anything");

  using body = decltype(std::declval<Fn&>()(Params{}...));
  static_assert(is_stmt_v<body> || std::is_same_v<body, InvalidStmt>,
                "tessera: a kernel lambda must return out.store(...) or tessera::seq(out.store(...), ...)");

  static constexpr auto build_text() {
    if constexpr (is_stmt_v<body>)
      return make_text<KernelText<body, Params...>, type_list<>>();
    else
      return fixed_string("");  // the static_asserts above have fired
  }
  static constexpr auto text = build_text();
  static constexpr std::string_view view() { return text.view(); }
};

}  // namespace tessera::detail
