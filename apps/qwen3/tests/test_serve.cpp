// test_serve.cpp: `tessera-qwen3 serve` -- the protocol (requests parsed into records, each bad
// field a clear error, the response shapes), the text released to a stream (text_stream.h), the
// generation loop's stop request, and a real server on a loopback port answered through
// httplib::Client, on the tiny synthetic model on the CPU target.
//
// The server cases share one model and server (their kernels compile once per process) and are
// the sections of one test case; they need the real tokenizer and report "skipped" without it.
// Expected texts come from generate() on the same model with greedy sampling, rendered as the
// server renders them.
#include <fmt/format.h>
#include <httplib.h>

#include <catch2/catch.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "chat_template.h"
#include "errors.h"
#include "generate.h"
#include "model.h"
#include "model_presets.h"
#include "openai_protocol.h"
#include "sampler.h"
#include "server.h"
#include "test_files.h"
#include "text_stream.h"
#include "utf8.h"

namespace {

using namespace qwen3;
using nlohmann::json;
using openai::RequestError;

// The ApiError a body gets from `parse`, or a default one (status 0) when it parses.
template <class Parse>
openai::ApiError rejection(Parse parse, const std::string& body) {
  try {
    parse(body);
  } catch (const RequestError& e) {
    return e.error();
  }
  return openai::ApiError{0, "", "", std::nullopt, std::nullopt};
}

const auto parse_chat = [](const std::string& body) { openai::parse_chat_completion_request(body); };
const auto parse_completion = [](const std::string& body) { openai::parse_completion_request(body); };

std::string chat_body(const std::string& fields) {
  return R"({"messages": [{"role": "user", "content": "hi"}])" + (fields.empty() ? "" : ", " + fields) + "}";
}

}  // namespace

TEST_CASE("openai protocol: a full chat request", "[serve][protocol]") {
  const auto r = openai::parse_chat_completion_request(R"({
    "model": "qwen3", "messages": [
      {"role": "developer", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]},
      {"role": "assistant", "content": null, "reasoning_content": "thinking"},
      {"role": "user", "content": "three", "name": "ignored"}],
    "max_tokens": 7, "max_completion_tokens": 9, "temperature": 0.5, "top_p": 0.9, "top_k": 20,
    "seed": -1, "stop": ["a", "bc"], "stream": true, "stream_options": {"include_usage": true},
    "chat_template_kwargs": {"enable_thinking": false}, "n": 1, "frequency_penalty": 0, "user": "x"})");
  CHECK(r.model == "qwen3");
  REQUIRE(r.messages.size() == 4);
  CHECK(r.messages[0].role == "system");
  CHECK(r.messages[0].content == "Be brief.");
  CHECK(r.messages[1].content == "one\ntwo");
  CHECK(r.messages[2].role == "assistant");
  CHECK(r.messages[2].content.empty());
  CHECK(r.messages[2].reasoning_content == "thinking");
  CHECK(r.enable_thinking == false);
  const openai::GenerationRequest& g = r.generation;
  CHECK(g.max_tokens == 9);  // max_completion_tokens wins
  CHECK(g.temperature == 0.5);
  CHECK(g.top_p == 0.9);
  CHECK(g.top_k == 20);
  CHECK(g.seed == std::numeric_limits<std::uint64_t>::max());
  CHECK(g.stop == std::vector<std::string>{"a", "bc"});
  CHECK(g.stream);
  CHECK(g.include_usage);

  // Absent and null fields leave the server's defaults; a top-level enable_thinking wins.
  const auto minimal =
      openai::parse_chat_completion_request(chat_body(R"("temperature": null, "stop": "x", "enable_thinking": true,
                   "chat_template_kwargs": {"enable_thinking": false}, "seed": 18446744073709551615)"));
  CHECK(minimal.model.empty());
  CHECK_FALSE(minimal.generation.max_tokens);
  CHECK_FALSE(minimal.generation.temperature);
  CHECK(minimal.generation.stop == std::vector<std::string>{"x"});
  CHECK(minimal.enable_thinking == true);
  CHECK(minimal.generation.seed == std::numeric_limits<std::uint64_t>::max());
  CHECK_FALSE(minimal.generation.stream);
  CHECK(openai::parse_chat_completion_request(chat_body(R"("top_k": -1)")).generation.top_k == 0);
}

TEST_CASE("openai protocol: completion requests", "[serve][protocol]") {
  CHECK(openai::parse_completion_request(R"({"prompt": "Once upon"})").prompt == "Once upon");
  CHECK(openai::parse_completion_request(R"({"prompt": ["Once"], "max_tokens": 3})").generation.max_tokens == 3);
  for (const char* body :
       {R"({"prompt": [1, 2, 3]})", R"({"prompt": ""})", R"({})", R"({"prompt": ["a", "b"]})", R"({"prompt": 5})"}) {
    const openai::ApiError e = rejection(parse_completion, body);
    INFO(body);
    CHECK(e.status == 400);
    CHECK(e.param == "prompt");
    CHECK_THAT(e.message, Catch::Contains("prompt must be a non-empty string"));
  }
}

TEST_CASE("openai protocol: each bad field is a 400 naming it", "[serve][protocol]") {
  struct Case {
    std::string body;
    std::optional<std::string> param;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"{", std::nullopt, "the request body is not valid JSON"},
      {"[1, 2]", std::nullopt, "the request body must be a JSON object, got an array"},
      {R"({"messages": []})", "messages", "messages must be a non-empty array of messages, got an empty array"},
      {R"({"messages": "hi"})", "messages", "messages must be a non-empty array of messages, got \"hi\""},
      {R"({})", "messages", "got nothing"},
      {R"({"messages": [3]})", "messages[0]", "messages[0] must be an object with role and content, got 3"},
      {R"({"messages": [{"content": "x"}]})", "messages[0].role", "messages[0].role must be one of"},
      {R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0].role",
       "(tools are not supported), got \"tool\""},
      {R"({"messages": [{"role": "user"}]})", "messages[0].content",
       "must be a string or an array of text parts, got nothing"},
      {R"({"messages": [{"role": "user", "content": 4}]})", "messages[0].content", "got 4"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]})",
       "messages[0].content[0].type", "must be \"text\" (this model reads text only), got \"image_url\""},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})", "messages[0].content[0].text",
       "messages[0].content[0].text must be a string, got nothing"},
      {R"({"messages": [{"role": "user", "content": "x", "reasoning_content": "y"}]})", "messages[0].reasoning_content",
       "in an assistant message only"},
      {R"({"messages": [{"role": "assistant", "content": "", "tool_calls": [{}]}]})", "messages[0].tool_calls",
       "tool calls are not supported"},
      {chat_body(R"("model": 3)"), "model", "model must be a string, got 3"},
      {chat_body(R"("tools": [{"type": "function"}])"), "tools", "tools are not supported"},
      {chat_body(R"("max_tokens": 0)"), "max_tokens", "max_tokens must be an integer from 1 to 2147483647, got 0"},
      {chat_body(R"("max_tokens": 2.5)"), "max_tokens", "got 2.5"},
      {chat_body(R"("max_tokens": "8")"), "max_tokens", "got \"8\""},
      {chat_body(R"("max_completion_tokens": -3)"), "max_completion_tokens",
       "max_completion_tokens must be an integer from 1"},
      {chat_body(R"("max_tokens": 2147483648)"), "max_tokens", "got 2147483648"},
      {chat_body(R"("max_tokens": 18446744073709551615)"), "max_tokens", "got 18446744073709551615"},
      {chat_body(R"("temperature": -0.5)"), "temperature", "temperature must be a number >= 0, got -0.5"},
      {chat_body(R"("temperature": "hot")"), "temperature", "got \"hot\""},
      {chat_body(R"("top_p": 0)"), "top_p", "top_p must be a number in (0, 1], got 0"},
      {chat_body(R"("top_p": 1.5)"), "top_p", "got 1.5"},
      {chat_body(R"("top_k": 65)"), "top_k", "top_k must be an integer in [-1, 64]"},
      {chat_body(R"("top_k": -2)"), "top_k", "got -2"},
      {chat_body(R"("seed": 1.5)"), "seed", "seed must be an integer, got 1.5"},
      {chat_body(R"("stop": "")"), "stop", "stop must be a non-empty string or an array"},
      {chat_body(R"("stop": 7)"), "stop", "got 7"},
      {chat_body(R"("stop": ["a", ""])"), "stop[1]", "stop[1] must be a non-empty string, got \"\""},
      {chat_body(R"("stop": ["a", 2])"), "stop[1]", "got 2"},
      {chat_body(R"("stop": ["1","2","3","4","5","6","7","8","9","10","11","12","13","14","15","16","17"])"), "stop",
       "an array of 17 elements"},
      {chat_body(R"("stream": "yes")"), "stream", "stream must be true or false, got \"yes\""},
      {chat_body(R"("stream_options": true)"), "stream_options", "stream_options must be an object"},
      {chat_body(R"("stream_options": {"include_usage": 1})"), "stream_options.include_usage",
       "stream_options.include_usage must be true or false"},
      {chat_body(R"("n": 2)"), "n", "n must be 1 (one choice per request), got 2"},
      {chat_body(R"("enable_thinking": "no")"), "enable_thinking", "enable_thinking must be true or false"},
      {chat_body(R"("chat_template_kwargs": {"enable_thinking": 0})"), "chat_template_kwargs.enable_thinking",
       "must be true or false, got 0"},
  };
  for (const Case& c : cases) {
    INFO(c.body);
    const openai::ApiError e = rejection(parse_chat, c.body);
    CHECK(e.status == 400);
    CHECK(e.type == "invalid_request_error");
    CHECK(e.param == c.param);
    CHECK_THAT(e.message, Catch::Contains(c.message));
  }
  // The sampling fields are checked the same way for completions.
  CHECK(rejection(parse_completion, R"({"prompt": "x", "top_p": 2})").param == "top_p");
}

TEST_CASE("openai protocol: damaged bodies are RequestErrors, never anything else", "[serve][protocol]") {
  const std::string good = R"({"messages": [{"role": "system", "content": "s"}, {"role": "user", "content":
      [{"type": "text", "text": "u"}]}], "max_tokens": 5, "temperature": 0.7, "top_p": 0.9, "top_k": 20,
      "seed": 3, "stop": ["x", "y"], "stream": true, "stream_options": {"include_usage": true}})";
  const std::string alphabet = "{}[]\":,0-1.e\\ ntrufalsxy\x80\xC3";
  std::mt19937 rng(7);
  int accepted = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string body = good;
    for (int edits = 1 + round % 3; edits > 0; --edits) {
      const std::size_t at = rng() % body.size();
      switch (rng() % 3) {
        case 0:
          body.erase(at, 1);
          break;
        case 1:
          body[at] = alphabet[rng() % alphabet.size()];
          break;
        default:
          body.insert(at, 1, alphabet[rng() % alphabet.size()]);
      }
    }
    INFO(body);
    try {
      openai::parse_chat_completion_request(body);
      ++accepted;
    } catch (const RequestError& e) {
      CHECK(e.error().status == 400);
      CHECK_FALSE(e.error().message.empty());
    }
  }
  CHECK(accepted > 0);
  // Deep nesting stays a plain parse error or a type error.
  CHECK(rejection(parse_chat, std::string(200000, '[')).status == 400);
  CHECK(rejection(parse_chat, "{\"messages\": " + std::string(100000, '[') + std::string(100000, ']') + "}").param ==
        "messages[0]");
}

TEST_CASE("openai protocol: response and chunk shapes", "[serve][protocol]") {
  const openai::ResponseHeader h{"chatcmpl-1", 1700000000, "tiny"};
  const openai::Usage usage{5, 3, 2};
  const json chat = openai::chat_completion(h, "Hello", openai::FinishReason::kLength, usage);
  CHECK(chat == json::parse(R"({"id": "chatcmpl-1", "object": "chat.completion", "created": 1700000000,
      "model": "tiny", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
      "logprobs": null, "finish_reason": "length"}],
      "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8,
                "prompt_tokens_details": {"cached_tokens": 2}}})"));
  const json text = openai::text_completion(h, "Hi", openai::FinishReason::kStop, usage);
  CHECK(text["object"] == "text_completion");
  CHECK(text["choices"][0]["text"] == "Hi");
  CHECK(text["choices"][0]["finish_reason"] == "stop");
  CHECK(text["usage"]["total_tokens"] == 8);

  CHECK(openai::chat_completion_chunk(h, "assistant", "", std::nullopt)["choices"][0] ==
        json::parse(R"({"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null,
                        "finish_reason": null})"));
  const json piece = openai::chat_completion_chunk(h, std::nullopt, "lo", std::nullopt);
  CHECK(piece["object"] == "chat.completion.chunk");
  CHECK(piece["choices"][0]["delta"] == json{{"content", "lo"}});
  CHECK(openai::chat_completion_chunk(h, std::nullopt, "", openai::FinishReason::kStop)["choices"][0]["delta"] ==
        json::object());
  CHECK(openai::text_completion_chunk(h, "x", std::nullopt)["choices"][0]["text"] == "x");
  const json usage_chunk = openai::usage_chunk(h, "chat.completion.chunk", usage);
  CHECK(usage_chunk["choices"] == json::array());
  CHECK(usage_chunk["usage"]["completion_tokens"] == 3);
  CHECK(openai::model_list("tiny", 1)["data"][0]["id"] == "tiny");

  openai::ApiError e{404, "no route", "invalid_request_error", std::nullopt, "not_found"};
  CHECK(openai::to_json(e) == json::parse(R"({"error": {"message": "no route", "type": "invalid_request_error",
                                                         "param": null, "code": "not_found"}})"));
  // Invalid UTF-8 (a generation can stop inside a character) becomes U+FFFD instead of throwing.
  CHECK(openai::to_body(json("ab\xE2\x82")) == "\"ab\xEF\xBF\xBD\"");
  CHECK(openai::sse_event(json{{"a", 1}}) == "data: {\"a\":1}\n\n");
}

TEST_CASE("text stream: whole UTF-8 characters, stop strings held back", "[serve][text]") {
  CHECK(utf8_complete_prefix("ab") == 2);
  CHECK(utf8_complete_prefix("a\xF0\x9F\x98") == 1);      // 3 of the 4 bytes of an emoji
  CHECK(utf8_complete_prefix("a\xF0\x9F\x98\x80") == 5);  // all 4
  CHECK(utf8_complete_prefix("a\xC3") == 1);
  CHECK(utf8_complete_prefix("a\x80\x80\x80\x80") == 5);  // stray continuation bytes: nothing to wait for
  CHECK(utf8_complete_prefix("a\xFF") == 2);

  SECTION("a character split over tokens is sent whole") {
    TextStream s;
    CHECK(s.push("x\xF0\x9F") == "x");
    CHECK(s.push("\x98") == "");
    CHECK(s.push("\x80y") == "\xF0\x9F\x98\x80y");
    CHECK(s.finish() == "");
    CHECK(s.text() == "x\xF0\x9F\x98\x80y");
  }
  SECTION("a stop string ends the text before it, across pushes") {
    TextStream s({"END", "\n\n"});
    CHECK(s.push("Hello E") == "Hello ");
    CHECK(s.push("N") == "");
    CHECK_FALSE(s.stopped());
    CHECK(s.push("Dless") == "");
    CHECK(s.stopped());
    CHECK(s.text() == "Hello ");
    CHECK(s.push("more") == "");
    CHECK(s.finish() == "");
  }
  SECTION("a held-back start that does not become a stop string is sent") {
    TextStream s({"END"});
    CHECK(s.push("AE") == "A");
    CHECK(s.push("N") == "");
    CHECK(s.push("x") == "ENx");
    CHECK(s.push("EN") == "");
    CHECK(s.finish() == "EN");
    CHECK(s.text() == "AENxEN");
    CHECK_FALSE(s.stopped());
  }
  SECTION("the earliest stop string wins") {
    TextStream s({"cd", "bcde"});
    CHECK(s.push("abcde") == "a");
    CHECK(s.text() == "a");
  }
  SECTION("pieces give the same text as the whole, invalid bytes included") {
    const std::string bytes = "a\xE2\x82\xAC b\xF0\x9F\x98\x80\x80 \xC3(\xE2\x82 x\xF0\x9F";
    for (std::size_t cut = 1; cut < 5; ++cut) {
      TextStream s({"zz"});
      std::string joined;
      std::string replaced;
      for (std::size_t at = 0; at < bytes.size(); at += cut) {
        std::string piece = s.push(std::string_view(bytes).substr(at, cut));
        joined += piece;
        replaced += openai::to_body(json(piece));
      }
      std::string rest = s.finish();
      joined += rest;
      replaced += openai::to_body(json(rest));
      INFO("cut " << cut);
      CHECK(joined == bytes);
      // Each piece serialised alone, quotes removed, equals the whole serialised.
      std::string unquoted;
      for (char c : replaced)
        if (c != '"') unquoted += c;
      std::string whole = openai::to_body(json(bytes));
      CHECK(unquoted == whole.substr(1, whole.size() - 2));
    }
  }
}

TEST_CASE("generate: a stop request ends the generation", "[serve][generate][cpu]") {
  ModelConfig config = qwen3_preset("tiny");
  config.vocab_size = 700;
  EngineOptions options;
  options.target = tessera::Target::cpu;
  options.context_limit = 16;
  Model model(config, WeightSource::synthetic(4), options);
  Sampler sampler(config.vocab_size, SamplingParams{}, tessera::Target::cpu);
  const std::vector<std::int32_t> prompt = {1, 2, 3};
  GenerateOptions go;
  go.max_new_tokens = 8;
  int seen = 0;
  go.stop_requested = [&] { return seen == 3; };
  const GenerationResult r = generate(model, sampler, prompt, go, [&](std::int32_t) { ++seen; });
  CHECK(r.tokens.size() == 3);
  CHECK(r.stop == GenerationResult::Stop::kRequested);
}

namespace {

// The tiny model and a server for it on a loopback port, shared by the sections below.
struct ServeFixture {
  static constexpr std::int64_t kContext = 48;
  const Tokenizer& tokenizer;
  ModelConfig config = qwen3_preset("tiny");
  Model model;
  std::ostringstream log;
  std::unique_ptr<Server> server;
  int port = 0;
  std::thread thread;

  explicit ServeFixture(const Tokenizer& t) : tokenizer(t), model(config, WeightSource::synthetic(3), engine()) {
    ServerOptions options;
    options.model_id = "tiny-test";
    options.max_body_bytes = 64 * 1024;
    options.log = &log;
    server = std::make_unique<Server>(model, tokenizer, options);
    port = server->bind("127.0.0.1", 0);
    thread = std::thread([this] { server->run(); });
  }
  ~ServeFixture() {
    server->stop();
    thread.join();
  }
  static EngineOptions engine() {
    EngineOptions o;
    o.target = tessera::Target::cpu;
    o.context_limit = kContext;
    return o;
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port);
    c.set_read_timeout(std::chrono::seconds(300));
    return c;
  }
  // What the server should answer for `text` with greedy decoding: the text of the new tokens
  // before a stop token, and the finish reason (computed once per prompt and budget).
  std::map<std::pair<std::string, std::int64_t>, std::pair<std::string, std::string>> answers;
  std::pair<std::string, std::string> expected(const std::string& text, std::int64_t max_tokens) {
    auto [it, fresh] = answers.try_emplace({text, max_tokens});
    if (fresh) it->second = generate_greedy(text, max_tokens);
    return it->second;
  }
  std::pair<std::string, std::string> generate_greedy(const std::string& text, std::int64_t max_tokens) {
    Sampler sampler(config.vocab_size, SamplingParams{}, tessera::Target::cpu);
    GenerateOptions go;
    go.max_new_tokens = max_tokens;
    go.stop_tokens = default_stop_tokens(config, &tokenizer);
    const GenerationResult r = generate(model, sampler, tokenizer.encode(text), go);
    std::vector<std::int32_t> ids = r.tokens;
    if (r.stop == GenerationResult::Stop::kStopToken) ids.pop_back();
    return {tokenizer.decode(ids), r.stop == GenerationResult::Stop::kMaxTokens ? "length" : "stop"};
  }
};

// The JSON of each "data: " event of a server-sent event stream, and whether it ended with [DONE].
std::pair<std::vector<json>, bool> sse_events(const std::string& body) {
  std::vector<json> events;
  bool done = false;
  std::size_t at = 0;
  while (at < body.size()) {
    const std::size_t end = body.find("\n\n", at);
    REQUIRE(end != std::string::npos);
    const std::string event = body.substr(at, end - at);
    REQUIRE(event.rfind("data: ", 0) == 0);
    CHECK_FALSE(done);  // nothing after [DONE]
    if (event == "data: [DONE]")
      done = true;
    else
      events.push_back(json::parse(event.substr(6)));
    at = end + 2;
  }
  return {events, done};
}

json post_json(httplib::Client& c, const std::string& path, const json& body, int expected_status) {
  const auto res = c.Post(path.c_str(), body.dump(), "application/json");
  REQUIRE(res);
  INFO(res->body);
  CHECK(res->status == expected_status);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  return json::parse(res->body);
}

}  // namespace

TEST_CASE("serve: a server on a loopback port", "[serve][server][cpu]") {
  const Tokenizer* tokenizer = qwen3::test::qwen3_tokenizer();
  if (!tokenizer) return;
  static ServeFixture f(*tokenizer);
  httplib::Client c = f.client();
  const json chat = {
      {"messages",
       {{{"role", "system"}, {"content", "You are terse."}}, {{"role", "user"}, {"content", "Why is the sky blue?"}}}},
      {"max_tokens", 5},
      {"temperature", 0},
      {"enable_thinking", false}};
  const std::string chat_text = render_chat(std::vector<ChatMessage>{{"system", "You are terse.", std::nullopt},
                                                                     {"user", "Why is the sky blue?", std::nullopt}},
                                            ChatOptions{true, false});
  const json completion = {{"prompt", "Once upon a time"}, {"max_tokens", 6}, {"temperature", 0}};

  SECTION("health and models") {
    auto res = c.Get("/health");
    REQUIRE(res);
    CHECK(res->status == 200);
    CHECK(json::parse(res->body)["status"] == "ok");
    res = c.Get("/v1/models");
    REQUIRE(res);
    CHECK(json::parse(res->body)["data"][0]["id"] == "tiny-test");
  }
  SECTION("a chat completion and a completion, streamed and not, equal the engine's greedy text") {
    const auto [chat_expected, chat_finish] = f.expected(chat_text, 5);
    const json r = post_json(c, "/v1/chat/completions", chat, 200);
    CHECK(r["object"] == "chat.completion");
    CHECK(r["model"] == "tiny-test");
    CHECK(r["id"].get<std::string>().rfind("chatcmpl-", 0) == 0);
    CHECK(r["choices"][0]["message"]["role"] == "assistant");
    CHECK(r["choices"][0]["message"]["content"] == json(chat_expected));
    CHECK(r["choices"][0]["finish_reason"] == chat_finish);
    CHECK(r["usage"]["prompt_tokens"] == tokenizer->encode(chat_text).size());
    CHECK(r["usage"]["completion_tokens"] == 5);
    CHECK(r["usage"]["total_tokens"] == r["usage"]["prompt_tokens"].get<int>() + 5);

    const auto [text_expected, text_finish] = f.expected("Once upon a time", 6);
    const json t = post_json(c, "/v1/completions", completion, 200);
    CHECK(t["object"] == "text_completion");
    CHECK(t["choices"][0]["text"] == json(text_expected));
    CHECK(t["choices"][0]["finish_reason"] == text_finish);
    CHECK(t["usage"]["prompt_tokens"] == 4);

    for (bool is_chat : {true, false}) {
      json body = is_chat ? chat : completion;
      body["stream"] = true;
      body["stream_options"] = {{"include_usage", true}};
      const auto res = c.Post(is_chat ? "/v1/chat/completions" : "/v1/completions", body.dump(), "application/json");
      REQUIRE(res);
      CHECK(res->status == 200);
      CHECK(res->get_header_value("Content-Type") == "text/event-stream");
      const auto [events, done] = sse_events(res->body);
      CHECK(done);
      REQUIRE(events.size() >= 3);
      std::string streamed;
      const json& last = events[events.size() - 2];
      for (std::size_t i = 0; i + 2 < events.size(); ++i) {
        const json& choice = events[i]["choices"][0];
        CHECK(events[i]["object"] == (is_chat ? "chat.completion.chunk" : "text_completion"));
        CHECK(events[i]["id"] == events[0]["id"]);
        CHECK(choice["finish_reason"].is_null());
        streamed += is_chat ? choice["delta"].value("content", "") : choice["text"].get<std::string>();
      }
      if (is_chat) CHECK(events[0]["choices"][0]["delta"]["role"] == "assistant");
      CHECK(last["choices"][0]["finish_reason"] == (is_chat ? chat_finish : text_finish));
      CHECK(events.back()["choices"] == json::array());
      CHECK(events.back()["usage"]["completion_tokens"] == (is_chat ? 5 : 6));
      CHECK(json(streamed) == json(is_chat ? chat_expected : text_expected));
    }
  }
  SECTION("two concurrent requests are both answered, one after the other") {
    const auto [chat_expected, chat_finish] = f.expected(chat_text, 5);
    const auto [text_expected, text_finish] = f.expected("Once upon a time", 6);
    json chat_reply, text_reply;
    std::thread other([&] {
      httplib::Client c2 = f.client();
      const auto res = c2.Post("/v1/completions", completion.dump(), "application/json");
      if (res && res->status == 200) text_reply = json::parse(res->body);
    });
    chat_reply = post_json(c, "/v1/chat/completions", chat, 200);
    other.join();
    CHECK(chat_reply["choices"][0]["message"]["content"] == json(chat_expected));
    REQUIRE(text_reply.is_object());
    CHECK(text_reply["choices"][0]["text"] == json(text_expected));
  }
  SECTION("a prompt is prefilled only past the prefix the cache holds from the previous request") {
    // The same prompt again: every token but the last is taken from the cache (positions a
    // prefill computed, so the answer is the engine's greedy text exactly).
    const auto [text_expected, text_finish] = f.expected("Once upon a time", 6);
    post_json(c, "/v1/completions", completion, 200);
    const json again = post_json(c, "/v1/completions", completion, 200);
    CHECK(again["usage"]["prompt_tokens_details"]["cached_tokens"] == 3);
    CHECK(again["choices"][0]["text"] == json(text_expected));
    // A prompt that goes on from the previous prompt and its answer (as a chat's next turn repeats
    // the conversation so far): the cache holds them up to where the encodings differ (at least
    // "Once upon a", whose pre-tokens the answer cannot change).
    const std::string next = "Once upon a time" + again["choices"][0]["text"].get<std::string>() + " there was";
    const std::int64_t reusable = reusable_prefix(tokenizer->encode(next), f.model.cached_tokens());
    CHECK(reusable >= 3);
    json body = completion;
    body["prompt"] = next;
    body["max_tokens"] = 2;
    const json later = post_json(c, "/v1/completions", body, 200);
    CHECK(later["usage"]["prompt_tokens"] == tokenizer->encode(next).size());
    CHECK(later["usage"]["prompt_tokens_details"]["cached_tokens"] == reusable);
    CHECK_THAT(f.log.str(), Catch::Contains(fmt::format("({} cached)", reusable)));
  }
  SECTION("a stop string ends the text before it") {
    // Stop at the third new token's text (when it is whole UTF-8 and not found earlier).
    Sampler sampler(f.config.vocab_size, SamplingParams{}, tessera::Target::cpu);
    GenerateOptions go;
    go.max_new_tokens = 6;
    const GenerationResult g = generate(f.model, sampler, tokenizer->encode("Once upon a time"), go);
    const std::string full = tokenizer->decode(g.tokens);
    std::string stop;
    for (std::size_t i = 2; i < g.tokens.size() && stop.empty(); ++i) {
      const std::string piece(tokenizer->token_bytes(g.tokens[i]));
      if (!piece.empty() && find_invalid_utf8(piece) == std::string::npos) stop = piece;
    }
    REQUIRE_FALSE(stop.empty());
    json body = completion;
    body["stop"] = {"never appears", stop};
    const json t = post_json(c, "/v1/completions", body, 200);
    CHECK(t["choices"][0]["text"] == json(full.substr(0, full.find(stop))));
    CHECK(t["choices"][0]["finish_reason"] == "stop");
  }
  SECTION("a seed makes sampling reproducible") {
    json body = completion;
    body["temperature"] = 1.0;
    body["seed"] = 11;
    body["max_tokens"] = 4;
    const json a = post_json(c, "/v1/completions", body, 200);
    const json b = post_json(c, "/v1/completions", body, 200);
    CHECK(a["choices"][0]["text"] == b["choices"][0]["text"]);
  }
  SECTION("a client that leaves a stream ends its generation; the server goes on") {
    json body = completion;
    body["stream"] = true;
    body["max_tokens"] = 40;
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    int received = 0;
    req.content_receiver = [&](const char*, std::size_t, std::uint64_t, std::uint64_t) { return ++received < 2; };
    c.send(req);
    CHECK(received == 2);
    // The next request waits for the abandoned generation, which stops at the next failed write.
    const json t = post_json(c, "/v1/completions", completion, 200);
    CHECK(t["choices"][0]["finish_reason"].is_string());
    CHECK_THAT(f.log.str(), Catch::Contains("client gone"));
  }
  SECTION("bad requests are JSON errors") {
    auto res = c.Post("/v1/chat/completions", "{\"messages\": [", "application/json");
    REQUIRE(res);
    CHECK(res->status == 400);
    json e = json::parse(res->body)["error"];
    CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("the request body is not valid JSON"));
    CHECK(e["type"] == "invalid_request_error");
    CHECK(e["param"].is_null());
    CHECK(e.contains("code"));

    json bad = chat;
    bad["temperature"] = -1;
    e = post_json(c, "/v1/chat/completions", bad, 400)["error"];
    CHECK(e["param"] == "temperature");
    bad = chat;
    bad["messages"][0]["role"] = "tool";
    CHECK(post_json(c, "/v1/chat/completions", bad, 400)["error"]["param"] == "messages[0].role");

    res = c.Post("/v1/embeddings", "{}", "application/json");
    REQUIRE(res);
    CHECK(res->status == 404);
    e = json::parse(res->body)["error"];
    CHECK_THAT(e["message"].get<std::string>(), Catch::Contains("no route POST /v1/embeddings"));
    CHECK(e["code"] == "not_found");
    res = c.Get("/v1/chat/completions");
    REQUIRE(res);
    CHECK(res->status == 405);

    res = c.Post("/v1/completions", std::string(100 * 1024, ' '), "application/json");
    REQUIRE(res);
    CHECK(res->status == 413);
    CHECK(json::parse(res->body)["error"]["code"] == "request_too_large");
  }
  SECTION("a prompt or a budget past the context is the engine's context error") {
    std::string long_prompt;
    for (int i = 0; i < 60; ++i) long_prompt += " word";
    json body = {{"prompt", long_prompt}, {"stream", true}};
    json e = post_json(c, "/v1/completions", body, 400)["error"];
    CHECK(e["code"] == "context_length_exceeded");
    CHECK(e["param"] == "prompt");
    CHECK_THAT(e["message"].get<std::string>(),
               Catch::Contains("the prompt (60 tokens) and up to 1 new tokens need 61 positions, more than the "
                               "context limit of 48"));
    body = {{"prompt", "Once upon a time"}, {"max_tokens", 45}};
    e = post_json(c, "/v1/completions", body, 400)["error"];
    CHECK(e["param"] == "max_tokens");
    CHECK_THAT(e["message"].get<std::string>(),
               Catch::Contains("need 49 positions, more than the context limit of 48"));
  }
}
