// model_config.h: the Qwen3 architecture read from a Hugging Face config.json.
//
// Accepts both ways the RoPE base is written: top-level `rope_theta` (transformers 4.x) and
// `rope_parameters: {"rope_type": "default", "rope_theta": ...}` (transformers 5.x); a file with
// both must agree. `head_dim` defaults to hidden_size / num_attention_heads when absent (it is
// explicit, and different, in Qwen3-0.6B, 4B and 32B). `eos_token_id` may be one id or a list;
// `bos_token_id` may be null. Settings this engine does not implement are ModelError kUnsupported
// naming the field: RoPE scaling other than "default", attention biases, an activation other than
// silu, sliding-window attention, a model_type other than qwen3. Other fields are ignored.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace qwen3 {

struct ModelConfig {
  std::int64_t hidden_size = 0;
  std::int64_t intermediate_size = 0;
  std::int64_t num_hidden_layers = 0;
  std::int64_t num_attention_heads = 0;
  std::int64_t num_key_value_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t vocab_size = 0;
  std::int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 0;
  bool tie_word_embeddings = false;
  std::optional<std::int32_t> bos_token_id;
  std::vector<std::int32_t> eos_token_ids;
  std::string dtype = "bfloat16";  // `dtype` (5.x) or `torch_dtype` (4.x); informative

  std::int64_t q_width() const { return num_attention_heads * head_dim; }
  std::int64_t kv_width() const { return num_key_value_heads * head_dim; }
  std::int64_t gqa_group() const { return num_attention_heads / num_key_value_heads; }
};

// `source` names the text in errors.
ModelConfig parse_model_config(std::string_view json_text, std::string_view source);
// Reads DIR/config.json, or the file itself when given a file.
ModelConfig load_model_config(const std::filesystem::path& dir_or_file);

// A config.json that transformers loads as Qwen3ForCausalLM (top-level rope_theta, as 4.x writes
// it and 5.x still reads).
std::string model_config_to_json(const ModelConfig& config);

}  // namespace qwen3
