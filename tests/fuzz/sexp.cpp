// sexp.cpp: the fuzzer's S-expression reader (see sexp.h).
#include "sexp.h"

#include <charconv>
#include <stdexcept>
#include <string>

namespace tessera::fuzz {
namespace {

bool is_bracket(char c) { return c == '(' || c == ')' || c == '[' || c == ']'; }

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}
  SNode read() {
    SNode n = node();
    skip();
    if (pos_ != text_.size()) fail("trailing text");
    return n;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error(std::string("sexp: ") + what + " at offset " + std::to_string(pos_));
  }
  void skip() {
    while (pos_ < text_.size() && text_[pos_] == ' ') ++pos_;
  }
  SNode node() {
    skip();
    if (pos_ >= text_.size()) fail("unexpected end");
    const std::size_t start = pos_;
    const char c = text_[pos_];
    SNode n;
    if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      n.is_list = true;
      n.bracket = c;
      ++pos_;
      for (;;) {
        skip();
        if (pos_ >= text_.size()) fail("unclosed list");
        if (text_[pos_] == close) break;
        if (text_[pos_] == ')' || text_[pos_] == ']') fail("mismatched bracket");
        n.items.push_back(node());
      }
      ++pos_;
    } else {
      if (is_bracket(c)) fail("unexpected closing bracket");
      while (pos_ < text_.size() && text_[pos_] != ' ' && !is_bracket(text_[pos_])) ++pos_;
      n.atom = text_.substr(start, pos_ - start);
    }
    n.text = text_.substr(start, pos_ - start);
    return n;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

const SNode& SNode::operator[](std::size_t i) const {
  if (!is_list || i >= items.size())
    throw std::runtime_error("sexp: node '" + std::string(text.substr(0, 80)) + "' has no item " + std::to_string(i));
  return items[i];
}

int64_t SNode::as_int() const {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(atom.data(), atom.data() + atom.size(), v);
  if (is_list || ec != std::errc() || p != atom.data() + atom.size())
    throw std::runtime_error("sexp: expected an integer, got '" + std::string(text.substr(0, 80)) + "'");
  return v;
}

SNode read_sexp(std::string_view text) { return Reader(text).read(); }

std::vector<Token> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t i = 0;
  while (i < text.size()) {
    if (text[i] == ' ') {
      ++i;
    } else if (is_bracket(text[i])) {
      tokens.push_back({i, 1});
      ++i;
    } else {
      std::size_t start = i;
      while (i < text.size() && text[i] != ' ' && !is_bracket(text[i])) ++i;
      tokens.push_back({start, i - start});
    }
  }
  return tokens;
}

}  // namespace tessera::fuzz
