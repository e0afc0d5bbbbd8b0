// text_stream.cpp: the stop-string and UTF-8 hold-back of text_stream.h.
#include "text_stream.h"

#include <algorithm>
#include <utility>

namespace qwen3 {

std::size_t utf8_complete_prefix(std::string_view bytes) {
  const std::size_t n = bytes.size();
  // The last byte that is not a continuation byte (10xxxxxx), among the last four.
  for (std::size_t back = 1; back <= std::min<std::size_t>(4, n); ++back) {
    const auto b = static_cast<unsigned char>(bytes[n - back]);
    if ((b & 0xC0) == 0x80) continue;
    const std::size_t need = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 1;
    return back < need ? n - back : n;
  }
  return n;  // only continuation bytes at the end: no sequence more bytes could complete
}

TextStream::TextStream(std::vector<std::string> stop_strings) : stops_(std::move(stop_strings)) {}

std::string TextStream::push(std::string_view bytes) {
  if (stopped_) return {};
  buffer_.append(bytes);
  // A stop string cannot start before sent_: the tail that could begin one is always held back.
  std::size_t stop_at = std::string::npos;
  for (const std::string& s : stops_) stop_at = std::min(stop_at, buffer_.find(s, sent_));
  std::size_t end = buffer_.size();
  if (stop_at != std::string::npos) {
    stopped_ = true;
    buffer_.resize(stop_at);
    end = stop_at;
  } else {
    std::size_t hold = 0;
    const std::string_view tail = std::string_view(buffer_).substr(sent_);
    for (const std::string& s : stops_)
      for (std::size_t k = std::min(s.size() - 1, tail.size()); k > hold; --k)
        if (tail.ends_with(std::string_view(s).substr(0, k))) {
          hold = k;
          break;
        }
    end = sent_ + utf8_complete_prefix(tail.substr(0, tail.size() - hold));
  }
  std::string piece = buffer_.substr(sent_, end - sent_);
  sent_ = end;
  return piece;
}

std::string TextStream::finish() {
  std::string rest = buffer_.substr(sent_);
  sent_ = buffer_.size();
  return rest;
}

}  // namespace qwen3
