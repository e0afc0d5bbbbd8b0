// model_presets.cpp: the table of model_presets.h.
#include "model_presets.h"

#include <fmt/format.h>

#include "errors.h"
#include "model_weights.h"

namespace qwen3 {
namespace {

struct Preset {
  const char* name;
  std::int64_t hidden, intermediate, layers, heads, kv_heads;
  bool tied;
};
constexpr Preset kPresets[] = {
    {"tiny", 32, 96, 2, 2, 1, true},          {"0.6B", 1024, 3072, 28, 16, 8, true},
    {"1.7B", 2048, 6144, 28, 16, 8, true},    {"4B", 2560, 9728, 36, 32, 8, true},
    {"8B", 4096, 12288, 36, 32, 8, false},    {"14B", 5120, 17408, 40, 40, 8, false},
    {"32B", 5120, 25600, 64, 64, 8, false},
};

}  // namespace

ModelConfig qwen3_preset(std::string_view name) {
  for (const Preset& p : kPresets) {
    if (name != p.name) continue;
    ModelConfig c;
    c.hidden_size = p.hidden;
    c.intermediate_size = p.intermediate;
    c.num_hidden_layers = p.layers;
    c.num_attention_heads = p.heads;
    c.num_key_value_heads = p.kv_heads;
    c.head_dim = 128;
    c.vocab_size = 151936;
    c.max_position_embeddings = 40960;
    c.rms_norm_eps = 1e-6;
    c.rope_theta = 1'000'000;
    c.tie_word_embeddings = p.tied;
    c.bos_token_id = 151643;
    c.eos_token_ids = {151645};
    return c;
  }
  throw Error(fmt::format("unknown model shape '{}' (known: {})", name, fmt::join(qwen3_preset_names(), ", ")));
}

std::vector<std::string> qwen3_preset_names() {
  std::vector<std::string> names;
  for (const Preset& p : kPresets) names.emplace_back(p.name);
  return names;
}

std::int64_t parameter_count(const ModelConfig& config) {
  std::int64_t n = 0;
  for (const ExpectedTensor& t : expected_tensors(config)) {
    std::int64_t size = 1;
    for (std::int64_t d : t.shape) size *= d;
    n += size;
  }
  return n;
}

}  // namespace qwen3
