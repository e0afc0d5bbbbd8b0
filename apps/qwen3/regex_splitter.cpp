// regex_splitter.cpp: compiling the pre-tokenizer pattern with PCRE2 and the match loop.
#define PCRE2_CODE_UNIT_WIDTH 8
#include "regex_splitter.h"

#include <fmt/format.h>
#include <pcre2.h>

#include <memory>

#include "errors.h"

namespace qwen3 {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0) return fmt::format("PCRE2 error {}", code);
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

RegexSplitter::RegexSplitter(const std::string& pattern, std::string_view source) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP, &error,
                        &offset, nullptr);
  if (!code_)
    throw TokenizerError(fmt::format("{}: the pre-tokenizer regex does not compile with PCRE2 at offset {}: {}",
                                     source, offset, pcre2_message(error)));
  std::uint32_t has_jit = 0;
  pcre2_config(PCRE2_CONFIG_JIT, &has_jit);
  // Without a JIT (or when it fails, e.g. no executable memory) pcre2_match interprets: slower, same result.
  jit_ = has_jit && pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE) == 0;
}

RegexSplitter::~RegexSplitter() { pcre2_code_free(code_); }

void RegexSplitter::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code_, nullptr), &pcre2_match_data_free);
  if (!match) throw std::bad_alloc();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  const std::size_t n = text.size();
  std::size_t start = 0, last = 0;
  while (start < n) {
    int rc = pcre2_match(code_, subject, n, start, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0)
      throw TokenizerError(fmt::format("the pre-tokenizer regex failed at byte {} of a {}-byte text: {}", start, n,
                                       pcre2_message(rc)));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    std::size_t begin = ovector[0], end = ovector[1];
    if (begin > last) pieces.push_back(text.substr(last, begin - last));
    if (end > begin) {
      pieces.push_back(text.substr(begin, end - begin));
      last = start = end;
    } else {
      // An empty match: move on by one whole character.
      start = begin + 1;
      while (start < n && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
      last = begin;
    }
  }
  if (last < n) pieces.push_back(text.substr(last));
}

}  // namespace qwen3
