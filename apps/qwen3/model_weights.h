// model_weights.h: a model folder's tensors, from one safetensors file or several (sharded).
//
// open() takes a folder holding model.safetensors, or model.safetensors.index.json whose
// "weight_map" names the shard of every tensor (each shard is opened once and must hold the
// tensors the index puts in it), or a single .safetensors file. Tensors are found by name across
// all files; get() with a dtype and shape checks them. expected_tensors() lists the tensors a
// Qwen3 model of a given config needs, with their shapes, and check_weights() checks a folder
// against that list. Every failure is a ModelError naming the file and the tensor (errors.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model_config.h"
#include "safetensors.h"

namespace qwen3 {

class ModelWeights {
 public:
  static ModelWeights open(const std::filesystem::path& dir_or_file);

  ModelWeights(ModelWeights&&) noexcept;
  ModelWeights& operator=(ModelWeights&&) noexcept;
  ~ModelWeights();

  const TensorInfo* find(std::string_view name) const;
  const TensorInfo& get(std::string_view name) const;  // kMissingTensor when absent
  // Also checks the element type (kWrongDtype) and shape (kWrongShape).
  const TensorInfo& get(std::string_view name, DType dtype, std::span<const std::int64_t> shape) const;

  const std::filesystem::path& location() const { return location_; }
  std::size_t file_count() const { return files_.size(); }
  std::vector<const TensorInfo*> tensors() const;

 private:
  ModelWeights() = default;
  std::filesystem::path location_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::unordered_map<std::string_view, const TensorInfo*> by_name_;
};

struct ExpectedTensor {
  std::string name;
  std::vector<std::int64_t> shape;
};

// model.embed_tokens; per layer input_layernorm, self_attn.{q,k,v,o}_proj, self_attn.{q,k}_norm,
// post_attention_layernorm, mlp.{gate,up,down}_proj; model.norm; lm_head unless tied. Linear
// weights are [out, in].
std::vector<ExpectedTensor> expected_tensors(const ModelConfig& config);

// Throws the first problem: a missing tensor, a wrong dtype, a wrong shape.
void check_weights(const ModelWeights& weights, const ModelConfig& config, DType dtype = DType::kBF16);

}  // namespace qwen3
