// byte_level.cpp: the byte <-> code point tables of byte_level.h, built once on first use.
#include "byte_level.h"

#include <array>
#include <cstdint>

#include "utf8.h"

namespace qwen3 {
namespace {

struct Tables {
  std::array<std::string, 256> char_of_byte;
  std::array<std::int16_t, 512> byte_of_code_point;  // -1 where none; every alphabet code point is < 324

  Tables() {
    byte_of_code_point.fill(-1);
    char32_t next_extra = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      char32_t cp = printable ? static_cast<char32_t>(b) : next_extra++;
      append_utf8(char_of_byte[b], cp);
      byte_of_code_point[cp] = static_cast<std::int16_t>(b);
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

std::string_view byte_level_char(unsigned char byte) { return tables().char_of_byte[byte]; }

void append_byte_level(std::string_view bytes, std::string& out) {
  const Tables& t = tables();
  for (char c : bytes) out += t.char_of_byte[static_cast<unsigned char>(c)];
}

bool append_bytes_of_byte_level(std::string_view token, std::string& out) {
  const Tables& t = tables();
  if (find_invalid_utf8(token) != std::string_view::npos) return false;
  std::string bytes;
  for (std::size_t pos = 0; pos < token.size();) {
    char32_t cp = next_code_point(token, pos);
    if (cp >= t.byte_of_code_point.size() || t.byte_of_code_point[cp] < 0) return false;
    bytes += static_cast<char>(t.byte_of_code_point[cp]);
  }
  out += bytes;
  return true;
}

}  // namespace qwen3
