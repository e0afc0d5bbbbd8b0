// server.cpp: the routes, the one-generation-at-a-time lock and the event streams of server.h.
//
// A request goes: body -> typed request (openai_protocol.h) -> Job (prompt tokens, resolved
// sampling and budget, checked against the context) -> one generation under the model lock ->
// response JSON, or events as the text comes. Everything that can be rejected is rejected while
// building the Job, before any response byte is sent, so that streams too get a proper status.
#include "server.h"

#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <functional>
#include <mutex>
#include <random>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "chat_template.h"
#include "errors.h"
#include "generate.h"
#include "openai_protocol.h"
#include "text_stream.h"

namespace qwen3 {

namespace {

using openai::ApiError;
using openai::FinishReason;

constexpr const char* kRoutes = "POST /v1/chat/completions, POST /v1/completions, GET /v1/models and GET /health";

// One generation, ready to run.
struct Job {
  bool chat = false;
  std::string endpoint;  // for the log
  std::vector<std::int32_t> prompt;
  std::int64_t max_new_tokens = 0;
  SamplingParams sampling;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;
  openai::ResponseHeader header;
};

struct Outcome {
  std::string text;
  FinishReason finish = FinishReason::kStop;
  openai::Usage usage;
};

ApiError api_error(int status, std::string message, std::string type, std::optional<std::string> param = std::nullopt,
                   std::optional<std::string> code = std::nullopt) {
  return ApiError{status, std::move(message), std::move(type), std::move(param), std::move(code)};
}

void answer(httplib::Response& res, const ApiError& error) {
  res.status = error.status;
  res.set_content(openai::to_body(openai::to_json(error)), "application/json");
}

std::uint64_t random_seed() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

}  // namespace

struct Server::Impl {
  Model& model;
  const Tokenizer& tokenizer;
  ServerOptions options;
  std::vector<std::int32_t> stop_tokens;
  std::int64_t started = std::time(nullptr);
  std::uint32_t id_nonce = static_cast<std::uint32_t>(random_seed());
  std::atomic<std::uint32_t> next_id{0};
  std::mutex model_mutex;  // one generation at a time
  std::mutex log_mutex;
  std::mutex run_mutex;  // run() and stop()
  bool run_called = false, stop_asked = false;
  std::atomic<bool> run_ended{false};
  httplib::Server http;

  Impl(Model& m, const Tokenizer& t, ServerOptions o)
      : model(m), tokenizer(t), options(std::move(o)), stop_tokens(default_stop_tokens(m.config(), &t)) {
    routes();
  }

  void log(const std::string& line) {
    if (!options.log) return;
    std::lock_guard lock(log_mutex);
    *options.log << "tessera-qwen3 serve: " << line << '\n' << std::flush;
  }

  void fail(const httplib::Request& req, httplib::Response& res, const ApiError& error) {
    log(fmt::format("{} {}: {} {}", req.method, req.path, error.status, error.message));
    answer(res, error);
  }

  void routes();
  void complete(const httplib::Request& req, httplib::Response& res, bool chat);
  Job prepare(bool chat, const std::string& endpoint, const openai::GenerationRequest& g, const std::string& text);
  Outcome generate_text(const Job& job, const std::function<bool(std::string_view)>& send);
  void start_stream(std::shared_ptr<const Job> job, httplib::Response& res);
};

void Server::Impl::routes() {
  http.set_payload_max_length(options.max_body_bytes);
  http.Post("/v1/chat/completions",
            [this](const httplib::Request& req, httplib::Response& res) { complete(req, res, true); });
  http.Post("/v1/completions",
            [this](const httplib::Request& req, httplib::Response& res) { complete(req, res, false); });
  http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(openai::to_body(openai::model_list(options.model_id, started)), "application/json");
  });
  http.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });
  auto wrong_method = [this](const httplib::Request& req, httplib::Response& res) {
    fail(req, res,
         api_error(405,
                   fmt::format("{} does not take {} requests (the server answers {})", req.path, req.method, kRoutes),
                   "invalid_request_error", std::nullopt, "method_not_allowed"));
  };
  http.Get("/v1/chat/completions", wrong_method);
  http.Get("/v1/completions", wrong_method);
  http.Post("/v1/models", wrong_method);
  http.Post("/health", wrong_method);

  // Errors httplib finds itself (no route, a body too large, a malformed request) get a JSON body;
  // the handlers' own errors already have one.
  http.set_error_handler(
      httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        ApiError error = api_error(res.status, fmt::format("HTTP error {} on {} {}", res.status, req.method, req.path),
                                   "invalid_request_error");
        if (res.status == 404) {
          error.message = fmt::format("no route {} {} (the server answers {})", req.method, req.path, kRoutes);
          error.code = "not_found";
        } else if (res.status == 413) {
          error.message = fmt::format("the request body is larger than {} bytes", options.max_body_bytes);
          error.code = "request_too_large";
        }
        fail(req, res, error);
        return httplib::Server::HandlerResponse::Handled;
      }));
  http.set_exception_handler([this](const httplib::Request& req, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    fail(req, res, api_error(500, what, "server_error"));
  });
}

void Server::Impl::complete(const httplib::Request& req, httplib::Response& res, bool chat) {
  try {
    std::shared_ptr<Job> job;
    if (chat) {
      const openai::ChatCompletionRequest r = openai::parse_chat_completion_request(req.body);
      ChatOptions chat_options;
      chat_options.enable_thinking = r.enable_thinking.value_or(options.enable_thinking);
      std::string text;
      try {
        text = render_chat(r.messages, chat_options);
      } catch (const TokenizerError& e) {
        throw openai::RequestError(api_error(400, e.what(), "invalid_request_error", "messages"));
      }
      job = std::make_shared<Job>(prepare(true, req.path, r.generation, text));
    } else {
      const openai::CompletionRequest r = openai::parse_completion_request(req.body);
      job = std::make_shared<Job>(prepare(false, req.path, r.generation, r.prompt));
    }
    if (job->stream) return start_stream(std::move(job), res);
    const Outcome o = generate_text(*job, nullptr);
    res.set_content(openai::to_body(chat ? openai::chat_completion(job->header, o.text, o.finish, o.usage)
                                         : openai::text_completion(job->header, o.text, o.finish, o.usage)),
                    "application/json");
  } catch (const openai::RequestError& e) {
    fail(req, res, e.error());
  } catch (const std::exception& e) {
    fail(req, res, api_error(500, e.what(), "server_error"));
  }
}

Job Server::Impl::prepare(bool chat, const std::string& endpoint, const openai::GenerationRequest& g,
                          const std::string& text) {
  const char* prompt_param = chat ? "messages" : "prompt";
  Job job;
  job.chat = chat;
  job.endpoint = endpoint;
  try {
    job.prompt = tokenizer.encode(text);
  } catch (const TokenizerError& e) {
    throw openai::RequestError(api_error(400, e.what(), "invalid_request_error", prompt_param));
  }
  if (job.prompt.empty())
    throw openai::RequestError(
        api_error(400, "the prompt encodes to no tokens", "invalid_request_error", prompt_param));

  const auto prompt_size = static_cast<std::int64_t>(job.prompt.size());
  const std::int64_t room = model.context_limit() - prompt_size;
  job.max_new_tokens = g.max_tokens ? *g.max_tokens : std::min(options.max_tokens.value_or(room), room);
  try {
    check_fits_context(prompt_size, std::max<std::int64_t>(job.max_new_tokens, 1), model.context_limit());
  } catch (const ContextLimitError& e) {
    throw openai::RequestError(api_error(400, e.what(), "invalid_request_error", room < 1 ? prompt_param : "max_tokens",
                                         "context_length_exceeded"));
  }

  job.sampling = options.sampling;
  if (g.temperature) job.sampling.temperature = *g.temperature;
  if (g.top_p) job.sampling.top_p = *g.top_p;
  if (g.top_k) job.sampling.top_k = *g.top_k;
  job.sampling.seed = g.seed ? *g.seed : options.seed ? *options.seed : random_seed();
  try {
    check_sampling_params(job.sampling);
  } catch (const Error& e) {
    throw openai::RequestError(api_error(400, e.what(), "invalid_request_error"));
  }
  job.stop = g.stop;
  job.stream = g.stream;
  job.include_usage = g.include_usage;
  job.header.id = fmt::format("{}-{:08x}{:08x}", chat ? "chatcmpl" : "cmpl", id_nonce, next_id++);
  job.header.created = std::time(nullptr);
  job.header.model = options.model_id;
  return job;
}

Outcome Server::Impl::generate_text(const Job& job, const std::function<bool(std::string_view)>& send) {
  std::lock_guard lock(model_mutex);
  Sampler sampler(model.config().vocab_size, job.sampling, model.target());
  TextStream text(job.stop);
  bool client_gone = false;
  auto deliver = [&](const std::string& piece) {
    if (!piece.empty() && send && !client_gone && !send(piece)) client_gone = true;
  };
  GenerateOptions go;
  go.max_new_tokens = job.max_new_tokens;
  go.stop_tokens = stop_tokens;
  go.stop_requested = [&] { return client_gone || text.stopped(); };
  go.reuse_cache = options.prefix_cache;
  const GenerationResult r = generate(model, sampler, job.prompt, go, [&](std::int32_t token) {
    if (std::find(stop_tokens.begin(), stop_tokens.end(), token) == stop_tokens.end())
      deliver(text.push(tokenizer.token_bytes(token)));
  });
  deliver(text.finish());

  Outcome o;
  o.text = text.text();
  o.finish = r.stop == GenerationResult::Stop::kMaxTokens ? FinishReason::kLength : FinishReason::kStop;
  o.usage = {r.prompt_tokens, static_cast<std::int64_t>(r.tokens.size()), r.cached_prompt_tokens};
  log(fmt::format("{} {}: {} prompt ({} cached) + {} new tokens, prefill {:.3f} s, decode {:.2f} tokens/s, {}",
                  job.endpoint, job.header.id, r.prompt_tokens, r.cached_prompt_tokens, r.tokens.size(),
                  r.prefill_seconds, r.decode_tokens_per_second(),
                  client_gone      ? "client gone"
                  : text.stopped() ? "stop string"
                                   : openai::to_string(o.finish)));
  return o;
}

void Server::Impl::start_stream(std::shared_ptr<const Job> job, httplib::Response& res) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider("text/event-stream", [this, job](std::size_t, httplib::DataSink& sink) {
    const openai::ResponseHeader& h = job->header;
    auto send = [&](const std::string& event) { return sink.is_writable() && sink.write(event.data(), event.size()); };
    auto chunk = [&](std::optional<std::string_view> role, std::string_view text, std::optional<FinishReason> finish) {
      return openai::sse_event(job->chat ? openai::chat_completion_chunk(h, role, text, finish)
                                         : openai::text_completion_chunk(h, text, finish));
    };
    try {
      if (job->chat && !send(chunk("assistant", "", std::nullopt))) return false;
      const Outcome o =
          generate_text(*job, [&](std::string_view piece) { return send(chunk(std::nullopt, piece, std::nullopt)); });
      send(chunk(std::nullopt, "", o.finish));
      if (job->include_usage)
        send(openai::sse_event(
            openai::usage_chunk(h, job->chat ? "chat.completion.chunk" : "text_completion", o.usage)));
    } catch (const std::exception& e) {
      log(fmt::format("{} {}: failed during the stream: {}", job->endpoint, h.id, e.what()));
      send(openai::sse_event(openai::to_json(api_error(500, e.what(), "server_error"))));
    }
    send(std::string(openai::kSseDone));
    sink.done();
    return true;
  });
}

Server::Server(Model& model, const Tokenizer& tokenizer, ServerOptions options)
    : impl_(std::make_unique<Impl>(model, tokenizer, std::move(options))) {}

Server::~Server() = default;

int Server::bind(const std::string& host, int port) {
  std::signal(SIGPIPE, SIG_IGN);
  const int bound = port == 0 ? impl_->http.bind_to_any_port(host) : impl_->http.bind_to_port(host, port) ? port : -1;
  if (bound <= 0)
    throw Error(
        fmt::format("cannot listen on {}:{} (the port is taken, the host is not an address of this machine, "
                    "or the port needs privileges)",
                    host, port));
  return bound;
}

// httplib's stop() does nothing before its accept loop has started, so stop() waits for that loop
// when run() has been called, and run() returns at once after a stop().
void Server::run() {
  {
    std::lock_guard lock(impl_->run_mutex);
    if (impl_->stop_asked) return;
    impl_->run_called = true;
  }
  impl_->http.listen_after_bind();
  impl_->run_ended = true;
}

void Server::stop() {
  {
    std::lock_guard lock(impl_->run_mutex);
    impl_->stop_asked = true;
    if (!impl_->run_called) return;
  }
  while (!impl_->http.is_running() && !impl_->run_ended) std::this_thread::yield();
  impl_->http.stop();
}

}  // namespace qwen3
