// test_tokenizer.cpp: the tokenizer on a small hand-made tokenizer.json (always runs: merge order,
// added tokens, unsupported settings) and on Qwen3's real one (known encodings worked out from the
// vocabulary, round trips, speed; skipped without the file).
#include <catch2/catch.hpp>
#include <chrono>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "byte_level.h"
#include "errors.h"
#include "test_files.h"
#include "tokenizer.h"

using qwen3::SpecialTokens;
using qwen3::Tokenizer;
using qwen3::TokenizerError;
using Ids = std::vector<std::int32_t>;
using nlohmann::json;

namespace {

// Ids 0..255: the byte-level characters in byte order; then the merges' results from 256 on.
json tiny_tokenizer_json() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[std::string(qwen3::byte_level_char(static_cast<unsigned char>(b)))] = b;
  json merges = json::array();
  int next = 256;
  for (auto [a, b] : std::vector<std::pair<std::string, std::string>>{
           {"a", "b"}, {"ab", "c"}, {"b", "c"}, {"a", "a"}, {"Ġ", "a"}, {"aa", "aa"}}) {
    vocab[a + b] = next++;
    merges.push_back({a, b});
  }
  return {
      {"version", "1.0"},
      {"added_tokens",
       {{{"id", 300}, {"content", "<|s|>"}, {"special", true}, {"normalized", false}},
        {{"id", 301}, {"content", "<|s|>x"}, {"special", false}, {"normalized", false}}}},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers",
         {{{"type", "Split"}, {"pattern", {{"Regex", " ?\\p{L}+|\\p{N}|\\s+"}}}, {"behavior", "Isolated"},
           {"invert", false}},
          {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"post_processor", {{"type", "ByteLevel"}}},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"dropout", nullptr}, {"vocab", vocab}, {"merges", merges}}},
  };
}

Tokenizer tiny() { return Tokenizer::from_json(tiny_tokenizer_json().dump(), "tiny.json"); }

}  // namespace

TEST_CASE("tokenizer: bpe merges by rank, leftmost first", "[tokenizer]") {
  Tokenizer t = tiny();
  CHECK(t.encode("abc") == Ids{257});         // (a,b) rank 0, then (ab,c) rank 1
  CHECK(t.encode("bc") == Ids{258});          // (b,c) rank 2
  CHECK(t.encode("aaa") == Ids{259, 'a'});    // (a,a) leftmost first
  CHECK(t.encode("aaaa") == Ids{261});        // then (aa,aa)
  CHECK(t.encode("abab") == Ids{256, 256});
  CHECK(t.encode(" a") == Ids{260});          // space is 'Ġ' in the byte-level alphabet
  CHECK(t.encode("x1 2") == Ids{'x', '1', ' ', '2'});  // pieces: "x", "1", " ", "2"
  CHECK(t.encode("\xc3\xa9") == Ids{0xc3, 0xa9});      // bytes of U+00E9, no merges
  CHECK(t.encode("e\xcc\x81") == Ids{0xc3, 0xa9});     // NFC composes e + U+0301 into U+00E9
  CHECK(t.decode(Ids{257, 260, 0xc3, 0xa9}) == "abc a\xc3\xa9");
  CHECK(t.id_limit() == 302);
}

TEST_CASE("tokenizer: added tokens: leftmost longest, special ones optional", "[tokenizer]") {
  Tokenizer t = tiny();
  CHECK(t.encode("ab<|s|>ab") == Ids{256, 300, 256});
  CHECK(t.encode("<|s|>xab") == Ids{301, 256});  // the longer token wins at the same start
  CHECK(t.encode("ab<|s|>ab", true, SpecialTokens::kAsText) == Ids{256, '<', '|', 's', '|', '>', 256});
  CHECK(t.encode("<|s|>xab", true, SpecialTokens::kAsText) == Ids{301, 256});  // not special: still matched
  CHECK(t.decode(Ids{300, 256, 301}) == "<|s|>ab<|s|>x");
  CHECK(t.decode(Ids{300, 256, 301}, true) == "ab<|s|>x");
  CHECK(t.is_special(300));
  CHECK_FALSE(t.is_special(301));
  CHECK(t.token_to_id("<|s|>") == 300);
  CHECK(t.token_to_id("ab") == 256);
  CHECK(t.id_to_token(256) == std::optional<std::string_view>("ab"));
  CHECK_FALSE(t.id_to_token(280).has_value());
  CHECK(t.decode(Ids{280, -1, 100000}).empty());  // unknown ids decode to nothing
}

TEST_CASE("tokenizer: encode rejects invalid UTF-8 with its offset", "[tokenizer]") {
  Tokenizer t = tiny();
  for (std::string bad : {std::string("ab\xff"), std::string("ab\xc0\x80"), std::string("ab\xed\xa0\x80"),
                          std::string("ab\xf4\x90\x80\x80"), std::string("ab\xe4\xbd")}) {
    CAPTURE(bad);
    CHECK_THROWS_WITH(t.encode(bad), Catch::Contains("not valid UTF-8 at byte 2"));
  }
}

TEST_CASE("tokenizer: unsupported tokenizer.json settings are rejected by name", "[tokenizer]") {
  auto rejects = [](json j, const std::string& expected) {
    CAPTURE(expected);
    CHECK_THROWS_WITH(Tokenizer::from_json(j.dump(), "x.json"), Catch::Contains("x.json") && Catch::Contains(expected));
  };
  json j = tiny_tokenizer_json();
  j["normalizer"] = {{"type", "NFKC"}};
  rejects(j, "unsupported normalizer");
  j = tiny_tokenizer_json();
  j["model"]["type"] = "WordPiece";
  rejects(j, "unsupported model");
  j = tiny_tokenizer_json();
  j["model"]["byte_fallback"] = true;
  rejects(j, "unsupported BPE option");
  j = tiny_tokenizer_json();
  j["pre_tokenizer"]["pretokenizers"][0]["behavior"] = "Removed";
  rejects(j, "unsupported Split pre-tokenizer");
  j = tiny_tokenizer_json();
  j["pre_tokenizer"]["pretokenizers"][1]["use_regex"] = true;
  rejects(j, "unsupported ByteLevel pre-tokenizer");
  j = tiny_tokenizer_json();
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(unclosed";
  rejects(j, "does not compile with PCRE2");
  j = tiny_tokenizer_json();
  j["post_processor"] = {{"type", "TemplateProcessing"}};
  rejects(j, "unsupported post-processor");
  j = tiny_tokenizer_json();
  j["added_tokens"][0]["lstrip"] = true;
  rejects(j, "unsupported added token option");
  j = tiny_tokenizer_json();
  j["model"]["merges"].push_back({"q", "zz"});
  rejects(j, "not in the vocabulary");
  j = tiny_tokenizer_json();
  j["model"]["vocab"].erase("Ġ");
  rejects(j, "lacks the byte-level character of byte 0x20");
  CHECK_THROWS_WITH(Tokenizer::from_json("{\"model\": ", "x.json"), Catch::Contains("x.json: not valid JSON"));
  CHECK_THROWS_WITH(Tokenizer::from_file("/nonexistent/tokenizer.json"),
                    Catch::Contains("/nonexistent/tokenizer.json: cannot open"));
}

// Expected ids read off Qwen3's tokenizer.json: "Hello" is 9707 and "Ġworld" 1879 in the vocab;
// added tokens <|endoftext|> 151643, <|im_start|> 151644, <|im_end|> 151645, <think> 151667,
// </think> 151668; digits '0'..'9' are 15..24 and the regex's \p{N} takes them one at a time;
// "Ċ" (newline) 198, "ĊĊ" 271, "ĠĠ" 256, "Ġa" 264, "user" 872, "hi" 6023, "Ã©" (é) 963.
TEST_CASE("tokenizer (Qwen3 file): known encodings", "[tokenizer]") {
  const Tokenizer* t = qwen3::test::qwen3_tokenizer();
  if (!t) return;
  CHECK(t->id_limit() == 151669);
  CHECK(t->regex_jit());
  CHECK(t->encode("Hello world") == Ids{9707, 1879});
  CHECK(t->encode("<|im_start|>user\nhi<|im_end|>") == Ids{151644, 872, 198, 6023, 151645});
  CHECK(t->encode("12345") == Ids{16, 17, 18, 19, 20});
  CHECK(t->encode("   a") == Ids{256, 264});  // "\s+(?!\S)" leaves the last space to " a"
  CHECK(t->encode("\xc3\xa9") == Ids{963});
  CHECK(t->encode("e\xcc\x81") == Ids{963});  // NFC
  CHECK(t->encode("<think>\n\n</think>\n\n") == Ids{151667, 271, 151668, 271});
  CHECK(t->encode("a<|endoftext|>b") == Ids{64, 151643, 65});
  // As text, "<|im_end|>" is the pieces "<|", "im", "_end", "|>": '<' 27, '|' 91, "im" 318, "_end" 6213, '>' 29.
  CHECK(t->encode("a<|im_end|>b", true, SpecialTokens::kAsText) == Ids{64, 27, 91, 318, 6213, 91, 29, 65});
  CHECK(t->decode(Ids{151644, 872, 198, 6023, 151645}) == "<|im_start|>user\nhi<|im_end|>");
  CHECK(t->decode(Ids{151644, 872, 198, 6023, 151645}, true) == "user\nhi");
  CHECK(t->decode(Ids{151667, 151669, 151935}, true) == "<think>");  // not special; padding ids decode to nothing
  CHECK(t->token_to_id("<|im_end|>") == 151645);
  CHECK(t->is_special(151645));
  CHECK_FALSE(t->is_special(151667));
}

TEST_CASE("tokenizer (Qwen3 file): round trips", "[tokenizer]") {
  const Tokenizer* t = qwen3::test::qwen3_tokenizer();
  if (!t) return;
  for (std::string text : {"", " ", "\n", "The quick brown fox.", "你好，世界！", "😀👨‍👩‍👧‍👦", "  x  \r\n\t y  ",
                           "int main() { return 0; }", "<|im_start|>user\n<|im_end|>"}) {
    CAPTURE(text);
    CHECK(t->decode(t->encode(text)) == text);
  }
}

TEST_CASE("tokenizer (Qwen3 file): one megabyte encodes well under a second", "[tokenizer]") {
  const Tokenizer* t = qwen3::test::qwen3_tokenizer();
  if (!t) return;
  std::string text;
  for (int i = 0; text.size() < (1 << 20); ++i)
    text += fmt::format("Line {}: the quick brown fox {} jumps; 你好世界{} 😀 x{}y  \n\tcode(a[{}]);\n", i, i * 7919,
                        i % 97, i, i % 13);
  auto start = std::chrono::steady_clock::now();
  Ids ids = t->encode(text);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  WARN(fmt::format("{:.0f} KB -> {} tokens in {:.3f} s", text.size() / 1024.0, ids.size(), seconds));
  CHECK(t->decode(ids) == text);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && defined(NDEBUG)
  CHECK(seconds < 1.0);
#endif
  // Long words: a run of 100k letters without a break is one BPE word, merged in O(n log n).
  std::string letters;
  for (int i = 0; i < 100000; ++i) letters += "\xe5\x93\x88";  // 哈
  start = std::chrono::steady_clock::now();
  CHECK(t->decode(t->encode(letters + std::string(100000, ' ') + "x")) == letters + std::string(100000, ' ') + "x");
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) && defined(NDEBUG)
  CHECK(seconds < 1.0);
#endif
}
