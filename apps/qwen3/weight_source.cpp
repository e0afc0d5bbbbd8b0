// weight_source.cpp: checkpoint and synthetic weight sources.
#include "weight_source.h"

#include <fmt/format.h>

#include <cstring>

#include "errors.h"
#include "synthetic_model.h"

namespace qwen3 {

WeightSource WeightSource::checkpoint(const ModelWeights& weights, const ModelConfig& config) {
  check_weights(weights, config, DType::kBF16);
  WeightSource s;
  s.weights_ = &weights;
  return s;
}

WeightSource WeightSource::synthetic(std::uint64_t seed) {
  WeightSource s;
  s.seed_ = seed;
  return s;
}

void WeightSource::read(std::string_view name, std::span<const std::int64_t> shape, std::uint64_t first,
                        std::span<std::uint16_t> out) const {
  if (!weights_) {
    fill_synthetic_bf16(seed_, name, shape, first, out);
    return;
  }
  const TensorInfo& t = weights_->get(name, DType::kBF16, shape);
  const std::uint64_t count = t.data.size() / 2;
  if (first > count || out.size() > count - first)
    throw Error(fmt::format("{}: elements [{}, {}) of tensor '{}' requested, it has {}", t.file->string(), first,
                            first + out.size(), name, count));
  // safetensors data is little-endian, as is every machine this runs on (x86-64, aarch64).
  std::memcpy(out.data(), t.data.data() + 2 * first, 2 * out.size());
}

}  // namespace qwen3
