// weight_source.h: where the engine's bf16 weights come from: a checkpoint folder, or the
// synthetic generator (synthetic_model.h) computing them in place, so that any preset -- 32B
// included -- runs without writing files.
//
// read() gives elements [first, first + out.size()) of a tensor, row-major, as bf16 bits, by the
// Hugging Face name and shape of expected_tensors(). A checkpoint source checks every tensor of
// the config when it is made (check_weights: missing tensor, wrong shape, a dtype other than bf16
// are ModelErrors naming the file and the tensor), so read() only copies. A synthetic source is
// the pure function of (seed, name, index) that qwen3-make-synthetic writes into files: the two
// sources give identical weights for one seed. Both are safe to read from several threads.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "model_config.h"
#include "model_weights.h"

namespace qwen3 {

class WeightSource {
 public:
  // `weights` must outlive the source (its tensors point into the mapped files).
  static WeightSource checkpoint(const ModelWeights& weights, const ModelConfig& config);
  static WeightSource synthetic(std::uint64_t seed);

  void read(std::string_view name, std::span<const std::int64_t> shape, std::uint64_t first,
            std::span<std::uint16_t> out) const;
  bool is_synthetic() const { return weights_ == nullptr; }

 private:
  const ModelWeights* weights_ = nullptr;
  std::uint64_t seed_ = 0;
};

}  // namespace qwen3
