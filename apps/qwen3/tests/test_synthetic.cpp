// test_synthetic.cpp: the synthetic-model writer on the tiny shape: the folder loads and matches
// its config, the values follow the rule of synthetic_model.h, and check_weights catches a folder
// that does not fit the config.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "errors.h"
#include "model_presets.h"
#include "model_weights.h"
#include "synthetic_model.h"
#include "test_files.h"

using qwen3::DType;
using qwen3::ModelConfig;
using qwen3::ModelWeights;
using Kind = qwen3::ModelError::Kind;

namespace {

std::vector<float> values_of(const qwen3::TensorInfo& t) {
  std::vector<std::uint16_t> bits(t.data.size() / 2);
  std::memcpy(bits.data(), t.data.data(), t.data.size());
  std::vector<float> v;
  for (std::uint16_t b : bits) v.push_back(qwen3::bf16_to_float(b));
  return v;
}

}  // namespace

TEST_CASE("bf16 rounding", "[synthetic]") {
  CHECK(qwen3::float_to_bf16(1.0f) == 0x3F80);
  CHECK(qwen3::float_to_bf16(-2.0f) == 0xC000);
  CHECK(qwen3::float_to_bf16(1.0f + 0x1p-8f) == 0x3F80);          // halfway: to even
  CHECK(qwen3::float_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3F82);      // halfway: to even (up)
  CHECK(qwen3::float_to_bf16(1.0f + 0x1p-8f + 0x1p-20f) == 0x3F81);
  CHECK(qwen3::bf16_to_float(0x3F81) == 1.0f + 0x1p-7f);
  CHECK(std::isnan(qwen3::bf16_to_float(qwen3::float_to_bf16(NAN))));
}

TEST_CASE("synthetic tiny model: loads, fits its config, follows the rule", "[synthetic]") {
  std::filesystem::path dir = qwen3::test::scratch_dir("synthetic_tiny");
  ModelConfig config = qwen3::qwen3_preset("tiny");
  qwen3::write_synthetic_model(dir, config, 7, 2);
  ModelConfig read = qwen3::load_model_config(dir);
  CHECK(read.hidden_size == 32);
  CHECK(read.head_dim == 128);
  CHECK(read.tie_word_embeddings);
  ModelWeights w = ModelWeights::open(dir);
  qwen3::check_weights(w, read);
  CHECK(w.tensors().size() == qwen3::expected_tensors(config).size());
  CHECK(std::filesystem::file_size(dir / "model.safetensors") > 2 * static_cast<std::uintmax_t>(qwen3::parameter_count(config)));

  // Norm weights are within 1/16 of 1; linears within sqrt(3/in), with standard deviation 1/sqrt(in).
  for (float v : values_of(w.get("model.layers.1.self_attn.k_norm.weight"))) CHECK(std::abs(v - 1.0f) <= 1.0f / 16 + 1e-3f);
  std::vector<float> q = values_of(w.get("model.layers.0.self_attn.q_proj.weight"));  // [256, 32]
  double sum2 = 0;
  for (float v : q) {
    CHECK(std::abs(v) <= std::sqrt(3.0f / 32) * 1.004f);
    sum2 += double(v) * v;
  }
  CHECK(std::sqrt(sum2 / q.size()) == Approx(1 / std::sqrt(32.0)).epsilon(0.05));

  // Values are the pure function of (seed, name, index): any slice can be recomputed alone.
  const qwen3::TensorInfo& down = w.get("model.layers.1.mlp.down_proj.weight");
  std::vector<std::uint16_t> slice(100);
  qwen3::fill_synthetic_bf16(7, down.name, down.shape, 1000, slice);
  CHECK(std::memcmp(slice.data(), down.data.data() + 2000, 200) == 0);
  qwen3::fill_synthetic_bf16(8, down.name, down.shape, 1000, slice);
  CHECK(std::memcmp(slice.data(), down.data.data() + 2000, 200) != 0);
}

TEST_CASE("check_weights: a folder that does not fit the config", "[synthetic]") {
  std::filesystem::path dir = qwen3::test::scratch_dir("synthetic_mismatch");
  ModelConfig config = qwen3::qwen3_preset("tiny");
  config.vocab_size = 1000;  // small, for speed
  qwen3::write_synthetic_model(dir, config, 1, 1);
  ModelWeights w = ModelWeights::open(dir);

  ModelConfig untied = config;
  untied.tie_word_embeddings = false;
  try {
    qwen3::check_weights(w, untied);
    FAIL("no error");
  } catch (const qwen3::ModelError& e) {
    CHECK(e.kind() == Kind::kMissingTensor);
    CHECK_THAT(e.what(), Catch::Contains("missing tensor 'lm_head.weight'"));
  }
  ModelConfig wider = config;
  wider.intermediate_size = 128;
  try {
    qwen3::check_weights(w, wider);
    FAIL("no error");
  } catch (const qwen3::ModelError& e) {
    CHECK(e.kind() == Kind::kWrongShape);
    CHECK_THAT(e.what(), Catch::Contains("'model.layers.0.mlp.gate_proj.weight' has shape [96, 32], expected [128, 32]"));
  }
  ModelConfig more_layers = config;
  more_layers.num_hidden_layers = 3;
  CHECK_THROWS_WITH(qwen3::check_weights(w, more_layers), Catch::Contains("model.layers.2.input_layernorm.weight"));
  CHECK_THROWS_WITH(qwen3::check_weights(w, config, DType::kF16), Catch::Contains("is BF16, expected F16"));
}
