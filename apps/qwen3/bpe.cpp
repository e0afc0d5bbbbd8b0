// bpe.cpp: building the merge table and the merge loop of bpe.h.
#include "bpe.h"

#include <fmt/format.h>

#include <queue>

#include "byte_level.h"
#include "errors.h"

namespace qwen3 {

Bpe::Bpe(const std::vector<std::pair<std::string, std::int32_t>>& vocab,
         const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges, std::string_view source)
    : ignore_merges_(ignore_merges) {
  std::int32_t limit = 0;
  for (const auto& [token, id] : vocab) {
    if (id < 0) throw TokenizerError(fmt::format("{}: vocabulary entry '{}' has negative id {}", source, token, id));
    limit = std::max(limit, id + 1);
  }
  tokens_.resize(limit);
  vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab) {
    vocab_.insert_or_assign(token, id);
    tokens_[id] = token;
  }
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(byte_level_char(static_cast<unsigned char>(b)));
    if (it == vocab_.end())
      throw TokenizerError(fmt::format("{}: the vocabulary lacks the byte-level character of byte {:#04x} ('{}'); "
                                       "a byte-level BPE vocabulary has all 256",
                                       source, b, byte_level_char(static_cast<unsigned char>(b))));
    byte_ids_[b] = it->second;
  }
  merges_.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [a, b] = merges[rank];
    auto ia = vocab_.find(a), ib = vocab_.find(b), ic = vocab_.find(a + b);
    if (ia == vocab_.end() || ib == vocab_.end() || ic == vocab_.end())
      throw TokenizerError(fmt::format("{}: merge {} ('{}' '{}') names a token that is not in the vocabulary", source,
                                       rank, a, b));
    // A pair listed twice keeps its last rank, as `tokenizers` does.
    merges_.insert_or_assign(pair_key(ia->second, ib->second),
                             Merge{static_cast<std::int32_t>(rank), ic->second});
  }
}

std::optional<std::int32_t> Bpe::token_to_id(std::string_view token) const {
  auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* Bpe::id_to_token(std::int32_t id) const {
  if (id < 0 || id >= id_limit() || tokens_[id].empty()) return nullptr;
  return &tokens_[id];
}

void Bpe::encode_word(std::string_view word, std::vector<std::int32_t>& out) const {
  if (word.empty()) return;
  if (word.size() == 1) {
    out.push_back(byte_ids_[static_cast<unsigned char>(word[0])]);
    return;
  }
  {
    std::lock_guard lock(cache_mutex_);
    auto it = cache_.find(word);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<std::int32_t> ids;
  if (ignore_merges_) {
    std::string spelled;
    append_byte_level(word, spelled);
    if (auto id = token_to_id(spelled)) ids.push_back(*id);
  }
  if (ids.empty()) merge_word(word, ids);
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard lock(cache_mutex_);
  if (cache_.size() < kMaxCachedWords) cache_.emplace(std::string(word), std::move(ids));
}

void Bpe::merge_word(std::string_view word, std::vector<std::int32_t>& out) const {
  struct Symbol {
    std::int32_t id;
    std::int32_t prev, next;  // -1 at the ends
    bool alive;
  };
  struct Candidate {
    std::int32_t rank, pos, new_id;
    // std::priority_queue pops the largest: the largest here is the lowest rank, then the leftmost.
    bool operator<(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  const auto n = static_cast<std::int32_t>(word.size());
  std::vector<Symbol> sym(n);
  for (std::int32_t i = 0; i < n; ++i)
    sym[i] = Symbol{byte_ids_[static_cast<unsigned char>(word[i])], i - 1, i + 1 < n ? i + 1 : -1, true};

  std::vector<Candidate> storage;
  storage.reserve(n);
  std::priority_queue<Candidate> queue(std::less<Candidate>(), std::move(storage));
  auto propose = [&](std::int32_t pos, std::int32_t right) {
    auto it = merges_.find(pair_key(sym[pos].id, sym[right].id));
    if (it != merges_.end()) queue.push(Candidate{it->second.rank, pos, it->second.new_id});
  };
  for (std::int32_t i = 0; i + 1 < n; ++i) propose(i, i + 1);

  while (!queue.empty()) {
    Candidate top = queue.top();
    queue.pop();
    Symbol& left = sym[top.pos];
    if (!left.alive || left.next < 0) continue;
    // Skip entries made stale by an earlier merge of either symbol.
    auto it = merges_.find(pair_key(left.id, sym[left.next].id));
    if (it == merges_.end() || it->second.new_id != top.new_id) continue;
    Symbol& right = sym[left.next];
    left.id = top.new_id;
    right.alive = false;
    left.next = right.next;
    if (right.next >= 0) sym[right.next].prev = top.pos;
    if (left.prev >= 0) propose(left.prev, top.pos);
    if (left.next >= 0) propose(top.pos, left.next);
  }
  for (std::int32_t i = 0; i >= 0; i = sym[i].next) out.push_back(sym[i].id);
}

}  // namespace qwen3
