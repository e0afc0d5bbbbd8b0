// nfc.h: Unicode Normalization Form C, the normalizer of Qwen3's tokenizer.json.
//
// Uses utf8proc (Debian's libutf8proc). Text made only of code points below U+0300 is already in
// NFC (all of them have NFC_Quick_Check=Yes and combining class 0, and every code point that can
// compose with a preceding one is U+0300 or above), so such text is returned as it is without
// calling the library: that covers ASCII and Latin-1 prompts. The input must be valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace qwen3 {

std::string to_nfc(std::string_view text);

}  // namespace qwen3
