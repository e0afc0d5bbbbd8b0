// ast_mutator.cpp: random edits of AST text (see ast_mutator.h).
#include "ast_mutator.h"

#include <cctype>
#include <vector>

#include "sexp.h"

namespace tessera::fuzz {
namespace {

const std::vector<std::string> kWords{
    "kernel", "params", "body", "out", "in", "scalar", "store", "load", "load_like", "own", "arg", "dim",
    "program_id", "num_programs", "const", "iota", "neg", "exp", "log", "sqrt", "rsqrt", "tanh", "abs", "not",
    "fast_exp", "add", "sub", "mul", "div", "fast_div", "max", "min", "and", "or", "eq", "lt", "ge", "select",
    "cast", "broadcast", "reshape", "transpose", "reduce", "sum", "mma", "for", "iv", "carried", "result", "call",
    "f32", "f16", "bf16", "i32", "i1", "f8e4m3", "f8e5m2", "i64", "f64", ""};
const std::vector<std::string> kNumbers{"0", "1", "-1", "2", "3", "4", "7", "64", "3000", "65536", "2147483647",
                                        "-2147483648", "1099511627776", "99999999999999999999", "0x10", "1.5", "-0"};
const std::vector<std::string> kBrackets{"(", ")", "[", "]", "()", "[]", "( )"};

bool is_number(std::string_view s) {
  if (s.empty()) return false;
  std::size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (; i < s.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

std::string mutate_once(const std::string& text, Rng& rng) {
  std::vector<Token> tokens = tokenize(text);
  if (tokens.empty()) return text;
  auto token_at = [&](std::size_t i) { return std::string_view(text).substr(tokens[i].offset, tokens[i].length); };
  auto replace = [&](std::size_t i, std::string_view with) {
    std::string s = text;
    s.replace(tokens[i].offset, tokens[i].length, with);
    return s;
  };
  const std::size_t i = static_cast<std::size_t>(rng.uniform(0, std::ssize(tokens) - 1));
  switch (rng.uniform(0, 8)) {
    case 0: return text.substr(0, static_cast<std::size_t>(rng.uniform(0, std::ssize(text))));  // truncate
    case 1: return replace(i, "");                                                                // delete a token
    case 2: {                                                                                     // duplicate a token
      std::string s = text;
      s.insert(tokens[i].offset, std::string(token_at(i)) + " ");
      return s;
    }
    case 3: {  // swap two tokens
      const std::size_t j = static_cast<std::size_t>(rng.uniform(0, std::ssize(tokens) - 1));
      if (i == j) return text;
      const std::size_t a = std::min(i, j), b = std::max(i, j);
      std::string s = text;
      const std::string ta(token_at(a)), tb(token_at(b));
      s.replace(tokens[b].offset, tokens[b].length, ta);
      s.replace(tokens[a].offset, tokens[a].length, tb);
      return s;
    }
    case 4:
    case 5: {  // replace a number (prefer numbers)
      std::vector<std::size_t> numbers;
      for (std::size_t k = 0; k < tokens.size(); ++k)
        if (is_number(token_at(k))) numbers.push_back(k);
      const std::size_t k = numbers.empty() ? i : rng.pick(numbers);
      return replace(k, rng.pick(kNumbers));
    }
    case 6: return replace(i, rng.pick(kWords));     // an op name or dtype
    case 7: return replace(i, rng.pick(kBrackets));  // a bracket
    default: {                                       // damage a constant's hex digits
      std::vector<std::size_t> hex;
      for (std::size_t k = 0; k < tokens.size(); ++k)
        if (token_at(k).starts_with("0x")) hex.push_back(k);
      if (hex.empty()) return replace(i, "0x");
      const std::size_t k = rng.pick(hex);
      std::string h(token_at(k));
      const int64_t what = rng.uniform(0, 3);
      if (what == 0) h.resize(static_cast<std::size_t>(rng.uniform(0, std::ssize(h))));
      else if (what == 1) h[static_cast<std::size_t>(rng.uniform(0, std::ssize(h) - 1))] = "g-x 9fF"[rng.uniform(0, 6)];
      else if (what == 2) h = "0x7ff0000000000000";  // inf, also as an integer constant
      else h = "0x" + std::string(16, "0123456789abcdef"[rng.uniform(0, 15)]);
      return replace(k, h);
    }
  }
}

}  // namespace

std::string mutate_ast(std::string_view text, Rng& rng) {
  std::string s(text);
  const int64_t edits = rng.uniform(1, 3);
  for (int64_t k = 0; k < edits; ++k) s = mutate_once(s, rng);
  return s;
}

}  // namespace tessera::fuzz
