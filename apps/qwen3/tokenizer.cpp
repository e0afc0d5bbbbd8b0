// tokenizer.cpp: reading tokenizer.json into the parts of tokenizer.h, and the encode/decode
// pipelines. Every unsupported setting is rejected here, at load time, so that encode() never
// silently differs from `tokenizers` because of a setting it ignored.
#include "tokenizer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "added_tokens.h"
#include "bpe.h"
#include "byte_level.h"
#include "errors.h"
#include "nfc.h"
#include "regex_splitter.h"
#include "utf8.h"

namespace qwen3 {

using nlohmann::json;

struct Tokenizer::Impl {
  std::unique_ptr<Bpe> bpe;
  std::unique_ptr<RegexSplitter> splitter;  // null: no Split pre-tokenizer
  bool nfc = false;
  std::unique_ptr<AddedTokenMatcher> raw_tokens, normalized_tokens;
  std::unordered_map<std::string, std::int32_t> added_by_content;
  std::unordered_map<std::int32_t, AddedToken> added_by_id;
  std::vector<std::string> bytes_by_id;
  std::int32_t id_limit = 0;

  void encode_plain(std::string_view text, bool with_special, std::vector<std::int32_t>& ids) const;
};

namespace {

[[noreturn]] void unsupported(std::string_view source, std::string_view what, const json& value) {
  throw TokenizerError(fmt::format("{}: unsupported {}: {} (this tokenizer implements what Qwen3's tokenizer.json "
                                   "uses; see tokenizer.h)",
                                   source, what, value.dump().substr(0, 300)));
}

bool is_false_or_absent(const json& obj, const char* key) {
  return !obj.contains(key) || obj[key].is_null() || obj[key] == false;
}

bool is_empty_or_absent(const json& obj, const char* key) {
  return !obj.contains(key) || obj[key].is_null() || obj[key] == "";
}

std::string type_of(const json& obj) { return obj.is_object() ? obj.value("type", std::string()) : std::string(); }

void load_normalizer(const json& j, std::string_view source, Tokenizer::Impl& impl) {
  if (j.is_null()) return;
  if (type_of(j) == "NFC") {
    impl.nfc = true;
  } else if (type_of(j) == "Sequence" && j.contains("normalizers")) {
    for (const json& n : j["normalizers"]) load_normalizer(n, source, impl);
  } else {
    unsupported(source, "normalizer", j);
  }
}

void load_pre_tokenizer(const json& j, std::string_view source, Tokenizer::Impl& impl, bool& byte_level) {
  std::string type = type_of(j);
  if (type == "Sequence" && j.contains("pretokenizers")) {
    for (const json& p : j["pretokenizers"]) load_pre_tokenizer(p, source, impl, byte_level);
  } else if (type == "Split") {
    const json& pattern = j.value("pattern", json());
    if (impl.splitter || byte_level || !pattern.contains("Regex") || !pattern["Regex"].is_string() ||
        j.value("behavior", "") != "Isolated" || !is_false_or_absent(j, "invert"))
      unsupported(source, "Split pre-tokenizer (one Isolated regex split before ByteLevel is supported)", j);
    impl.splitter = std::make_unique<RegexSplitter>(pattern["Regex"].get<std::string>(), source);
  } else if (type == "ByteLevel") {
    if (!is_false_or_absent(j, "add_prefix_space") || !is_false_or_absent(j, "use_regex"))
      unsupported(source, "ByteLevel pre-tokenizer (add_prefix_space and use_regex must be false)", j);
    byte_level = true;
  } else {
    unsupported(source, "pre-tokenizer", j);
  }
}

std::unique_ptr<Bpe> load_model(const json& m, std::string_view source) {
  if (type_of(m) != "BPE" || !m.contains("vocab") || !m["vocab"].is_object() || !m.contains("merges") ||
      !m["merges"].is_array())
    unsupported(source, "model (a BPE model with vocab and merges is expected)", m.is_object() ? json(type_of(m)) : m);
  if (!is_false_or_absent(m, "dropout") || !is_false_or_absent(m, "byte_fallback") ||
      !is_empty_or_absent(m, "continuing_subword_prefix") || !is_empty_or_absent(m, "end_of_word_suffix"))
    unsupported(source, "BPE option (dropout, byte_fallback, continuing_subword_prefix, end_of_word_suffix)",
                json{{"dropout", m.value("dropout", json())},
                     {"byte_fallback", m.value("byte_fallback", json())},
                     {"continuing_subword_prefix", m.value("continuing_subword_prefix", json())},
                     {"end_of_word_suffix", m.value("end_of_word_suffix", json())}});
  std::vector<std::pair<std::string, std::int32_t>> vocab;
  vocab.reserve(m["vocab"].size());
  for (const auto& [token, id] : m["vocab"].items()) {
    if (!id.is_number_integer()) throw TokenizerError(fmt::format("{}: vocabulary entry '{}' has no integer id", source, token));
    vocab.emplace_back(token, id.get<std::int32_t>());
  }
  std::vector<std::pair<std::string, std::string>> merges;
  merges.reserve(m["merges"].size());
  for (const json& merge : m["merges"]) {
    if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string()) {
      merges.emplace_back(merge[0].get<std::string>(), merge[1].get<std::string>());
    } else if (merge.is_string()) {  // the older "a b" form
      const std::string& s = merge.get_ref<const std::string&>();
      std::size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        throw TokenizerError(fmt::format("{}: merge {} '{}' is not two tokens separated by one space", source,
                                         merges.size(), s));
      merges.emplace_back(s.substr(0, space), s.substr(space + 1));
    } else {
      throw TokenizerError(fmt::format("{}: merge {} is neither a pair of strings nor a string: {}", source,
                                       merges.size(), merge.dump()));
    }
  }
  return std::make_unique<Bpe>(vocab, merges, m.value("ignore_merges", false), source);
}

void load_added_tokens(const json& list, std::string_view source, Tokenizer::Impl& impl) {
  std::vector<AddedToken> raw, normalized;
  for (const json& t : list) {
    if (!t.is_object() || !t.contains("id") || !t["id"].is_number_integer() || !t.contains("content") ||
        !t["content"].is_string())
      throw TokenizerError(fmt::format("{}: an added token without integer id and string content: {}", source,
                                       t.dump().substr(0, 300)));
    if (!is_false_or_absent(t, "lstrip") || !is_false_or_absent(t, "rstrip") || !is_false_or_absent(t, "single_word"))
      unsupported(source, "added token option (lstrip, rstrip, single_word)", t);
    AddedToken token{t["id"].get<std::int32_t>(), t["content"].get<std::string>(), t.value("special", false),
                     t.value("normalized", false)};
    if (token.id < 0) throw TokenizerError(fmt::format("{}: added token '{}' has negative id", source, token.content));
    if (find_invalid_utf8(token.content) != std::string_view::npos)
      throw TokenizerError(fmt::format("{}: added token {} is not valid UTF-8", source, token.id));
    impl.added_by_content[token.content] = token.id;
    impl.added_by_id[token.id] = token;
    (token.normalized ? normalized : raw).push_back(std::move(token));
  }
  impl.raw_tokens = std::make_unique<AddedTokenMatcher>(std::move(raw));
  impl.normalized_tokens = std::make_unique<AddedTokenMatcher>(std::move(normalized));
}

// The ByteLevel decoder's rule, per token: the bytes its characters stand for when they are all in
// the byte-level alphabet, else the token's own UTF-8.
std::string bytes_of_token(std::string_view token) {
  std::string out;
  if (!append_bytes_of_byte_level(token, out)) out.assign(token);
  return out;
}

}  // namespace

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

Tokenizer Tokenizer::from_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TokenizerError(fmt::format("{}: cannot open the tokenizer file: {}", path.string(), std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw TokenizerError(fmt::format("{}: cannot read the tokenizer file", path.string()));
  return from_json(text.str(), path.string());
}

Tokenizer Tokenizer::from_json(std::string_view json_text, std::string_view source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw TokenizerError(fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!j.is_object() || !j.contains("model"))
    throw TokenizerError(fmt::format("{}: not a tokenizer.json (no \"model\" object)", source));
  auto impl = std::make_unique<Impl>();
  try {
    impl->bpe = load_model(j["model"], source);
    load_normalizer(j.value("normalizer", json()), source, *impl);
    bool byte_level = false;
    load_pre_tokenizer(j.value("pre_tokenizer", json()), source, *impl, byte_level);
    if (!byte_level) unsupported(source, "pre-tokenizer without ByteLevel", j.value("pre_tokenizer", json()));
    if (type_of(j.value("decoder", json())) != "ByteLevel") unsupported(source, "decoder", j.value("decoder", json()));
    const json& post = j.value("post_processor", json());
    if (!post.is_null() && type_of(post) != "ByteLevel") unsupported(source, "post-processor", post);
    load_added_tokens(j.value("added_tokens", json::array()), source, *impl);
  } catch (const json::exception& e) {
    throw TokenizerError(fmt::format("{}: unexpected structure: {}", source, e.what()));
  }

  impl->id_limit = impl->bpe->id_limit();
  for (const auto& [id, token] : impl->added_by_id) impl->id_limit = std::max(impl->id_limit, id + 1);
  impl->bytes_by_id.resize(impl->id_limit);
  for (std::int32_t id = 0; id < impl->id_limit; ++id) {
    auto added = impl->added_by_id.find(id);
    if (added != impl->added_by_id.end()) {
      impl->bytes_by_id[id] = bytes_of_token(added->second.content);
    } else if (const std::string* token = impl->bpe->id_to_token(id)) {
      impl->bytes_by_id[id] = bytes_of_token(*token);
    }
  }
  return Tokenizer(std::move(impl));
}

void Tokenizer::Impl::encode_plain(std::string_view text, bool with_special, std::vector<std::int32_t>& ids) const {
  std::string normalized = nfc ? to_nfc(text) : std::string(text);
  std::vector<AddedTokenMatcher::Segment> segments;
  if (normalized_tokens->empty())
    segments.push_back({normalized, -1});
  else
    normalized_tokens->split(normalized, with_special, segments);
  std::vector<std::string_view> pieces;
  for (const auto& segment : segments) {
    if (segment.id >= 0) {
      ids.push_back(segment.id);
      continue;
    }
    pieces.clear();
    if (splitter)
      splitter->split(segment.text, pieces);
    else
      pieces.push_back(segment.text);
    for (std::string_view piece : pieces) bpe->encode_word(piece, ids);
  }
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool /*add_special*/, SpecialTokens special) const {
  // add_special: the only post-processors accepted (none, ByteLevel) add no tokens.
  std::size_t bad = find_invalid_utf8(text);
  if (bad != std::string_view::npos)
    throw TokenizerError(fmt::format("encode: the text is not valid UTF-8 at byte {} (of {})", bad, text.size()));
  const bool with_special = special == SpecialTokens::kRecognize;
  std::vector<std::int32_t> ids;
  ids.reserve(text.size() / 3 + 8);
  std::vector<AddedTokenMatcher::Segment> segments;
  impl_->raw_tokens->split(text, with_special, segments);
  for (const auto& segment : segments) {
    if (segment.id >= 0)
      ids.push_back(segment.id);
    else
      impl_->encode_plain(segment.text, with_special, ids);
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const std::int32_t> ids, bool skip_special) const {
  std::string out;
  for (std::int32_t id : ids) {
    if (skip_special && is_special(id)) continue;
    out += token_bytes(id);
  }
  return out;
}

std::string_view Tokenizer::token_bytes(std::int32_t id) const {
  if (id < 0 || id >= impl_->id_limit) return {};
  return impl_->bytes_by_id[id];
}

std::optional<std::int32_t> Tokenizer::token_to_id(std::string_view token) const {
  auto added = impl_->added_by_content.find(std::string(token));
  if (added != impl_->added_by_content.end()) return added->second;
  return impl_->bpe->token_to_id(token);
}

std::optional<std::string_view> Tokenizer::id_to_token(std::int32_t id) const {
  auto added = impl_->added_by_id.find(id);
  if (added != impl_->added_by_id.end()) return std::string_view(added->second.content);
  if (const std::string* token = impl_->bpe->id_to_token(id)) return std::string_view(*token);
  return std::nullopt;
}

bool Tokenizer::is_special(std::int32_t id) const {
  auto added = impl_->added_by_id.find(id);
  return added != impl_->added_by_id.end() && added->second.special;
}

std::int32_t Tokenizer::id_limit() const { return impl_->id_limit; }

bool Tokenizer::regex_jit() const { return !impl_->splitter || impl_->splitter->jit_compiled(); }

}  // namespace qwen3
