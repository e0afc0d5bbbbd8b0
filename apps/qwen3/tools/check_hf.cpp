// check_hf.cpp: qwen3-check-hf, the engine's logits and greedy tokens against Hugging Face
// transformers' (goldens written by tools/hf_reference.py; the comparison is hf_goldens.h's).
//
//   qwen3-check-hf --model DIR [--goldens FILE] [--target cpu|sm_90|...] [--tolerance F]
//                  [--tolerance-bf16-qkv F] [--verbose]
// --model DIR is the checkpoint folder the goldens were computed from (config.json and
// model.safetensors); --goldens FILE its goldens.json (default DIR/goldens.json). The tolerances
// bound max |engine - transformers| as a fraction of the largest |logit| of each position, against
// transformers' float32 logits and against those with bf16 q/k/v (defaults 2^-6 and 2^-8, see
// hf_goldens.h). Prints the worst errors of the teacher-forced positions (each position with
// --verbose, and any that fails), the argmax agreement and how many greedy tokens match.
// Exit status: 0 every position within the tolerance and every greedy token equal, 1 otherwise or
// an error (the message names it), 2 bad command line.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>

#include "errors.h"
#include "hf_goldens.h"
#include "model.h"
#include "model_weights.h"
#include "weight_source.h"

namespace fs = std::filesystem;

namespace {

struct Options {
  std::string model_dir, goldens;
  qwen3::HfTolerances tolerances;
  bool verbose = false;
  std::optional<tessera::Target> target;
};

int usage(const std::string& problem) {
  std::cerr << "qwen3-check-hf: " << problem << "\n"
            << "usage: qwen3-check-hf --model DIR [--goldens FILE] [--target cpu|sm_90|...] [--tolerance F]\n"
               "                      [--tolerance-bf16-qkv F] [--verbose]\n";
  return 2;
}

std::optional<tessera::Target> parse_target(const std::string& name) {
  if (name == "cpu") return tessera::Target::cpu;
  for (tessera::Target t : tessera::gpu_targets())
    if (tessera::to_string(t) == name) return t;
  return std::nullopt;
}

std::string parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--verbose") {
      o.verbose = true;
      continue;
    }
    if (i + 1 >= argc) return arg + " needs a value";
    const std::string v = argv[++i];
    if (arg == "--model") {
      o.model_dir = v;
    } else if (arg == "--goldens") {
      o.goldens = v;
    } else if (arg == "--tolerance" || arg == "--tolerance-bf16-qkv") {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != 0 || !(x > 0)) return arg + " needs a positive number, not " + v;
      (arg == "--tolerance" ? o.tolerances.logits : o.tolerances.logits_bf16_qkv) = x;
    } else if (arg == "--target") {
      o.target = parse_target(v);
      if (!o.target) return "unknown target '" + v + "' (cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120)";
    } else {
      return "bad option: " + arg;
    }
  }
  if (o.model_dir.empty()) return "--model DIR is required";
  if (o.goldens.empty()) o.goldens = (fs::path(o.model_dir) / "goldens.json").string();
  return "";
}

int run(const Options& o) {
  const qwen3::HfGoldens goldens = qwen3::load_hf_goldens(o.goldens);
  const qwen3::ModelConfig config = qwen3::load_model_config(o.model_dir);
  const qwen3::ModelWeights files = qwen3::ModelWeights::open(o.model_dir);
  qwen3::EngineOptions engine;
  engine.target = o.target;
  engine.context_limit = goldens.context_needed();
  qwen3::Model model(config, qwen3::WeightSource::checkpoint(files, config), engine);
  std::cout << fmt::format("{} ({}) on {}: {} layers, vocabulary {}\n", goldens.name, goldens.note,
                           tessera::to_string(model.target()), config.num_hidden_layers, config.vocab_size);

  const qwen3::HfComparison r = qwen3::compare_with_hf(model, goldens, o.tolerances);
  for (std::size_t p = 0; p < r.positions.size(); ++p) {
    const qwen3::HfPositionError& e = r.positions[p];
    if (o.verbose || !r.position_ok(e))
      std::cout << fmt::format(
          "  position {:3}: max |error| {:.2e} of max |logit| {:.3f} ({:.2e} against bf16 q/k/v), "
          "argmax {} vs {} (top-2 gap {:.3f}){}\n",
          p, e.error / e.scale, e.scale, e.error_bf16_qkv / e.scale, e.got_argmax, e.want_argmax, e.gap,
          r.position_ok(e) ? "" : "  FAIL");
  }
  std::cout << fmt::format(
      "teacher-forced logits, {} positions: worst max |error| {:.2e} of the largest |logit| (tolerance {:.2e}), "
      "{:.2e} against bf16 q/k/v (tolerance {:.2e}); argmax equal at {} of {} positions with a clear top-2 gap: {}\n",
      r.positions.size(), r.worst_error(), r.tolerances.logits, r.worst_error_bf16_qkv(), r.tolerances.logits_bf16_qkv,
      r.argmax_agreed(), r.argmax_checked(), r.logits_ok() ? "ok" : "FAIL");
  std::cout << fmt::format("greedy: {} of {} tokens equal to transformers'", r.greedy_matched, r.greedy_expected);
  if (!r.greedy_ok())
    std::cout << fmt::format(
        " (first difference at step {}: {} instead of {}, where transformers' top-2 gap is {:.4f})", r.greedy_matched,
        r.greedy_tokens[r.greedy_matched], goldens.greedy_tokens[r.greedy_matched],
        goldens.greedy_gaps[r.greedy_matched]);
  std::cout << (r.greedy_ok() ? ": ok\n" : ": FAIL\n");
  return r.passed() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (std::string problem = parse(argc, argv, options); !problem.empty()) return usage(problem);
  try {
    return run(options);
  } catch (const std::exception& e) {  // qwen3::Error, tessera::Error and the standard library's
    std::cerr << "qwen3-check-hf: " << e.what() << '\n';
  }
  return 1;
}
