// make_synthetic.cpp: qwen3-make-synthetic, writes a Qwen3 model folder with random weights.
//
//   qwen3-make-synthetic --shape 0.6B|1.7B|4B|8B|14B|32B|tiny --out DIR [--seed S] [--layers N]
//                        [--tokenizer DIR]
// Writes DIR/config.json and DIR/model.safetensors with the real shapes (model_presets.h) and the
// reproducible random bf16 weights of synthetic_model.h, then copies tokenizer.json and
// tokenizer_config.json from --tokenizer (default: the folder CMake was given, when it exists).
// --layers keeps the real widths with fewer layers (for correctness runs). The written folder is
// read back and checked against the config before the tool reports success. Sizes: tiny ~10 MB,
// 0.6B 1.2 GB, 4B 8 GB, 8B 16 GB.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "errors.h"
#include "model_presets.h"
#include "model_weights.h"
#include "synthetic_model.h"

namespace fs = std::filesystem;

namespace {

int usage() {
  std::cerr << fmt::format(
      "usage: qwen3-make-synthetic --shape {} --out DIR [--seed S] [--layers N] [--tokenizer DIR]\n",
      fmt::join(qwen3::qwen3_preset_names(), "|"));
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string shape, out, tokenizer_dir = QWEN3_TOKENIZER_DIR;
  std::uint64_t seed = 0;
  long layers = 0;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc) return usage();
    std::string value = argv[++i];
    char* end = nullptr;
    if (arg == "--shape") {
      shape = value;
    } else if (arg == "--out") {
      out = value;
    } else if (arg == "--tokenizer") {
      tokenizer_dir = value;
    } else if (arg == "--seed") {
      seed = std::strtoull(value.c_str(), &end, 10);
      if (value.empty() || *end) return usage();
    } else if (arg == "--layers") {
      layers = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end || layers <= 0) return usage();
    } else {
      return usage();
    }
  }
  if (shape.empty() || out.empty()) return usage();
  try {
    qwen3::ModelConfig config = qwen3::qwen3_preset(shape);
    if (layers > 0) config.num_hidden_layers = layers;
    auto start = std::chrono::steady_clock::now();
    qwen3::write_synthetic_model(out, config, seed);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    qwen3::ModelConfig reread = qwen3::load_model_config(out);
    qwen3::check_weights(qwen3::ModelWeights::open(out), reread);
    std::cout << fmt::format("qwen3-make-synthetic: {} ({} layers, {:.3f} B parameters, seed {}) -> {} in {:.1f} s\n",
                             shape, config.num_hidden_layers, qwen3::parameter_count(config) / 1e9, seed, out, seconds);

    int copied = 0;
    for (const char* name : {"tokenizer.json", "tokenizer_config.json"}) {
      fs::path from = fs::path(tokenizer_dir) / name;
      if (!fs::exists(from)) continue;
      fs::copy_file(from, fs::path(out) / name, fs::copy_options::overwrite_existing);
      // The source may be read-only (shared/ is); the copy must stay overwritable by the next run.
      fs::permissions(fs::path(out) / name, fs::perms::owner_write, fs::perm_options::add);
      ++copied;
    }
    if (copied == 2)
      std::cout << fmt::format("qwen3-make-synthetic: tokenizer files copied from {}\n", tokenizer_dir);
    else
      std::cout << fmt::format("qwen3-make-synthetic: note: {} of tokenizer.json and tokenizer_config.json found in "
                               "'{}' and copied (give --tokenizer DIR)\n",
                               copied, tokenizer_dir);
  } catch (const qwen3::Error& e) {
    std::cerr << "qwen3-make-synthetic: " << e.what() << '\n';
    return 1;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "qwen3-make-synthetic: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
