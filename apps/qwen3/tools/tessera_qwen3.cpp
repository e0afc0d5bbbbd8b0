// tessera_qwen3.cpp: tessera-qwen3, text generation with a Qwen3 model on tessera.
//
//   tessera-qwen3 --model DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K]
//                 [--top-p P] [--seed S] [--chat] [--no-think] [--synthetic SHAPE]
//                 [--weights-seed S] [--layers N] [--context N] [--target cpu|sm_90|...]
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
// and decode tokens/s (the tokens after it).
// Exit status: 0 done, 1 an error (the message names it), 2 bad command line.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
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
#include "tokenizer.h"
#include "weight_source.h"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string model_dir, prompt, synthetic;
  std::int64_t max_new_tokens = 128, layers = 0, context = 0;
  qwen3::SamplingParams sampling;
  std::uint64_t weights_seed = 0;
  bool chat = false, think = true;
  std::optional<tessera::Target> target;
};

int usage(const std::string& problem) {
  std::cerr << "tessera-qwen3: " << problem << "\n"
            << "usage: tessera-qwen3 --model DIR --prompt TEXT [--max-new-tokens N] [--temperature T] [--top-k K]\n"
               "                     [--top-p P] [--seed S] [--chat] [--no-think] [--synthetic SHAPE]\n"
               "                     [--weights-seed S] [--layers N] [--context N] [--target cpu|sm_90|...]\n";
  return 2;
}

std::optional<tessera::Target> parse_target(const std::string& name) {
  if (name == "cpu") return tessera::Target::cpu;
  for (tessera::Target t : tessera::gpu_targets())
    if (tessera::to_string(t) == name) return t;
  return std::nullopt;
}

// Parses the command line into `o`; returns an error message, or empty.
std::string parse(int argc, char** argv, Options& o) {
  auto integer = [](const std::string& v, std::int64_t& out) {
    char* end = nullptr;
    out = std::strtoll(v.c_str(), &end, 10);
    return !v.empty() && *end == 0;
  };
  auto number = [](const std::string& v, double& out) {
    char* end = nullptr;
    out = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == 0;
  };
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
    else if (arg == "--target") {
      o.target = parse_target(v);
      if (!o.target) return "unknown target '" + v + "' (cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120)";
    } else
      return "bad option or value: " + arg + " " + v;
  }
  if (o.model_dir.empty() && o.synthetic.empty()) return "--model DIR (or --synthetic SHAPE) is required";
  if (o.prompt.empty()) return "--prompt TEXT is required";
  return "";
}

int run(const Options& o) {
  const fs::path dir = o.model_dir.empty() ? fs::path(QWEN3_TOKENIZER_DIR) : fs::path(o.model_dir);
  const fs::path tokenizer_file = dir / "tokenizer.json";
  if (!fs::exists(tokenizer_file))
    throw qwen3::Error(fmt::format("{}: no tokenizer.json (give --model DIR holding one)", dir.string()));
  const qwen3::Tokenizer tokenizer = qwen3::Tokenizer::from_file(tokenizer_file);

  qwen3::ModelConfig config;
  std::optional<qwen3::ModelWeights> files;
  std::optional<qwen3::WeightSource> source;
  if (!o.synthetic.empty()) {
    config = qwen3::qwen3_preset(o.synthetic);
    if (o.layers > 0) config.num_hidden_layers = o.layers;
    source = qwen3::WeightSource::synthetic(o.weights_seed);
  } else {
    config = qwen3::load_model_config(dir);
    files.emplace(qwen3::ModelWeights::open(dir));
    source = qwen3::WeightSource::checkpoint(*files, config);
  }
  qwen3::check_sampling_params(o.sampling);

  std::string text = o.prompt;
  if (o.chat) {
    const qwen3::ChatMessage message{"user", o.prompt, std::nullopt};
    qwen3::ChatOptions chat;
    chat.enable_thinking = o.think;
    text = qwen3::render_chat(std::span(&message, 1), chat);
  }
  const std::vector<std::int32_t> prompt = tokenizer.encode(text);
  if (prompt.empty()) throw qwen3::Error("the prompt encodes to no tokens");

  qwen3::EngineOptions engine;
  engine.target = o.target;
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
  sampler.warm_up(model.warm_up());
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
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (std::string problem = parse(argc, argv, options); !problem.empty()) return usage(problem);
  try {
    return run(options);
  } catch (const qwen3::Error& e) {
    std::cerr << "tessera-qwen3: " << e.what() << '\n';
  } catch (const tessera::Error& e) {
    std::cerr << "tessera-qwen3: " << e.what() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "tessera-qwen3: " << e.what() << '\n';
  }
  return 1;
}
