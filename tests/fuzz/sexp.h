// sexp.h: a small S-expression reader for the fuzzer (reference interpreter and mutator).
//
// Deliberately independent of the library's parser (src/frontend/ast.cpp), which the fuzzer
// tests: atoms are runs of characters other than space and brackets, lists are ( ... ) or
// [ ... ]. Atoms and each node's whole text are views into the input, which must outlive the tree.
// read_sexp throws std::runtime_error on malformed text.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace tessera::fuzz {

struct SNode {
  bool is_list = false;
  char bracket = '(';
  std::string_view atom;  // atoms
  std::string_view text;  // the whole node
  std::vector<SNode> items;

  const SNode& operator[](std::size_t i) const;  // throws std::runtime_error if absent
  std::size_t size() const { return items.size(); }
  std::string_view head() const { return is_list && !items.empty() && !items[0].is_list ? items[0].atom : ""; }
  int64_t as_int() const;  // throws std::runtime_error if not an integer atom
};

SNode read_sexp(std::string_view text);

// The tokens of `text` (atoms and single brackets) with their offsets, for the mutator.
struct Token {
  std::size_t offset, length;
};
std::vector<Token> tokenize(std::string_view text);

}  // namespace tessera::fuzz
