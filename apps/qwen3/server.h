// server.h: the OpenAI-style HTTP server of `tessera-qwen3 serve`, on cpp-httplib.
//
// Routes (requests and responses as openai_protocol.h reads and writes them):
//   POST /v1/chat/completions   messages rendered with the ChatML template (chat_template.h)
//   POST /v1/completions        the prompt as given
//   GET  /v1/models             the one model, ServerOptions::model_id
//   GET  /health                {"status": "ok"}
// Anything else is a JSON error: 404 for an unknown path, 405 for a known path with another
// method, 400 for a request openai_protocol.h rejects, a chat the template cannot render or a
// generation that does not fit the context (code "context_length_exceeded", the message of the
// engine's ContextLimitError), 413 for a body over ServerOptions::max_body_bytes, 500 for a
// failure of the engine. Errors found before generating are answered as such also for a stream;
// an error during a stream ends it with an event {"error": ...}, then [DONE].
//
// One generation at a time: a mutex around the model, so that concurrent requests wait their turn
// (httplib serves each connection on a thread of its pool). A generation prefills only the part of
// its prompt past the longest prefix the KV cache holds from the previous one (generate.h,
// reuse_cache; ServerOptions::prefix_cache), so that each turn of a chat, whose request repeats
// the conversation so far, prefills only what is new; usage.prompt_tokens_details.cached_tokens
// says how many prompt tokens were taken from the cache. A request's unset fields take the defaults of ServerOptions; without
// max_tokens a generation may run to the context limit. A streamed answer is sent as server-sent
// events while tokens are generated (text_stream.h decides what can be sent); a client that leaves
// a stream ends its generation at the next token (a non-streamed answer is computed to its end).
// Stop strings end the text before them, finish_reason "stop"; completion_tokens counts every
// token generated, a stop token included.
//
// bind() ignores SIGPIPE for the whole process: a write to a client that has gone then fails
// instead of ending the process.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "model.h"
#include "sampler.h"
#include "tokenizer.h"

namespace qwen3 {

struct ServerOptions {
  std::string model_id = "qwen3";
  SamplingParams sampling;                 // temperature, top_k and top_p of a request that sets none
  std::optional<std::uint64_t> seed;       // a request without a seed: this, else a random seed
  std::optional<std::int64_t> max_tokens;  // a request without max_tokens: this, capped at the context
  bool enable_thinking = true;             // a chat request without enable_thinking
  bool prefix_cache = true;                // reuse the cache's prefix of each prompt (above)
  std::size_t max_body_bytes = 16u << 20;  // larger request bodies are answered 413
  std::ostream* log = nullptr;             // one line per generation and per error, when set
};

class Server {
 public:
  // The model and tokenizer must outlive the server.
  Server(Model& model, const Tokenizer& tokenizer, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port (port 0: a free port) and returns the port; throws qwen3::Error naming the
  // address when it cannot.
  int bind(const std::string& host, int port);
  // Serves on the bound address until stop() is called (from another thread); returns at once
  // when stop() came first.
  void run();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace qwen3
