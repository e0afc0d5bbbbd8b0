// test_tokenizer_golden.cpp: the tokenizer and chat template against Hugging Face.
//
// tokenizer_golden.json is written by tools/tokenizer_golden.py (its header says how) with
// `tokenizers` and transformers/jinja2 on the corpus tokenizer_corpus.txt; these tests compare
// every case and skip with a message while the file is absent. The round-trip test needs only the
// corpus and the tokenizer: decode(encode(x)) must give back x in NFC.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "chat_template.h"
#include "nfc.h"
#include "test_files.h"
#include "tokenizer.h"
#include "utf8.h"

using Ids = std::vector<std::int32_t>;
using nlohmann::json;

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The corpus format of tools/tokenizer_golden.py: lines, "esc:" lines unescaped, then the whole file.
std::string unescape(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] != '\\' || i + 1 == line.size()) {
      out += line[i];
      continue;
    }
    char c = line[++i];
    if (c == 'n') out += '\n';
    else if (c == 'r') out += '\r';
    else if (c == 't') out += '\t';
    else if (c == '\\') out += '\\';
    else if (c == 'u' && i + 1 < line.size() && line[i + 1] == '{') {
      std::size_t close = line.find('}', i);
      qwen3::append_utf8(out, static_cast<char32_t>(std::stoul(std::string(line.substr(i + 2, close - i - 2)), nullptr, 16)));
      i = close;
    } else {
      out += '\\';
      out += c;
    }
  }
  return out;
}

std::vector<std::string> corpus_cases() {
  std::string whole = read_file(qwen3::test::test_data_dir() / "tokenizer_corpus.txt");
  std::vector<std::string> cases;
  std::istringstream lines(whole);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    cases.push_back(line.starts_with("esc:") ? unescape(std::string_view(line).substr(4)) : line);
  }
  cases.push_back(whole);
  return cases;
}

const json* golden() {
  static const json g = [] {
    std::filesystem::path path = qwen3::test::test_data_dir() / "tokenizer_golden.json";
    return std::filesystem::exists(path) ? json::parse(read_file(path)) : json();
  }();
  if (g.is_null()) {
    WARN("skipped: apps/qwen3/tests/tokenizer_golden.json is absent; write it with apps/qwen3/tools/tokenizer_golden.py");
    return nullptr;
  }
  return &g;
}

// A readable account of the first difference between two id lists.
std::string first_difference(const qwen3::Tokenizer& t, const Ids& got, const Ids& want) {
  std::size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  auto around = [&](const Ids& ids) {
    std::string s;
    for (std::size_t k = i; k < ids.size() && k < i + 4; ++k)
      s += fmt::format("{}:'{}' ", ids[k], t.id_to_token(ids[k]).value_or("?"));
    return s;
  };
  return fmt::format("first difference at token {} of {} (want {}): got {}| want {}", i, got.size(), want.size(),
                     around(got), around(want));
}

}  // namespace

TEST_CASE("tokenizer (Qwen3 file): corpus round trips to NFC", "[tokenizer]") {
  const qwen3::Tokenizer* t = qwen3::test::qwen3_tokenizer();
  if (!t) return;
  std::vector<std::string> cases = corpus_cases();
  REQUIRE(cases.size() > 100);
  for (const std::string& text : cases) {
    CAPTURE(text);
    CHECK(t->decode(t->encode(text)) == qwen3::to_nfc(text));
  }
}

TEST_CASE("tokenizer (Qwen3 file): corpus encodes as tokenizers does", "[tokenizer][golden]") {
  const qwen3::Tokenizer* t = qwen3::test::qwen3_tokenizer();
  if (!t) return;
  const json* g = golden();
  if (!g) return;
  // The golden file must cover the corpus as it is now.
  std::vector<std::string> cases = corpus_cases();
  REQUIRE((*g)["encode"].size() == cases.size());
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const json& c = (*g)["encode"][k];
    const std::string text = c["text"].get<std::string>();
    CAPTURE(k, text);
    REQUIRE(text == cases[k]);
    Ids want = c["ids"].get<Ids>(), got = t->encode(text);
    CHECK(got == want);
    if (got != want) FAIL_CHECK(first_difference(*t, got, want));
    Ids want_text = c["ids_special_as_text"].get<Ids>(), got_text = t->encode(text, true, qwen3::SpecialTokens::kAsText);
    CHECK(got_text == want_text);
    if (got_text != want_text) FAIL_CHECK(first_difference(*t, got_text, want_text));
    CHECK(t->decode(want) == c["decoded"].get<std::string>());
    CHECK(t->decode(want, true) == c["decoded_skip_special"].get<std::string>());
  }
}

TEST_CASE("chat: renders as transformers does", "[chat][golden]") {
  const json* g = golden();
  if (!g) return;
  const qwen3::Tokenizer* t = qwen3::test::qwen3_tokenizer_if_present();  // the ids are checked when present
  for (const json& c : (*g)["chat"]) {
    std::vector<qwen3::ChatMessage> messages;
    for (const json& m : c["messages"]) {
      qwen3::ChatMessage message{m["role"], m["content"], std::nullopt};
      if (m.contains("reasoning_content")) message.reasoning_content = m["reasoning_content"].get<std::string>();
      messages.push_back(std::move(message));
    }
    qwen3::ChatOptions options;
    options.add_generation_prompt = c["add_generation_prompt"];
    options.enable_thinking = c["enable_thinking"].is_null() || c["enable_thinking"].get<bool>();
    CAPTURE(c.dump());
    std::string text = qwen3::render_chat(messages, options);
    CHECK(text == c["text"].get<std::string>());
    if (t) CHECK(t->encode(text) == c["ids"].get<Ids>());
  }
}
