// model_presets.h: the configs of the Qwen3 dense models, by size name, for synthetic models.
//
// "0.6B", "1.7B", "4B", "8B", "14B", "32B" are the published shapes (shared/notes/qwen3-decode.md:
// head_dim 128, vocabulary 151936, rope_theta 1e6, rms_norm_eps 1e-6, 40960 positions, bos
// 151643, eos 151645; 0.6B, 1.7B and 4B tie the LM head to the embedding). "tiny" is a test shape
// with the real vocabulary and head size, so the real tokenizer and head-size-specific kernels
// apply: hidden 32, intermediate 96, 2 layers, 2 query heads, 1 KV head, tied (~10 MB in bf16).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model_config.h"

namespace qwen3 {

// Throws Error naming the known presets for an unknown name.
ModelConfig qwen3_preset(std::string_view name);
std::vector<std::string> qwen3_preset_names();

// Parameters of a config (embedding, layers, final norm, LM head when untied).
std::int64_t parameter_count(const ModelConfig& config);

}  // namespace qwen3
