// bpe.h: the byte-level BPE model: a vocabulary, ranked merges, and the merge loop for one word.
//
// A word is the raw bytes of one pre-token. It starts as one symbol per byte (the vocabulary id of
// that byte's byte-level character, byte_level.h), then the adjacent pair with the lowest merge
// rank is merged, ties going to the leftmost pair, until no adjacent pair has a merge. This is the
// order of the `tokenizers` package (a min-heap on (rank, position), stale entries skipped), which
// decides ties between overlapping pairs the same way. Results are cached per word, so repeated
// words cost one hash lookup; the cache is shared by threads under a mutex and stops growing at
// kMaxCachedWords.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace qwen3 {

class Bpe {
 public:
  static constexpr std::size_t kMaxCachedWords = 1 << 18;

  // vocab: (token in the byte-level alphabet, id); merges: pairs of tokens in rank order.
  // `source` names the file in errors (TokenizerError): a merge or byte missing from the vocabulary.
  Bpe(const std::vector<std::pair<std::string, std::int32_t>>& vocab,
      const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges, std::string_view source);
  Bpe(const Bpe&) = delete;
  Bpe& operator=(const Bpe&) = delete;

  // Appends the ids of one word (raw bytes, not byte-level text).
  void encode_word(std::string_view word, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  // The token of an id, or nullptr when the id is not in the vocabulary.
  const std::string* id_to_token(std::int32_t id) const;
  // One more than the largest id.
  std::int32_t id_limit() const { return static_cast<std::int32_t>(tokens_.size()); }

 private:
  struct Merge {
    std::int32_t rank;
    std::int32_t new_id;
  };
  static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  void merge_word(std::string_view word, std::vector<std::int32_t>& out) const;

  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using StringMap = std::unordered_map<std::string, std::int32_t, StringHash, std::equal_to<>>;

  StringMap vocab_;
  std::vector<std::string> tokens_;  // by id; empty where an id is unused
  std::unordered_map<std::uint64_t, Merge> merges_;
  std::int32_t byte_ids_[256];
  bool ignore_merges_;

  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace qwen3
