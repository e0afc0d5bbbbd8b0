// test_models.h: the small model configurations the engine's model and prefill tests share:
// "tiny" (the tiny preset: GQA group 2, tied embeddings, the real vocabulary), "gqa5" (group 5,
// untied, 3 layers, another RoPE theta and norm epsilon) and "mha-long" (group 1).
#pragma once

#include <string>

#include "model_presets.h"

namespace qwen3::test {

inline ModelConfig config_named(const std::string& name) {
  ModelConfig c = qwen3_preset("tiny");
  if (name == "gqa5") {
    c.hidden_size = 64;
    c.intermediate_size = 160;
    c.num_hidden_layers = 3;
    c.num_attention_heads = 10;
    c.num_key_value_heads = 2;
    c.vocab_size = 1000;
    c.tie_word_embeddings = false;
    c.rope_theta = 5e6;
    c.rms_norm_eps = 1e-5;
  } else if (name == "mha-long") {
    c.num_attention_heads = 2;
    c.num_key_value_heads = 2;
    c.vocab_size = 500;
  }
  return c;
}

}  // namespace qwen3::test
