// tessera/expr/call_expr.h: calling a device function written in CUDA C++ or PTX, elementwise.
//
// A device function is declared once, with its name, its code and its scalar signature:
//
//   constexpr auto twice_plus = tessera::cuda_function<"twice_plus", R"(
//     extern "C" __device__ float twice_plus(float x, float y) { return 2.0f * x + y; })",
//     DType::f32, DType::f32, DType::f32>;   // result, then arguments
//
// and called inside a kernel like any elementwise function: twice_plus(a.load_like(o), c<1>)
// applies it to every element (arguments broadcast numpy-style; a c<V> literal takes the declared
// dtype). The code travels in the kernel's AST, hex-encoded, as
//   (call TYPE NAME LANG HEX X...)      LANG := cuda | ptx
// so it is part of every cache key. On GPU targets it is compiled (CUDA C++ with NVRTC, as
// relocatable code) and linked into the kernel with nvJitLink; the function must be
// `extern "C" __device__` (or a PTX .func of that name). The CPU target cannot run it and says so.
// Dtypes: f32 and i32. The function is outside tessera's guarantees: it sees only scalars by
// value, so it cannot break the ownership rules, but its arithmetic is the user's. Assumes
// expr_base.h, shape_expr.h and binary_expr.h (operand helpers).
#pragma once

#include "tessera/expr/binary_expr.h"
#include "tessera/expr/expr_base.h"
#include "tessera/expr/shape_expr.h"

namespace tessera {

enum class DeviceLanguage { cuda, ptx };

}  // namespace tessera

namespace tessera::detail {

// The 2N lowercase hex digits of the N bytes of `s`.
template <std::size_t N>
constexpr fixed_string<2 * N> hex_bytes(const fixed_string<N>& s) {
  fixed_string<2 * N> r{};
  for (std::size_t i = 0; i < N; ++i) {
    auto byte = static_cast<unsigned char>(s.data[i]);
    r.data[2 * i] = "0123456789abcdef"[byte >> 4];
    r.data[2 * i + 1] = "0123456789abcdef"[byte & 0xf];
  }
  return r;
}

constexpr bool is_identifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_'))
      return false;
  return true;
}

// (call TYPE NAME LANG HEX X...): every X already has the result shape and its declared dtype.
template <auto Name, DeviceLanguage Lang, auto Source, DType R, class... X>
struct Call : ExprBase {
  static constexpr DType dtype = R;
  using shape = typename expr_shape<X...>::type;
  using operands = type_list<X...>;
  static constexpr auto source_hex = hex_bytes(Source);
  template <class Ctx>
  static constexpr void write(text_sink& s) {
    if constexpr (Lang == DeviceLanguage::cuda)
      s.list("call", etype_text_v<Call>, Name, "cuda", source_hex, node<X, Ctx>{}...);
    else
      s.list("call", etype_text_v<Call>, Name, "ptx", source_hex, node<X, Ctx>{}...);
  }
};

template <DType D>
constexpr bool callable_dtype = D == DType::f32 || D == DType::i32;

// An expression argument must have the declared dtype; a c<V> literal takes it.
template <class X, DType A>
constexpr bool declared_dtype_matches() {
  if constexpr (Expr<X>) return X::dtype == A;
  else return true;
}

}  // namespace tessera::detail

namespace tessera {

// A device function `Name` (code `Source` in language `Lang`) of scalar signature R(A...).
template <detail::fixed_string Name, DeviceLanguage Lang, detail::fixed_string Source, DType R, DType... A>
struct DeviceFunction {
  static_assert(detail::is_identifier(Name.view()),
                "tessera: a device function's name must be a C identifier (declare it extern \"C\")");
  static_assert(detail::callable_dtype<R> && (detail::callable_dtype<A> && ...),
                "tessera: device functions take and return f32 or i32 scalars");
  static_assert(sizeof...(A) > 0, "tessera: a device function takes at least one argument");

  template <class... X0>
  constexpr auto operator()(X0...) const {
    static_assert(sizeof...(X0) == sizeof...(A),
                  "tessera: wrong number of arguments in a call of a device function");
    (detail::reject_plain_number<X0>(), ...);
    static_assert((detail::Operand<detail::operand_t<X0>> && ...) &&
                      (detail::Expr<detail::operand_t<X0>> || ...),
                  "tessera: a device function is called on tile expressions (one of them may be c<V>)");
    if constexpr (sizeof...(X0) == sizeof...(A) && (detail::Expr<detail::operand_t<X0>> || ...)) {
      static_assert((detail::declared_dtype_matches<detail::operand_t<X0>, A>() && ...),
                    "tessera: dtype mismatch in a call of a device function: each argument must have "
                    "the declared dtype; use tessera::cast<...>");
      using S = typename detail::expr_shape<detail::operand_t<X0>...>::type;
      static_assert(S::rank > 0,
                    "tessera: a device function is called elementwise on tiles: give it a tile of rank 1 or "
                    "more (for a scalar x, broadcast_to<1>(x))");
      return detail::Call<Name, Lang, Source, R,
                          detail::bcast_t<S, detail::to_expr_t<detail::operand_t<X0>, A, S>>...>{};
    }
  }
};

template <detail::fixed_string Name, detail::fixed_string Source, DType R, DType... A>
inline constexpr DeviceFunction<Name, DeviceLanguage::cuda, Source, R, A...> cuda_function{};

template <detail::fixed_string Name, detail::fixed_string Source, DType R, DType... A>
inline constexpr DeviceFunction<Name, DeviceLanguage::ptx, Source, R, A...> ptx_function{};

}  // namespace tessera
