// test_model_config.cpp: config.json parsing (both rope_theta forms, defaults, rejected settings)
// and the presets' parameter counts against shared/notes/qwen3-decode.md.
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "errors.h"
#include "model_config.h"
#include "model_presets.h"
#include "test_files.h"

using qwen3::ModelConfig;
using qwen3::ModelError;
using Kind = qwen3::ModelError::Kind;
using nlohmann::json;

namespace {

// Qwen3-0.6B's config.json as transformers 4.51 wrote it.
const char* kQwen3_06B = R"({
  "architectures": ["Qwen3ForCausalLM"], "attention_bias": false, "attention_dropout": 0.0,
  "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 128, "hidden_act": "silu",
  "hidden_size": 1024, "initializer_range": 0.02, "intermediate_size": 3072,
  "max_position_embeddings": 40960, "max_window_layers": 28, "model_type": "qwen3",
  "num_attention_heads": 16, "num_hidden_layers": 28, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "rope_scaling": null, "rope_theta": 1000000, "sliding_window": null, "tie_word_embeddings": true,
  "torch_dtype": "bfloat16", "transformers_version": "4.51.0", "use_cache": true,
  "use_sliding_window": false, "vocab_size": 151936})";

// A 4B "2507" config as transformers 5.x writes it: rope_parameters, dtype, eos as a list.
const char* kQwen3_4B_v5 = R"({
  "architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "dtype": "bfloat16",
  "bos_token_id": 151643, "eos_token_id": [151645, 151643], "head_dim": 128, "hidden_size": 2560,
  "intermediate_size": 9728, "max_position_embeddings": 262144, "num_attention_heads": 32,
  "num_hidden_layers": 36, "num_key_value_heads": 8, "rms_norm_eps": 1e-06,
  "rope_parameters": {"rope_type": "default", "rope_theta": 5000000}, "tie_word_embeddings": true,
  "vocab_size": 151936})";

Kind kind_of(const std::string& text) {
  try {
    qwen3::parse_model_config(text, "config.json");
  } catch (const ModelError& e) {
    return e.kind();
  }
  FAIL("no error for " << text);
  return Kind::kMalformed;
}

std::string edited(const char* base, const std::function<void(json&)>& edit) {
  json j = json::parse(base);
  edit(j);
  return j.dump();
}

}  // namespace

TEST_CASE("config: transformers 4.x, top-level rope_theta", "[config]") {
  ModelConfig c = qwen3::parse_model_config(kQwen3_06B, "config.json");
  CHECK(c.hidden_size == 1024);
  CHECK(c.intermediate_size == 3072);
  CHECK(c.num_hidden_layers == 28);
  CHECK(c.num_attention_heads == 16);
  CHECK(c.num_key_value_heads == 8);
  CHECK(c.head_dim == 128);
  CHECK(c.q_width() == 2048);  // != hidden: head_dim is explicit
  CHECK(c.gqa_group() == 2);
  CHECK(c.vocab_size == 151936);
  CHECK(c.max_position_embeddings == 40960);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 1e6);
  CHECK(c.tie_word_embeddings);
  CHECK(c.bos_token_id == 151643);
  CHECK(c.eos_token_ids == std::vector<std::int32_t>{151645});
  CHECK(c.dtype == "bfloat16");
}

TEST_CASE("config: transformers 5.x, rope_parameters", "[config]") {
  ModelConfig c = qwen3::parse_model_config(kQwen3_4B_v5, "config.json");
  CHECK(c.rope_theta == 5e6);
  CHECK(c.max_position_embeddings == 262144);
  CHECK(c.eos_token_ids == std::vector<std::int32_t>{151645, 151643});
  CHECK(c.gqa_group() == 4);
  // Both forms present and equal is fine; different is an error naming both.
  CHECK(qwen3::parse_model_config(edited(kQwen3_4B_v5, [](json& j) { j["rope_theta"] = 5e6; }), "c").rope_theta == 5e6);
  CHECK_THROWS_WITH(qwen3::parse_model_config(edited(kQwen3_4B_v5, [](json& j) { j["rope_theta"] = 1e6; }), "c"),
                    Catch::Contains("differ"));
}

TEST_CASE("config: defaults and errors", "[config]") {
  ModelConfig c = qwen3::parse_model_config(edited(kQwen3_06B, [](json& j) {
                                              j.erase("head_dim");
                                              j.erase("num_key_value_heads");
                                              j["bos_token_id"] = nullptr;
                                            }),
                                            "c");
  CHECK(c.head_dim == 64);  // 1024 / 16
  CHECK(c.num_key_value_heads == 16);
  CHECK_FALSE(c.bos_token_id.has_value());

  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j.erase("rope_theta"); })) == Kind::kMalformed);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j.erase("hidden_size"); })) == Kind::kMalformed);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["hidden_size"] = "big"; })) == Kind::kMalformed);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["num_key_value_heads"] = 3; })) == Kind::kMalformed);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["tie_word_embeddings"] = "yes"; })) == Kind::kMalformed);
  CHECK(kind_of("{\"hidden_size\": ") == Kind::kMalformed);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 4.0}}; })) ==
        Kind::kUnsupported);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["attention_bias"] = true; })) == Kind::kUnsupported);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["hidden_act"] = "gelu"; })) == Kind::kUnsupported);
  CHECK(kind_of(edited(kQwen3_06B, [](json& j) { j["model_type"] = "qwen3_moe"; })) == Kind::kUnsupported);
  CHECK_THROWS_WITH(qwen3::parse_model_config(edited(kQwen3_06B, [](json& j) { j.erase("vocab_size"); }), "m/config.json"),
                    Catch::Contains("m/config.json: missing \"vocab_size\""));
  CHECK_THROWS_WITH(qwen3::parse_model_config(edited(kQwen3_06B, [](json& j) { j["attention_bias"] = true; }), "c"),
                    Catch::Contains("\"attention_bias\": true is not supported"));

  std::filesystem::path dir = qwen3::test::scratch_dir("config_missing");
  try {
    qwen3::load_model_config(dir);
    FAIL("no error");
  } catch (const ModelError& e) {
    CHECK(e.kind() == Kind::kMissingFile);
    CHECK_THAT(e.what(), Catch::Contains((dir / "config.json").string()));
  }
}

TEST_CASE("config: written configs read back", "[config]") {
  for (const std::string& name : qwen3::qwen3_preset_names()) {
    CAPTURE(name);
    ModelConfig c = qwen3::qwen3_preset(name);
    ModelConfig back = qwen3::parse_model_config(qwen3::model_config_to_json(c), "written");
    CHECK(back.hidden_size == c.hidden_size);
    CHECK(back.intermediate_size == c.intermediate_size);
    CHECK(back.num_hidden_layers == c.num_hidden_layers);
    CHECK(back.num_attention_heads == c.num_attention_heads);
    CHECK(back.num_key_value_heads == c.num_key_value_heads);
    CHECK(back.head_dim == c.head_dim);
    CHECK(back.rope_theta == c.rope_theta);
    CHECK(back.tie_word_embeddings == c.tie_word_embeddings);
    CHECK(back.eos_token_ids == c.eos_token_ids);
  }
  CHECK_THROWS_WITH(qwen3::qwen3_preset("7B"), Catch::Contains("unknown model shape '7B'") && Catch::Contains("0.6B"));
}

TEST_CASE("presets: parameter counts of the published models", "[config]") {
  // Billions of parameters, from the table in shared/notes/qwen3-decode.md (rounded to 3 decimals).
  for (auto [name, billions] : std::vector<std::pair<std::string, double>>{
           {"0.6B", 0.596}, {"1.7B", 1.721}, {"4B", 4.022}, {"8B", 8.191}, {"14B", 14.768}, {"32B", 32.762}}) {
    CAPTURE(name);
    CHECK(qwen3::parameter_count(qwen3::qwen3_preset(name)) / 1e9 == Approx(billions).margin(0.0006));
  }
}
