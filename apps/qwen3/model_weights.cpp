// model_weights.cpp: opening single and sharded checkpoints, and the Qwen3 tensor list.
#include "model_weights.h"

#include <fmt/format.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "errors.h"

namespace qwen3 {

using nlohmann::json;
using Kind = ModelError::Kind;

ModelWeights::ModelWeights(ModelWeights&&) noexcept = default;
ModelWeights& ModelWeights::operator=(ModelWeights&&) noexcept = default;
ModelWeights::~ModelWeights() = default;

ModelWeights ModelWeights::open(const std::filesystem::path& dir_or_file) {
  namespace fs = std::filesystem;
  ModelWeights w;
  w.location_ = dir_or_file;
  auto add_file = [&](const fs::path& path) -> const SafetensorsFile& {
    w.files_.push_back(SafetensorsFile::open(path));
    const SafetensorsFile& file = *w.files_.back();
    for (const TensorInfo& t : file.tensors()) {
      auto [it, fresh] = w.by_name_.emplace(t.name, &t);
      if (!fresh)
        throw ModelError(Kind::kMalformed, fmt::format("{}: tensor '{}' is also in {}", path.string(), t.name,
                                                       it->second->file->string()));
    }
    return file;
  };

  if (!fs::is_directory(dir_or_file)) {
    if (!fs::exists(dir_or_file))
      throw ModelError(Kind::kMissingFile, fmt::format("{}: no such file or folder", dir_or_file.string()));
    add_file(dir_or_file);
    return w;
  }
  const fs::path single = dir_or_file / "model.safetensors", index = dir_or_file / "model.safetensors.index.json";
  if (fs::exists(single)) {
    add_file(single);
    return w;
  }
  if (!fs::exists(index))
    throw ModelError(Kind::kMissingFile, fmt::format("{}: neither model.safetensors nor model.safetensors.index.json is "
                                                     "there",
                                                     dir_or_file.string()));
  std::ifstream in(index, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: not valid JSON: {}", index.string(), e.what()));
  }
  if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
    throw ModelError(Kind::kMalformed, fmt::format("{}: no \"weight_map\" object", index.string()));
  std::map<std::string, std::vector<std::string>> by_shard;  // shard -> tensors the index puts there
  for (const auto& [name, shard] : j["weight_map"].items()) {
    if (!shard.is_string() || shard.get<std::string>().find('/') != std::string::npos)
      throw ModelError(Kind::kMalformed, fmt::format("{}: the shard of '{}' is not a file name in the folder: {}",
                                                     index.string(), name, shard.dump()));
    by_shard[shard.get<std::string>()].push_back(name);
  }
  for (const auto& [shard, names] : by_shard) {
    fs::path path = dir_or_file / shard;
    if (!fs::exists(path))
      throw ModelError(Kind::kMissingFile, fmt::format("{}: shard {} named by {} (for '{}' and {} more) is missing",
                                                       path.string(), shard, index.filename().string(), names.front(),
                                                       names.size() - 1));
    const SafetensorsFile& file = add_file(path);
    for (const std::string& name : names)
      if (!file.find(name))
        throw ModelError(Kind::kMissingTensor, fmt::format("{}: no tensor '{}', which {} puts in this shard",
                                                           path.string(), name, index.filename().string()));
  }
  return w;
}

const TensorInfo* ModelWeights::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const TensorInfo& ModelWeights::get(std::string_view name) const {
  if (const TensorInfo* t = find(name)) return *t;
  std::string files;
  for (const auto& f : files_) files += (files.empty() ? "" : ", ") + f->path().filename().string();
  throw ModelError(Kind::kMissingTensor,
                   fmt::format("{}: missing tensor '{}' (in none of: {})", location_.string(), name, files));
}

const TensorInfo& ModelWeights::get(std::string_view name, DType dtype, std::span<const std::int64_t> shape) const {
  const TensorInfo& t = get(name);
  if (t.dtype != dtype)
    throw ModelError(Kind::kWrongDtype, fmt::format("{}: tensor '{}' is {}, expected {}", t.file->string(), name,
                                                    dtype_name(t.dtype), dtype_name(dtype)));
  if (!std::equal(t.shape.begin(), t.shape.end(), shape.begin(), shape.end()))
    throw ModelError(Kind::kWrongShape, fmt::format("{}: tensor '{}' has shape {}, expected [{}]", t.file->string(), name,
                                                    t.shape_string(), fmt::join(shape, ", ")));
  return t;
}

std::vector<const TensorInfo*> ModelWeights::tensors() const {
  std::vector<const TensorInfo*> all;
  for (const auto& f : files_)
    for (const TensorInfo& t : f->tensors()) all.push_back(&t);
  return all;
}

std::vector<ExpectedTensor> expected_tensors(const ModelConfig& c) {
  const std::int64_t h = c.hidden_size, q = c.q_width(), kv = c.kv_width(), ff = c.intermediate_size;
  std::vector<ExpectedTensor> list;
  list.push_back({"model.embed_tokens.weight", {c.vocab_size, h}});
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    list.push_back({p + "input_layernorm.weight", {h}});
    list.push_back({p + "self_attn.q_proj.weight", {q, h}});
    list.push_back({p + "self_attn.k_proj.weight", {kv, h}});
    list.push_back({p + "self_attn.v_proj.weight", {kv, h}});
    list.push_back({p + "self_attn.o_proj.weight", {h, q}});
    list.push_back({p + "self_attn.q_norm.weight", {c.head_dim}});
    list.push_back({p + "self_attn.k_norm.weight", {c.head_dim}});
    list.push_back({p + "post_attention_layernorm.weight", {h}});
    list.push_back({p + "mlp.gate_proj.weight", {ff, h}});
    list.push_back({p + "mlp.up_proj.weight", {ff, h}});
    list.push_back({p + "mlp.down_proj.weight", {h, ff}});
  }
  list.push_back({"model.norm.weight", {h}});
  if (!c.tie_word_embeddings) list.push_back({"lm_head.weight", {c.vocab_size, h}});
  return list;
}

void check_weights(const ModelWeights& weights, const ModelConfig& config, DType dtype) {
  for (const ExpectedTensor& e : expected_tensors(config)) weights.get(e.name, dtype, e.shape);
}

}  // namespace qwen3
