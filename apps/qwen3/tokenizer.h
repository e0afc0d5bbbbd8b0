// tokenizer.h: the Qwen3 tokenizer, loaded from a Hugging Face tokenizer.json.
//
// Supports what Qwen3's file uses, and rejects anything else with a TokenizerError naming the
// file and the field: a BPE model on GPT-2's byte-level alphabet (byte_level.h, bpe.h), the NFC
// normalizer (nfc.h) or none, a Split pre-tokenizer with an "Isolated" regex (regex_splitter.h)
// followed by ByteLevel without its own regex, added tokens without lstrip/rstrip/single_word
// (added_tokens.h), and ByteLevel post-processor and decoder.
//
// encode(): added tokens are cut out of the raw text first (leftmost-longest), the rest is
// normalized, split by the regex, and each piece BPE-encoded. Qwen3's post-processor adds no
// tokens (there is no BOS), so `add_special` changes nothing for it; it exists for the
// `tokenizers` signature. With SpecialTokens::kAsText, tokens marked special are not recognised
// in the text (their characters are encoded as ordinary text) while other added tokens still
// are -- what `tokenizers` calls encode_special_tokens, e.g. for untrusted user text.
//
// decode() returns the bytes the tokens stand for, concatenated, as raw bytes: a prefix of a
// generation can end inside a UTF-8 character. (`tokenizers` returns a string with such bytes
// replaced by U+FFFD; on complete, valid sequences the two agree.) Ids that are neither in the
// vocabulary nor added tokens decode to nothing, as in `tokenizers`: for Qwen3 these are the
// embedding's padding rows 151669..151935.
//
// Thread safety: a loaded Tokenizer is immutable apart from its internal word cache, which is
// locked; encode and decode may be called from several threads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace qwen3 {

enum class SpecialTokens { kRecognize, kAsText };

class Tokenizer {
 public:
  // Throws TokenizerError when the file is missing, is not JSON, or uses an unsupported feature.
  static Tokenizer from_file(const std::filesystem::path& tokenizer_json);
  // `source` names the text in errors.
  static Tokenizer from_json(std::string_view json_text, std::string_view source);

  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  // Throws TokenizerError when `text` is not valid UTF-8 (naming the byte offset).
  std::vector<std::int32_t> encode(std::string_view text, bool add_special = true,
                                   SpecialTokens special = SpecialTokens::kRecognize) const;
  std::string decode(std::span<const std::int32_t> ids, bool skip_special = false) const;
  // The bytes one token stands for (empty for an unknown id): for streaming output.
  std::string_view token_bytes(std::int32_t id) const;

  // Vocabulary and added tokens. id_to_token gives the token as written in tokenizer.json
  // (byte-level alphabet for vocabulary entries).
  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string_view> id_to_token(std::int32_t id) const;
  bool is_special(std::int32_t id) const;
  // One more than the largest id of the vocabulary and the added tokens (151669 for Qwen3).
  std::int32_t id_limit() const;
  // Whether the pre-tokenizer regex runs JIT-compiled.
  bool regex_jit() const;

 struct Impl;  // defined in tokenizer.cpp

 private:
  explicit Tokenizer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace qwen3
