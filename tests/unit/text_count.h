// text_count.h: how often a string occurs in a text (PTX, an AST's text), for the tests that
// count instructions, barriers or parameters in generated code.
#pragma once

#include <cstddef>
#include <string_view>

namespace text_count {

// The occurrences of `what` in `text`, overlapping ones included.
inline std::size_t occurrences(std::string_view text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string_view::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace text_count
