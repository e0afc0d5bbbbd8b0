// added_tokens.cpp: the leftmost-longest scan of added_tokens.h, indexed by first byte.
#include "added_tokens.h"

#include <algorithm>

namespace qwen3 {

AddedTokenMatcher::AddedTokenMatcher(std::vector<AddedToken> tokens) : tokens_(std::move(tokens)) {
  std::erase_if(tokens_, [](const AddedToken& t) { return t.content.empty(); });
  std::stable_sort(tokens_.begin(), tokens_.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  for (std::uint32_t i = 0; i < tokens_.size(); ++i)
    by_first_[static_cast<unsigned char>(tokens_[i].content[0])].push_back(i);
}

void AddedTokenMatcher::split(std::string_view text, bool with_special, std::vector<Segment>& out) const {
  std::size_t plain_start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const AddedToken* found = nullptr;
    for (std::uint32_t k : by_first_[static_cast<unsigned char>(text[i])]) {
      const AddedToken& t = tokens_[k];
      if ((with_special || !t.special) && text.substr(i).starts_with(t.content)) {
        found = &t;  // the first hit is the longest: tokens_ is sorted longest first
        break;
      }
    }
    if (!found) {
      ++i;
      continue;
    }
    if (i > plain_start) out.push_back({text.substr(plain_start, i - plain_start), -1});
    out.push_back({text.substr(i, found->content.size()), found->id});
    i += found->content.size();
    plain_start = i;
  }
  if (plain_start < text.size()) out.push_back({text.substr(plain_start), -1});
}

}  // namespace qwen3
