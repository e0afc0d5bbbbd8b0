// regex_splitter.h: the `Split` pre-tokenizer with behaviour "Isolated", on PCRE2.
//
// The pattern is the one tokenizer.json gives (for Qwen3 it has `(?i:...)` contractions, \p{L} and
// \p{N} classes and the lookahead `\s+(?!\S)`, which is why PCRE2 and not RE2). It is compiled
// with PCRE2_UTF and PCRE2_UCP, so \s, \d and case folding follow Unicode, and JIT-compiled when
// the library has a JIT. split() cuts a text into the successive leftmost matches and the text
// between them, each a piece of its own, in order; an empty match yields no piece and the search
// moves on by one character. The text must be valid UTF-8 (checked once by the caller).
#pragma once

#include <string>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;

namespace qwen3 {

class RegexSplitter {
 public:
  // `source` names the file in errors (TokenizerError) about a pattern PCRE2 rejects.
  RegexSplitter(const std::string& pattern, std::string_view source);
  ~RegexSplitter();
  RegexSplitter(const RegexSplitter&) = delete;
  RegexSplitter& operator=(const RegexSplitter&) = delete;

  // Appends the pieces of `text` (views into it) to `pieces`.
  void split(std::string_view text, std::vector<std::string_view>& pieces) const;

  bool jit_compiled() const { return jit_; }

 private:
  pcre2_real_code_8* code_ = nullptr;
  bool jit_ = false;
};

}  // namespace qwen3
