// model_config.cpp: config.json <-> ModelConfig, with the checks of model_config.h.
#include "model_config.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "errors.h"

namespace qwen3 {

using nlohmann::json;
using Kind = ModelError::Kind;

namespace {

std::int64_t required_int(const json& j, const char* key, std::string_view source) {
  if (!j.contains(key)) throw ModelError(Kind::kMalformed, fmt::format("{}: missing \"{}\"", source, key));
  if (!j[key].is_number_integer() || j[key].get<std::int64_t>() <= 0)
    throw ModelError(Kind::kMalformed,
                     fmt::format("{}: \"{}\" must be a positive integer, not {}", source, key, j[key].dump()));
  return j[key].get<std::int64_t>();
}

double rope_theta_of(const json& j, std::string_view source) {
  std::optional<double> top, nested;
  if (j.contains("rope_theta") && !j["rope_theta"].is_null()) {
    if (!j["rope_theta"].is_number())
      throw ModelError(Kind::kMalformed, fmt::format("{}: \"rope_theta\" is not a number", source));
    top = j["rope_theta"].get<double>();
  }
  for (const char* key : {"rope_parameters", "rope_scaling"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    const json& p = j[key];
    std::string type = p.is_object() ? p.value("rope_type", p.value("type", std::string("default"))) : "";
    if (type != "default")
      throw ModelError(Kind::kUnsupported, fmt::format("{}: \"{}\" {} is not supported (only rope_type \"default\")",
                                                       source, key, p.dump()));
    if (p.contains("rope_theta")) {
      if (!p["rope_theta"].is_number())
        throw ModelError(Kind::kMalformed, fmt::format("{}: \"{}.rope_theta\" is not a number", source, key));
      nested = p["rope_theta"].get<double>();
    }
  }
  if (top && nested && *top != *nested)
    throw ModelError(Kind::kMalformed, fmt::format("{}: \"rope_theta\" {} and \"rope_parameters.rope_theta\" {} differ",
                                                   source, *top, *nested));
  double theta = nested ? *nested : top ? *top : 0.0;
  if (!(theta > 0) || !std::isfinite(theta))
    throw ModelError(Kind::kMalformed,
                     fmt::format("{}: no positive \"rope_theta\" (top level or in \"rope_parameters\")", source));
  return theta;
}

void reject_unless(const json& j, const char* key, const json& allowed, std::string_view source) {
  if (j.contains(key) && !j[key].is_null() && j[key] != allowed)
    throw ModelError(Kind::kUnsupported, fmt::format("{}: \"{}\": {} is not supported (only {})", source, key,
                                                     j[key].dump(), allowed.dump()));
}

}  // namespace

static ModelConfig parse_fields(const json& j, std::string_view source);

ModelConfig parse_model_config(std::string_view json_text, std::string_view source) {
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!j.is_object()) throw ModelError(Kind::kMalformed, fmt::format("{}: not a JSON object", source));
  try {
    return parse_fields(j, source);
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: a field has the wrong type: {}", source, e.what()));
  }
}

static ModelConfig parse_fields(const json& j, std::string_view source) {
  reject_unless(j, "model_type", "qwen3", source);
  reject_unless(j, "hidden_act", "silu", source);
  reject_unless(j, "attention_bias", false, source);
  reject_unless(j, "use_sliding_window", false, source);

  ModelConfig c;
  c.hidden_size = required_int(j, "hidden_size", source);
  c.intermediate_size = required_int(j, "intermediate_size", source);
  c.num_hidden_layers = required_int(j, "num_hidden_layers", source);
  c.num_attention_heads = required_int(j, "num_attention_heads", source);
  c.num_key_value_heads = j.contains("num_key_value_heads") ? required_int(j, "num_key_value_heads", source)
                                                            : c.num_attention_heads;
  c.head_dim = j.contains("head_dim") && !j["head_dim"].is_null() ? required_int(j, "head_dim", source)
                                                                  : c.hidden_size / c.num_attention_heads;
  c.vocab_size = required_int(j, "vocab_size", source);
  c.max_position_embeddings = required_int(j, "max_position_embeddings", source);
  c.rope_theta = rope_theta_of(j, source);
  if (j.contains("rms_norm_eps")) {
    if (!j["rms_norm_eps"].is_number() || !(j["rms_norm_eps"].get<double>() > 0))
      throw ModelError(Kind::kMalformed, fmt::format("{}: \"rms_norm_eps\" must be a positive number", source));
    c.rms_norm_eps = j["rms_norm_eps"].get<double>();
  }
  c.tie_word_embeddings = j.value("tie_word_embeddings", false);
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw ModelError(Kind::kMalformed,
                     fmt::format("{}: num_attention_heads {} is not a multiple of num_key_value_heads {}", source,
                                 c.num_attention_heads, c.num_key_value_heads));
  if (j.contains("bos_token_id") && !j["bos_token_id"].is_null()) c.bos_token_id = j["bos_token_id"].get<std::int32_t>();
  if (j.contains("eos_token_id") && !j["eos_token_id"].is_null()) {
    const json& eos = j["eos_token_id"];
    if (eos.is_array())
      c.eos_token_ids = eos.get<std::vector<std::int32_t>>();
    else
      c.eos_token_ids.push_back(eos.get<std::int32_t>());
  }
  for (const char* key : {"dtype", "torch_dtype"})
    if (j.contains(key) && j[key].is_string()) c.dtype = j[key].get<std::string>();
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& dir_or_file) {
  std::filesystem::path path =
      std::filesystem::is_directory(dir_or_file) ? dir_or_file / "config.json" : dir_or_file;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(Kind::kMissingFile, fmt::format("{}: cannot open the model config", path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model_config(text.str(), path.string());
}

std::string model_config_to_json(const ModelConfig& c) {
  json eos = c.eos_token_ids.size() == 1 ? json(c.eos_token_ids[0]) : json(c.eos_token_ids);
  json j = {
      {"architectures", {"Qwen3ForCausalLM"}},
      {"model_type", "qwen3"},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"bos_token_id", c.bos_token_id ? json(*c.bos_token_id) : json(nullptr)},
      {"eos_token_id", eos},
      {"head_dim", c.head_dim},
      {"hidden_act", "silu"},
      {"hidden_size", c.hidden_size},
      {"initializer_range", 0.02},
      {"intermediate_size", c.intermediate_size},
      {"max_position_embeddings", c.max_position_embeddings},
      {"max_window_layers", c.num_hidden_layers},
      {"num_attention_heads", c.num_attention_heads},
      {"num_hidden_layers", c.num_hidden_layers},
      {"num_key_value_heads", c.num_key_value_heads},
      {"rms_norm_eps", c.rms_norm_eps},
      {"rope_scaling", nullptr},
      {"rope_theta", c.rope_theta},
      {"sliding_window", nullptr},
      {"tie_word_embeddings", c.tie_word_embeddings},
      {"torch_dtype", c.dtype},
      {"use_cache", true},
      {"use_sliding_window", false},
      {"vocab_size", c.vocab_size},
  };
  return j.dump(2) + "\n";
}

}  // namespace qwen3
