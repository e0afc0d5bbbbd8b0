// openai_protocol.h: the OpenAI-style HTTP API's requests and responses as typed records, with no
// HTTP in it (server.h does the wiring).
//
// Parsing: parse_chat_completion_request and parse_completion_request read a request body into a
// record, checking every field they use; anything else throws RequestError carrying the ApiError
// to answer (HTTP 400, type "invalid_request_error", `param` naming the field, the message saying
// what was expected and what came). Fields:
//   model                     string, optional; not checked against the served model
//   messages (chat)           non-empty array of {role: "system"|"developer"|"user"|"assistant",
//                             content: string or array of {type: "text", text}, or null for an
//                             assistant; reasoning_content: string, assistant only}; "developer"
//                             is read as "system"
//   prompt (completions)      string, or an array holding one string
//   max_tokens, max_completion_tokens   integer in [1, 2^31 - 1] (the latter wins when both are given)
//   temperature               number >= 0 (0: greedy)
//   top_p                     number in (0, 1]
//   top_k (extension)         integer in [-1, 64]; 0 and -1: all 64 candidates (sampler.h)
//   seed                      integer
//   stop                      string or array of at most 16 non-empty strings, or null
//   stream                    boolean; stream_options: {include_usage: boolean}
//   n                         1 (one choice per request)
//   enable_thinking (extension, chat)   boolean; also read from chat_template_kwargs.enable_thinking
//                             (as vLLM and SGLang take it); false switches Qwen3's thinking off
// A null field counts as absent; other fields (frequency_penalty, user, ...) are ignored.
//
// Responses: the JSON objects of OpenAI's chat.completion, chat.completion.chunk and
// text_completion shapes (usage with prompt_tokens_details.cached_tokens: the prompt tokens taken
// from the KV cache), the model list and the error object. to_body() serialises them,
// replacing invalid UTF-8 (a generation can end inside a character) with U+FFFD; sse_event()
// frames one server-sent event.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat_template.h"
#include "errors.h"

namespace qwen3::openai {

// An error as answered: the HTTP status and the fields of {"error": {...}}.
struct ApiError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::optional<std::string> param;
  std::optional<std::string> code;
};

nlohmann::json to_json(const ApiError& error);

// A request the server cannot accept; what() is the error's message.
class RequestError : public Error {
 public:
  explicit RequestError(ApiError error);
  const ApiError& error() const { return error_; }

 private:
  ApiError error_;
};

// The generation fields both endpoints share; nullopt leaves the server's default.
struct GenerationRequest {
  std::optional<std::int64_t> max_tokens;
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> top_k;  // -1 is read as 0
  std::optional<std::uint64_t> seed;  // a negative seed is taken modulo 2^64
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the usage
};

struct ChatCompletionRequest {
  std::string model;
  std::vector<ChatMessage> messages;
  std::optional<bool> enable_thinking;
  GenerationRequest generation;
};

struct CompletionRequest {
  std::string model;
  std::string prompt;
  GenerationRequest generation;
};

ChatCompletionRequest parse_chat_completion_request(std::string_view body);
CompletionRequest parse_completion_request(std::string_view body);

enum class FinishReason { kStop, kLength };
std::string_view to_string(FinishReason reason);

struct Usage {
  std::int64_t prompt_tokens = 0;
  std::int64_t completion_tokens = 0;
  std::int64_t cached_tokens = 0;  // of the prompt's, taken from the KV cache: prompt_tokens_details
};

// What one response and each of its chunks carry: "chatcmpl-..." or "cmpl-...", the Unix time of
// the request, the served model's id.
struct ResponseHeader {
  std::string id;
  std::int64_t created = 0;
  std::string model;
};

nlohmann::json chat_completion(const ResponseHeader& header, std::string_view text, FinishReason finish,
                               const Usage& usage);
nlohmann::json text_completion(const ResponseHeader& header, std::string_view text, FinishReason finish,
                               const Usage& usage);

// A chunk of a stream: `role` only in a chat stream's first chunk, `text` the new text (a chat
// chunk's delta leaves content out when it is empty and there is a finish), `finish` in the last.
nlohmann::json chat_completion_chunk(const ResponseHeader& header, std::optional<std::string_view> role,
                                     std::string_view text, std::optional<FinishReason> finish);
nlohmann::json text_completion_chunk(const ResponseHeader& header, std::string_view text,
                                     std::optional<FinishReason> finish);
// stream_options.include_usage: the chunk after the last, with no choices and the usage.
nlohmann::json usage_chunk(const ResponseHeader& header, std::string_view object, const Usage& usage);

nlohmann::json model_list(std::string_view model, std::int64_t created);

std::string to_body(const nlohmann::json& value);
std::string sse_event(const nlohmann::json& value);  // "data: {json}\n\n"
inline constexpr std::string_view kSseDone = "data: [DONE]\n\n";

}  // namespace qwen3::openai
