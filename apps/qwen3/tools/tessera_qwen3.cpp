// tessera_qwen3.cpp: tessera-qwen3, text generation with a Qwen3 model on tessera; `tessera-qwen3 serve` runs
// it as an OpenAI-style HTTP server instead (the serve section below).
//
//   tessera-qwen3 --model DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K]
//                 [--top-p P] [--seed S] [--chat] [--no-think] [--synthetic SHAPE]
//                 [--weights-seed S] [--layers N] [--context N] [--target cpu|sm_90|...]
//                 [--prompt-tokens N] [--stats-json FILE] [--attention-programs N] [--fused-attention-positions N]
//                 [--short-attention-positions 0|128|256] [--split-prefetch 0|1] [--compiler-threads]
//                 [--stream-weights S] [--split-k S] [--early-weight-steps N] [--norm-occupancy N]
//                 [--residual-occupancy N] [--residual-threads T] [--prefill-split-k S] [--compile-jobs N]
// --model DIR is a Hugging Face folder (config.json, model.safetensors or the sharded index,
// tokenizer.json). With --synthetic SHAPE (0.6B .. 32B, tiny) the weights are made in place by
// the synthetic generator (seed --weights-seed, default 0; --layers keeps the widths with fewer
// layers) and DIR only needs tokenizer.json (default: the folder CMake was given). --chat wraps
// the prompt as a user message in the ChatML template, letting the model think unless
// --no-think. Sampling: temperature 0 (the default) is greedy; see sampler.h for top-k/top-p.
// Before the timed run, prefills, one step and one sampling run compile every kernel (their time
// is printed apart). The context limit (KV-cache positions) is by default the prompt's tokens plus
// --max-new-tokens. The generated text streams to stdout; the token counts and rates go to
// stderr at the end: prefill tokens/s (the prompt, through the matmul prefill, to the first new token)
// and decode tokens/s (the tokens after it). --prompt-tokens N makes the prompt exactly N tokens:
// the encoded prompt (after --chat's template; without --prompt a fixed English sentence) repeated
// and cut to N, so that benchmarks get a prompt of a given length. --stats-json FILE also writes
// the run's numbers, the prompt's ids and the new tokens as one JSON object (write_stats_json).
// --attention-programs N sizes the split-KV attention (EngineOptions::attention_programs);
// --fused-attention-positions N runs steps at up to N positions with the attention as one kernel
// per layer (EngineOptions::fused_attention_positions; 0: always split-KV);
// --short-attention-positions N (0, 128 or 256; default 128) runs steps at up to N positions with the attention
// as one kernel without a loop (EngineOptions::short_attention_positions); --split-prefetch 0|1
// has the split-KV attention load each chunk during the chunk before (EngineOptions::split_prefetch);
// --compiler-threads runs every decode product at the compiler's thread count instead of the
// engine's (EngineOptions::product_threads), for comparisons; --stream-weights S streams the
// decode products' weight tiles through bulk rings of S slots (EngineOptions::stream_stages);
// --split-k S runs the output and down projections with each program's K loop shared by the S
// CTAs of a cluster (EngineOptions::split_k); --early-weight-steps N (1 to 4) loads each decode
// kernel's first N steps of weight tiles before it waits for the kernel before it
// (EngineOptions::early_weight_steps); --norm-occupancy N and --residual-occupancy N (1 to 32) cap
// the registers of the decode products with a folded RMSNorm and of the residual ones so that N
// programs fit per SM (--norm-occupancy 0: the compiler's choice; without it, the engine's: 3
// from 4B up), --residual-threads T runs the residual products at T threads per program
// (EngineOptions::norm_product_occupancy, residual_product_occupancy, residual_product_threads);
// --prefill-split-k S (0, 1, 2, 4 or 8) shares the k-tiles of the prefill's o_proj and down GEMMs
// among the S CTAs of a cluster (EngineOptions::prefill_split_k; default the engine's);
// --compile-jobs N compiles the kernels before the run on N host threads (EngineOptions::
// compile_jobs; default one per hardware thread, 1 one after another).
// Exit status: 0 done, 1 an error (the message names it), 2 bad command line.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "chat_template.h"
#include "errors.h"
#include "generate.h"
#include "model.h"
#include "model_presets.h"
#include "model_weights.h"
#include "sampler.h"
#include "server.h"
#include "tokenizer.h"
#include "weight_source.h"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string model_dir, prompt, synthetic, stats_json;
  std::int64_t max_new_tokens = 128, layers = 0, context = 0, prompt_tokens = 0;
  std::int64_t attention_programs = qwen3::EngineOptions{}.attention_programs;
  std::int64_t fused_attention_positions = qwen3::EngineOptions{}.fused_attention_positions;
  std::int64_t short_attention_positions = qwen3::EngineOptions{}.short_attention_positions;
  bool split_prefetch = qwen3::EngineOptions{}.split_prefetch;
  qwen3::SamplingParams sampling;
  std::uint64_t weights_seed = 0;
  bool chat = false, think = true, product_threads = true;
  int stream_stages = 0;
  int split_k = 0;
  int early_weight_steps = 0;
  std::optional<int> norm_occupancy;  // nullopt: the engine's choice
  int residual_occupancy = 0, residual_threads = 0;
  std::optional<int> prefill_split_k;  // nullopt: the engine's choice
  unsigned compile_jobs = 0;           // 0: one per hardware thread
  std::optional<tessera::Target> target;
};

int usage(const std::string& problem) {
  std::cerr << "tessera-qwen3: " << problem << "\n"
            << "usage: tessera-qwen3 --model DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K]\n"
               "                     [--top-p P] [--seed S] [--chat] [--no-think] [--synthetic SHAPE]\n"
               "                     [--weights-seed S] [--layers N] [--context N] [--target cpu|sm_90|...]\n"
               "                     [--prompt-tokens N] [--stats-json FILE] [--attention-programs N]\n"
               "                     [--fused-attention-positions N] [--short-attention-positions 0|128|256]\n"
               "                     [--split-prefetch 0|1]\n"
               "                     [--compiler-threads] [--stream-weights S] [--split-k S]\n"
               "                     [--early-weight-steps N] [--norm-occupancy N] [--residual-occupancy N]\n"
               "                     [--residual-threads T] [--prefill-split-k S] [--compile-jobs N]\n";
  return 2;
}

std::optional<tessera::Target> parse_target(const std::string& name) {
  if (name == "cpu") return tessera::Target::cpu;
  for (tessera::Target t : tessera::gpu_targets())
    if (tessera::to_string(t) == name) return t;
  return std::nullopt;
}

// A whole option value as an integer or a number (false for anything else).
bool integer(const std::string& v, std::int64_t& out) {
  char* end = nullptr;
  out = std::strtoll(v.c_str(), &end, 10);
  return !v.empty() && *end == 0;
}
bool number(const std::string& v, double& out) {
  char* end = nullptr;
  out = std::strtod(v.c_str(), &end);
  return !v.empty() && *end == 0;
}

// Parses the command line into `o`; returns an error message, or empty.
std::string parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--chat") {
      o.chat = true;
      continue;
    }
    if (arg == "--no-think") {
      o.think = false;
      continue;
    }
    if (arg == "--compiler-threads") {
      o.product_threads = false;
      continue;
    }
    if (i + 1 >= argc) return arg + " needs a value";
    const std::string v = argv[++i];
    std::int64_t n = 0;
    double x = 0;
    if (arg == "--model")
      o.model_dir = v;
    else if (arg == "--prompt")
      o.prompt = v;
    else if (arg == "--synthetic")
      o.synthetic = v;
    else if (arg == "--max-new-tokens" && integer(v, n) && n >= 1)
      o.max_new_tokens = n;
    else if (arg == "--temperature" && number(v, x))
      o.sampling.temperature = x;
    else if (arg == "--top-k" && integer(v, n))
      o.sampling.top_k = n;
    else if (arg == "--top-p" && number(v, x))
      o.sampling.top_p = x;
    else if (arg == "--seed" && integer(v, n) && n >= 0)
      o.sampling.seed = static_cast<std::uint64_t>(n);
    else if (arg == "--weights-seed" && integer(v, n) && n >= 0)
      o.weights_seed = static_cast<std::uint64_t>(n);
    else if (arg == "--layers" && integer(v, n) && n >= 1)
      o.layers = n;
    else if (arg == "--context" && integer(v, n) && n >= 1)
      o.context = n;
    else if (arg == "--prompt-tokens" && integer(v, n) && n >= 1)
      o.prompt_tokens = n;
    else if (arg == "--attention-programs" && integer(v, n) && n >= 1)
      o.attention_programs = n;
    else if (arg == "--fused-attention-positions" && integer(v, n) && n >= 0)
      o.fused_attention_positions = n;
    else if (arg == "--split-prefetch" && (v == "0" || v == "1"))
      o.split_prefetch = v == "1";
    else if (arg == "--short-attention-positions" && integer(v, n) && (n == 0 || n == 128 || n == 256))
      o.short_attention_positions = n;
    else if (arg == "--stream-weights" && integer(v, n) && n >= 2 && n <= 8)
      o.stream_stages = static_cast<int>(n);
    else if (arg == "--split-k" && integer(v, n) && (n == 2 || n == 4 || n == 8))
      o.split_k = static_cast<int>(n);
    else if (arg == "--early-weight-steps" && integer(v, n) && n >= 1 && n <= 4)
      o.early_weight_steps = static_cast<int>(n);
    else if (arg == "--norm-occupancy" && integer(v, n) && n >= 0 && n <= 32)
      o.norm_occupancy = static_cast<int>(n);
    else if (arg == "--residual-occupancy" && integer(v, n) && n >= 1 && n <= 32)
      o.residual_occupancy = static_cast<int>(n);
    else if (arg == "--residual-threads" && integer(v, n) && n >= 32 && n <= 1024 && (n & (n - 1)) == 0)
      o.residual_threads = static_cast<int>(n);
    else if (arg == "--prefill-split-k" && integer(v, n) && (n == 0 || n == 1 || n == 2 || n == 4 || n == 8))
      o.prefill_split_k = static_cast<int>(n);
    else if (arg == "--compile-jobs" && integer(v, n) && n >= 1 && n <= 1024)
      o.compile_jobs = static_cast<unsigned>(n);
    else if (arg == "--stats-json")
      o.stats_json = v;
    else if (arg == "--target") {
      o.target = parse_target(v);
      if (!o.target) return "unknown target '" + v + "' (cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120)";
    } else
      return "bad option or value: " + arg + " " + v;
  }
  if (o.model_dir.empty() && o.synthetic.empty()) return "--model DIR (or --synthetic SHAPE) is required";
  if (o.prompt.empty() && o.prompt_tokens == 0) return "--prompt TEXT (or --prompt-tokens N) is required";
  return "";
}

// The numbers of one run as a JSON object in `path` (--stats-json); throws Error naming the file
// when it cannot be written. Rates are those printed to stderr (generate.h).
void write_stats_json(const fs::path& path, const Options& o, const fs::path& dir, const qwen3::ModelConfig& config,
                      const qwen3::Model& model, std::span<const std::int32_t> prompt, double load_seconds,
                      double warm_up_seconds, const qwen3::GenerationResult& r) {
  const nlohmann::json stats = {
      {"shape", o.synthetic.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.synthetic)},
      {"model_dir", dir.string()},
      {"weights_seed", o.weights_seed},
      {"target", tessera::to_string(model.target())},
      {"layers", config.num_hidden_layers},
      {"weight_bytes", model.weights().bytes()},
      {"prompt_tokens", r.prompt_tokens},
      {"new_tokens", r.tokens.size()},
      {"load_s", load_seconds},
      {"warm_up_s", warm_up_seconds},
      {"prefill_s", r.prefill_seconds},
      {"prefill_tokens_per_s", r.prefill_tokens_per_second()},
      {"decode_s", r.decode_seconds},
      {"decode_tokens_per_s", r.decode_tokens_per_second()},
      {"temperature", o.sampling.temperature},
      {"stop", r.stop == qwen3::GenerationResult::Stop::kStopToken ? "stop_token" : "max_tokens"},
      {"prompt_ids", prompt},
      {"tokens", r.tokens}};
  std::ofstream out(path, std::ios::binary);
  out << stats.dump() << '\n';
  if (!out.flush()) throw qwen3::Error(fmt::format("{}: cannot write the --stats-json file", path.string()));
}

// What both commands load: the tokenizer of the model folder (or of the default folder with
// --synthetic), the config and the weight source: the checkpoint's files, or the synthetic
// generator (--synthetic, --layers, --weights-seed). Not copyable: the source refers to the files.
struct ModelInputs {
  fs::path dir;
  qwen3::Tokenizer tokenizer;
  qwen3::ModelConfig config;
  std::optional<qwen3::ModelWeights> files;
  std::optional<qwen3::WeightSource> source;

  ModelInputs(const std::string& model_dir, const std::string& synthetic, std::int64_t layers,
              std::uint64_t weights_seed)
      : dir(model_dir.empty() ? fs::path(QWEN3_TOKENIZER_DIR) : fs::path(model_dir)), tokenizer(load_tokenizer(dir)) {
    if (!synthetic.empty()) {
      config = qwen3::qwen3_preset(synthetic);
      if (layers > 0) config.num_hidden_layers = layers;
      source = qwen3::WeightSource::synthetic(weights_seed);
    } else {
      config = qwen3::load_model_config(dir);
      files.emplace(qwen3::ModelWeights::open(dir));
      source = qwen3::WeightSource::checkpoint(*files, config);
    }
  }
  ModelInputs(const ModelInputs&) = delete;
  ModelInputs& operator=(const ModelInputs&) = delete;

 private:
  static qwen3::Tokenizer load_tokenizer(const fs::path& dir) {
    const fs::path file = dir / "tokenizer.json";
    if (!fs::exists(file))
      throw qwen3::Error(fmt::format("{}: no tokenizer.json (give --model DIR holding one)", dir.string()));
    return qwen3::Tokenizer::from_file(file);
  }
};

int run(const Options& o) {
  const ModelInputs inputs(o.model_dir, o.synthetic, o.layers, o.weights_seed);
  const fs::path& dir = inputs.dir;
  const qwen3::Tokenizer& tokenizer = inputs.tokenizer;
  const qwen3::ModelConfig& config = inputs.config;
  const std::optional<qwen3::WeightSource>& source = inputs.source;
  qwen3::check_sampling_params(o.sampling);
  if (!o.stats_json.empty() && !std::ofstream(o.stats_json, std::ios::app))  // before the run, not after it
    throw qwen3::Error(fmt::format("{}: cannot write the --stats-json file", o.stats_json));

  const std::string user_text = o.prompt.empty() ? "The quick brown fox jumps over the lazy dog. " : o.prompt;
  std::string text = user_text;
  if (o.chat) {
    const qwen3::ChatMessage message{"user", user_text, std::nullopt};
    qwen3::ChatOptions chat;
    chat.enable_thinking = o.think;
    text = qwen3::render_chat(std::span(&message, 1), chat);
  }
  std::vector<std::int32_t> prompt = tokenizer.encode(text);
  if (prompt.empty()) throw qwen3::Error("the prompt encodes to no tokens");
  if (o.prompt_tokens > 0) {  // --prompt-tokens N: the ids repeated, then cut to N
    const std::vector<std::int32_t> encoded = prompt;
    prompt.resize(static_cast<std::size_t>(o.prompt_tokens));
    for (std::size_t i = encoded.size(); i < prompt.size(); ++i) prompt[i] = encoded[i % encoded.size()];
  }

  qwen3::EngineOptions engine;
  engine.target = o.target;
  engine.attention_programs = o.attention_programs;
  engine.fused_attention_positions = o.fused_attention_positions;
  engine.short_attention_positions = o.short_attention_positions;
  engine.split_prefetch = o.split_prefetch;
  engine.product_threads = o.product_threads;
  engine.stream_stages = o.stream_stages;
  engine.split_k = o.split_k;
  engine.early_weight_steps = o.early_weight_steps;
  engine.norm_product_occupancy = o.norm_occupancy;
  engine.residual_product_occupancy = o.residual_occupancy;
  engine.residual_product_threads = o.residual_threads;
  engine.prefill_split_k = o.prefill_split_k;
  engine.compile_jobs = o.compile_jobs;
  engine.context_limit = o.context > 0 ? o.context : static_cast<std::int64_t>(prompt.size()) + o.max_new_tokens;
  qwen3::check_fits_context(static_cast<std::int64_t>(prompt.size()), o.max_new_tokens, engine.context_limit);
  if (engine.context_limit > config.max_position_embeddings)
    throw qwen3::ContextLimitError(
        fmt::format("a context of {} positions is more than the model's {} "
                    "(max_position_embeddings)",
                    engine.context_limit, config.max_position_embeddings));
  const auto start = std::chrono::steady_clock::now();
  qwen3::Model model(config, *source, engine);
  const auto loaded = std::chrono::steady_clock::now();
  qwen3::Sampler sampler(config.vocab_size, o.sampling, model.target());
  sampler.warm_up(model.warm_up(sampler.pending_compiles(model.logits())));
  const auto warm = std::chrono::steady_clock::now();
  std::cerr << fmt::format("tessera-qwen3: weights loaded in {:.2f} s ({:.2f} GB), kernels compiled in {:.2f} s\n",
                           std::chrono::duration<double>(loaded - start).count(), model.weights().bytes() / 1e9,
                           std::chrono::duration<double>(warm - loaded).count());
  qwen3::GenerateOptions generate;
  generate.max_new_tokens = o.max_new_tokens;
  generate.stop_tokens = qwen3::default_stop_tokens(config, &tokenizer);

  const qwen3::GenerationResult r = qwen3::generate(model, sampler, prompt, generate, [&](std::int32_t token) {
    if (std::find(generate.stop_tokens.begin(), generate.stop_tokens.end(), token) != generate.stop_tokens.end())
      return;
    std::cout << tokenizer.token_bytes(token) << std::flush;
  });
  std::cout << '\n' << std::flush;
  std::cerr << fmt::format(
      "tessera-qwen3: {} on {}, {} layer{}; prefill: {} tokens in {:.3f} s ({:.2f} tokens/s); decode: {} tokens in "
      "{:.3f} s ({:.2f} tokens/s); stopped by {}\n",
      o.synthetic.empty() ? dir.string() : "synthetic " + o.synthetic, tessera::to_string(model.target()),
      config.num_hidden_layers, config.num_hidden_layers == 1 ? "" : "s", r.prompt_tokens, r.prefill_seconds,
      r.prefill_tokens_per_second(), r.tokens.size() - 1, r.decode_seconds, r.decode_tokens_per_second(),
      r.stop == qwen3::GenerationResult::Stop::kStopToken ? "a stop token" : "the token limit");
  if (!o.stats_json.empty())
    write_stats_json(o.stats_json, o, dir, config, model, prompt, std::chrono::duration<double>(loaded - start).count(),
                     std::chrono::duration<double>(warm - loaded).count(), r);
  return 0;
}

// ---- tessera-qwen3 serve: the OpenAI-style HTTP server (server.h) ----
//
//   tessera-qwen3 serve --model DIR [--port P] [--host H] [--synthetic SHAPE] [--weights-seed S]
//                       [--layers N] [--context N] [--target T] [--temperature T] [--top-k K]
//                       [--top-p P] [--seed S] [--max-new-tokens N] [--no-think] [--model-id NAME]
//                       [--no-prefix-cache]
// The model options are the generator's. --context is the KV cache's positions, shared by the
// prompt and the answer of each request (default 4096, clamped to max_position_embeddings).
// The sampling options, --max-new-tokens and --no-think are the defaults of requests that do not
// set them (without --seed a request without a seed gets a random one; without --max-new-tokens
// a generation may run to the context limit). --host defaults to 127.0.0.1 (give 0.0.0.0 to
// answer other machines), --port to 8080; --model-id names the model in responses (default: the
// folder's name, or qwen3-SHAPE-synthetic). --no-prefix-cache prefills every prompt whole instead
// of only its part past the prefix the KV cache holds from the previous request (server.h).

struct ServeOptions {
  std::string model_dir, synthetic, host = "127.0.0.1", model_id;
  std::int64_t port = 8080, layers = 0, context = 4096;
  std::uint64_t weights_seed = 0;
  std::optional<tessera::Target> target;
  qwen3::ServerOptions server;
};

int serve_usage(const std::string& problem) {
  std::cerr << "tessera-qwen3 serve: " << problem << "\n"
            << "usage: tessera-qwen3 serve --model DIR [--port P] [--host H] [--synthetic SHAPE] [--weights-seed S]\n"
               "                           [--layers N] [--context N] [--target cpu|sm_90|...] [--temperature T]\n"
               "                           [--top-k K] [--top-p P] [--seed S] [--max-new-tokens N] [--no-think]\n"
               "                           [--model-id NAME] [--no-prefix-cache]\n";
  return 2;
}

// Parses serve's options (argv[0] is "serve") into `o`; returns an error message, or empty.
std::string parse_serve(int argc, char** argv, ServeOptions& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--no-think") {
      o.server.enable_thinking = false;
      continue;
    }
    if (arg == "--no-prefix-cache") {
      o.server.prefix_cache = false;
      continue;
    }
    if (i + 1 >= argc) return arg + " needs a value";
    const std::string v = argv[++i];
    std::int64_t n = 0;
    double x = 0;
    if (arg == "--model")
      o.model_dir = v;
    else if (arg == "--synthetic")
      o.synthetic = v;
    else if (arg == "--host" && !v.empty())
      o.host = v;
    else if (arg == "--model-id" && !v.empty())
      o.model_id = v;
    else if (arg == "--port" && integer(v, n) && n >= 0 && n <= 65535)
      o.port = n;
    else if (arg == "--max-new-tokens" && integer(v, n) && n >= 1)
      o.server.max_tokens = n;
    else if (arg == "--temperature" && number(v, x))
      o.server.sampling.temperature = x;
    else if (arg == "--top-k" && integer(v, n))
      o.server.sampling.top_k = n;
    else if (arg == "--top-p" && number(v, x))
      o.server.sampling.top_p = x;
    else if (arg == "--seed" && integer(v, n) && n >= 0)
      o.server.seed = static_cast<std::uint64_t>(n);
    else if (arg == "--weights-seed" && integer(v, n) && n >= 0)
      o.weights_seed = static_cast<std::uint64_t>(n);
    else if (arg == "--layers" && integer(v, n) && n >= 1)
      o.layers = n;
    else if (arg == "--context" && integer(v, n) && n >= 1)
      o.context = n;
    else if (arg == "--target") {
      o.target = parse_target(v);
      if (!o.target) return "unknown target '" + v + "' (cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120)";
    } else
      return "bad option or value: " + arg + " " + v;
  }
  if (o.model_dir.empty() && o.synthetic.empty()) return "--model DIR (or --synthetic SHAPE) is required";
  return "";
}

int serve(ServeOptions o) {
  const ModelInputs inputs(o.model_dir, o.synthetic, o.layers, o.weights_seed);
  const fs::path& dir = inputs.dir;
  const qwen3::Tokenizer& tokenizer = inputs.tokenizer;
  const qwen3::ModelConfig& config = inputs.config;
  const std::optional<qwen3::WeightSource>& source = inputs.source;
  qwen3::check_sampling_params(o.server.sampling);
  if (o.model_id.empty())
    o.model_id = o.synthetic.empty() ? fs::absolute(dir).lexically_normal().filename().string()
                                     : "qwen3-" + o.synthetic + "-synthetic";
  if (o.model_id.empty()) o.model_id = "qwen3";
  o.server.model_id = o.model_id;
  o.server.log = &std::cerr;

  qwen3::EngineOptions engine;
  engine.target = o.target;
  engine.context_limit = std::min(o.context, config.max_position_embeddings);
  if (engine.context_limit < o.context)
    std::cerr << fmt::format("tessera-qwen3 serve: --context {} clamped to the model's {} positions\n", o.context,
                             engine.context_limit);
  const auto start = std::chrono::steady_clock::now();
  qwen3::Model model(config, *source, engine);
  const auto loaded = std::chrono::steady_clock::now();
  // Compile every kernel before the first request: the step, and greedy and random sampling.
  qwen3::Sampler greedy(config.vocab_size, qwen3::SamplingParams{}, model.target());
  qwen3::Sampler random(config.vocab_size, qwen3::SamplingParams{1.0, 0, 1.0, 0}, model.target());
  std::vector<tessera::PendingCompile> sampling = greedy.pending_compiles(model.logits());
  for (tessera::PendingCompile& c : random.pending_compiles(model.logits())) sampling.push_back(std::move(c));
  const tessera::Tensor<float, 1>& logits = model.warm_up(std::move(sampling));
  greedy.warm_up(logits);
  random.warm_up(logits);
  const auto warm = std::chrono::steady_clock::now();

  qwen3::Server server(model, tokenizer, o.server);
  const int port = server.bind(o.host, static_cast<int>(o.port));
  std::cerr << fmt::format(
      "tessera-qwen3 serve: {} on {}, {} layers, context {}; weights loaded in {:.2f} s, kernels compiled in "
      "{:.2f} s; listening on http://{}:{}/v1\n",
      o.model_id, tessera::to_string(model.target()), config.num_hidden_layers, model.context_limit(),
      std::chrono::duration<double>(loaded - start).count(), std::chrono::duration<double>(warm - loaded).count(),
      o.host, port);
  server.run();
  return 0;
}

int serve_main(int argc, char** argv) {
  ServeOptions options;
  if (std::string problem = parse_serve(argc, argv, options); !problem.empty()) return serve_usage(problem);
  try {
    return serve(std::move(options));
  } catch (const std::exception& e) {
    std::cerr << "tessera-qwen3 serve: " << e.what() << '\n';
  }
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "serve") return serve_main(argc - 1, argv + 1);
  Options options;
  if (std::string problem = parse(argc, argv, options); !problem.empty()) return usage(problem);
  try {
    return run(options);
  } catch (const std::exception& e) {  // qwen3::Error, tessera::Error and the standard library's
    std::cerr << "tessera-qwen3: " << e.what() << '\n';
  }
  return 1;
}
