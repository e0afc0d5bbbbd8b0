// nfc.cpp: NFC through utf8proc_map, with the fast path of nfc.h.
#include "nfc.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <new>

#include "errors.h"

namespace qwen3 {

std::string to_nfc(std::string_view text) {
  // Lead bytes 0xC2..0xCB encode U+0080..U+02FF; any byte from 0xCC up starts (or is part of) a
  // code point at or above U+0300 -- continuation bytes are below 0xC0, so they never trigger this.
  bool below_0300 = true;
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0xCC) {
      below_0300 = false;
      break;
    }
  if (below_0300) return std::string(text);
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t len = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                                      static_cast<utf8proc_ssize_t>(text.size()), &out,
                                      static_cast<utf8proc_option_t>(UTF8PROC_STABLE | UTF8PROC_COMPOSE));
  if (len < 0) {
    if (len == UTF8PROC_ERROR_NOMEM) throw std::bad_alloc();
    throw TokenizerError(std::string("NFC normalization failed: ") + utf8proc_errmsg(len));
  }
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(len));
}

}  // namespace qwen3
