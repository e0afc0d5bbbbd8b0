// byte_level.h: GPT-2's byte-level alphabet, which the Qwen3 vocabulary is written in.
//
// Every byte 0..255 stands for one printable code point: the bytes of '!'..'~', U+00A1..U+00AC
// and U+00AE..U+00FF stand for themselves, the other 68 (controls, space, DEL, NBSP, soft hyphen)
// for U+0100, U+0101, ... in byte order, so that space is 'Ġ' (U+0120) and '\n' is 'Ċ' (U+010A).
// A vocabulary entry is the UTF-8 of such code points; encoding maps text bytes to them and
// decoding maps them back.
#pragma once

#include <string>
#include <string_view>

namespace qwen3 {

// The UTF-8 of the code point that stands for `byte`.
std::string_view byte_level_char(unsigned char byte);

// Appends the byte-level spelling of raw bytes.
void append_byte_level(std::string_view bytes, std::string& out);

// Appends the bytes a byte-level token stands for and returns true; returns false and appends
// nothing when some character of the token is outside the alphabet (as an added token's can be).
bool append_bytes_of_byte_level(std::string_view token, std::string& out);

}  // namespace qwen3
