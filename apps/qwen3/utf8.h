// utf8.h: the few UTF-8 operations the tokenizer needs.
//
// Text entering the tokenizer must be valid UTF-8 in the strict sense of RFC 3629 (no overlong
// forms, no surrogates, nothing above U+10FFFF), as Rust's String is for the `tokenizers` package
// this tokenizer matches; find_invalid_utf8 checks that once per encode, after which the other
// functions assume valid input.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qwen3 {

// The byte offset of the first byte that does not start a valid sequence, or npos.
std::size_t find_invalid_utf8(std::string_view text);

// Decodes the code point starting at text[pos] and advances pos past it (valid input only).
char32_t next_code_point(std::string_view text, std::size_t& pos);

void append_utf8(std::string& out, char32_t code_point);

}  // namespace qwen3
