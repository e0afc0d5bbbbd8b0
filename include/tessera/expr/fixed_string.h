// tessera/expr/fixed_string.h: compile-time strings for serializing kernel ASTs.
//
// Defines detail::fixed_string<N> (N chars plus a terminating NUL, a literal type usable in constant
// expressions), one-step concatenation (concat, and sexpr/bracket, which join parts with single
// spaces inside "( )" or "[ ]"), decimal integers (int_text_v<V>) and the 0x + 16-hex-digit spelling
// of a double (hex_text_v<V>); text_sink.h builds a kernel's text from them. Every function takes
// all its parts at once, so building a string of K parts is one constant evaluation, not K nested
// template instantiations.
// Assumes nothing but the standard library.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessera::detail {

template <std::size_t N>
struct fixed_string {
  char data[N + 1]{};

  constexpr fixed_string() = default;
  constexpr fixed_string(const char (&s)[N + 1]) {
    for (std::size_t i = 0; i < N; ++i) data[i] = s[i];
  }
  static constexpr std::size_t size() { return N; }
  constexpr std::string_view view() const { return {data, N}; }
  constexpr const char* c_str() const { return data; }
  constexpr operator std::string_view() const { return view(); }

  template <std::size_t M>
  friend constexpr bool operator==(const fixed_string& a, const fixed_string<M>& b) {
    return a.view() == b.view();
  }
};
template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N - 1>;

// Length of a part: a fixed_string or a string literal.
template <class T> struct fs_len;
template <std::size_t N> struct fs_len<fixed_string<N>> { static constexpr std::size_t value = N; };
template <std::size_t M> struct fs_len<char[M]> { static constexpr std::size_t value = M - 1; };

template <class P>
constexpr const char* fs_chars(const P& p) {
  if constexpr (requires { p.data; }) return p.data;
  else return p;
}

template <class P>
constexpr void fs_append(char* out, std::size_t& pos, const P& p) {
  const char* s = fs_chars(p);
  for (std::size_t i = 0; i < fs_len<P>::value; ++i) out[pos++] = s[i];
}

// All parts, back to back.
template <class... Ps>
constexpr auto concat(const Ps&... ps) {
  fixed_string<(fs_len<Ps>::value + ... + 0)> r{};
  std::size_t pos = 0;
  (fs_append(r.data, pos, ps), ...);
  return r;
}

template <std::size_t A, std::size_t B>
constexpr auto operator+(const fixed_string<A>& a, const fixed_string<B>& b) { return concat(a, b); }

// Open, the parts separated by single spaces, Close: bracket<'(', ')'>(a, b) is "(a b)".
template <char Open, char Close, class... Ps>
constexpr auto bracket(const Ps&... ps) {
  constexpr std::size_t n = sizeof...(Ps);
  fixed_string<(fs_len<Ps>::value + ... + 0) + (n ? n - 1 : 0) + 2> r{};
  std::size_t pos = 0, i = 0;
  r.data[pos++] = Open;
  ((i++ ? void(r.data[pos++] = ' ') : void(), fs_append(r.data, pos, ps)), ...);
  r.data[pos++] = Close;
  return r;
}

// An S-expression list: sexpr("add", "f32 [4]", x, y) is "(add f32 [4] x y)".
template <class... Ps>
constexpr auto sexpr(const Ps&... ps) { return bracket<'(', ')'>(ps...); }

constexpr unsigned long long magnitude(long long v) {
  return v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v);
}

constexpr std::size_t decimal_length(long long v) {
  std::size_t n = v < 0 ? 2 : 1;
  for (unsigned long long u = magnitude(v); u >= 10; u /= 10) ++n;
  return n;
}

template <long long V>
constexpr auto int_text() {
  fixed_string<decimal_length(V)> r{};
  unsigned long long u = magnitude(V);
  std::size_t pos = r.size();
  do { r.data[--pos] = static_cast<char>('0' + u % 10); u /= 10; } while (u);
  if (V < 0) r.data[0] = '-';
  return r;
}
template <long long V>
inline constexpr auto int_text_v = int_text<V>();

// "0x" followed by the 16 lowercase hex digits of std::bit_cast<uint64_t>(V).
template <double V>
constexpr auto hex_text() {
  fixed_string<18> r{};
  const std::uint64_t bits = std::bit_cast<std::uint64_t>(V);
  r.data[0] = '0';
  r.data[1] = 'x';
  for (int i = 0; i < 16; ++i) r.data[2 + i] = "0123456789abcdef"[(bits >> (60 - 4 * i)) & 0xf];
  return r;
}
template <double V>
inline constexpr auto hex_text_v = hex_text<V>();

}  // namespace tessera::detail
