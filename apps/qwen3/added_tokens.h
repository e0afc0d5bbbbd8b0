// added_tokens.h: finding added tokens (special and not) in text before it is pre-tokenized.
//
// As in `tokenizers`, the text is scanned left to right and at each position the longest added
// token starting there is taken (leftmost-longest), so `<|im_start|>` is one token wherever it
// appears; the text between matches goes on to normalization and BPE. Tokens are matched on the
// raw text when their "normalized" flag is false (all of Qwen3's) and on the normalized text
// otherwise (the caller runs two matchers). lstrip, rstrip and single_word are not supported
// (the tokenizer rejects them when loading); empty contents are never matched.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace qwen3 {

struct AddedToken {
  std::int32_t id = 0;
  std::string content;
  bool special = false;     // skipped by decode(skip_special); matched only when special tokens are parsed
  bool normalized = false;  // matched after normalization rather than before
};

class AddedTokenMatcher {
 public:
  struct Segment {
    std::string_view text;  // plain text when id < 0, else the token's text
    std::int32_t id;
  };

  explicit AddedTokenMatcher(std::vector<AddedToken> tokens);

  bool empty() const { return tokens_.empty(); }
  // Appends the segments of `text`; special tokens are matched only when `with_special`.
  void split(std::string_view text, bool with_special, std::vector<Segment>& out) const;

 private:
  std::vector<AddedToken> tokens_;                          // longest first
  std::array<std::vector<std::uint32_t>, 256> by_first_{};  // indices into tokens_, by first byte
};

}  // namespace qwen3
