// text_stream.h: generated text, released piece by piece as it becomes safe to send, with stop
// strings.
//
// A streaming client gets the text while tokens are generated, but a token's bytes are not always
// text yet: a token can end inside a UTF-8 character (byte-level BPE), and the end of the text so
// far can be the start of a stop string, which must not be sent if it completes. push() appends a
// token's bytes and returns what can be sent now: everything not sent before, up to the earliest
// stop string (which ends the stream: stopped()), else less a held-back tail -- the longest suffix
// that is a proper prefix of a stop string, and then an incomplete UTF-8 sequence at the end.
// finish() returns what was held back when the generation ends without a stop string.
//
// The pieces concatenate to text(): the whole output, the same however the bytes arrived. Pieces
// are split only where a UTF-8 decoder is between characters (after a complete or an invalid
// sequence), so replacing invalid bytes piece by piece (JSON output does, with U+FFFD) gives the
// same text as replacing them in the whole. Stop strings must be non-empty (the protocol layer
// checks); they are matched on bytes, in the order they complete, the earliest start winning.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace qwen3 {

class TextStream {
 public:
  explicit TextStream(std::vector<std::string> stop_strings = {});

  // Appends `bytes` (nothing after stopped()); returns the text that can be sent now, maybe empty.
  std::string push(std::string_view bytes);
  // The held-back rest, at the end of the generation (empty after stopped()).
  std::string finish();

  bool stopped() const { return stopped_; }
  // Everything push() and finish() have returned.
  std::string_view text() const { return std::string_view(buffer_).substr(0, sent_); }

 private:
  std::vector<std::string> stops_;
  std::string buffer_;    // the bytes pushed, cut at a stop string once one is found
  std::size_t sent_ = 0;  // bytes of buffer_ returned so far
  bool stopped_ = false;
};

// The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence that more
// bytes could still complete (a lead byte followed by fewer continuation bytes than it needs).
std::size_t utf8_complete_prefix(std::string_view bytes);

}  // namespace qwen3
