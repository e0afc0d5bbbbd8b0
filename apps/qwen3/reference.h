// reference.h: a plain host implementation of the engine's forward pass, for the tests.
//
// The same model as Model (model.h), written as loops over std::vector, with the weights from the
// same WeightSource. It follows the engine's numerics definition -- f32 activations, bf16 q and
// KV cache (values rounded to bf16 where the engine stores bf16), everything else unrounded --
// but computes each dot product, norm and softmax in double, exactly where the engine uses f32
// and a split-KV online softmax. The difference between the two is then only the engine's f32
// rounding (and its bf16 attention probabilities), which is what the tests bound.
//
// With ReferenceNumerics::kPrefill it follows the matmul prefill's definition instead: the same,
// except that the four GEMM operands of a layer -- the two RMSNorm outputs, the attention output
// and the SwiGLU output -- are rounded to bf16 before their products, and so are the QKV and gate
// products and the residual stream after each add (model.h).
//
// Also the host version of the sampling rule of kernels/sampling.h (sample_rank), and of greedy
// selection (the first index of the largest logit).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model_config.h"
#include "weight_source.h"

namespace qwen3 {

enum class ReferenceNumerics { kDecode, kPrefill };

class ReferenceModel {
 public:
  ReferenceModel(const ModelConfig& config, const WeightSource& source, std::int64_t context,
                 ReferenceNumerics numerics = ReferenceNumerics::kDecode);
  // The logits [vocab] of `token` at `position` (at most the number of positions run so far).
  std::vector<float> step(std::int32_t token, std::int64_t position);
  // Layer `layer`'s K or V cache, [n_kv, context, head_dim], values of bf16 numbers.
  const std::vector<float>& k_cache(std::size_t layer) const { return k_cache_.at(layer); }
  const std::vector<float>& v_cache(std::size_t layer) const { return v_cache_.at(layer); }

 private:
  struct Layer {
    std::vector<float> input_norm, q, k, v, o, q_norm, k_norm, post_norm, gate, up, down;
  };
  ModelConfig config_;
  std::int64_t context_;
  ReferenceNumerics numerics_;
  std::vector<float> embed_, final_norm_, lm_head_;  // lm_head_ empty when tied
  std::vector<Layer> layers_;
  std::vector<std::vector<float>> k_cache_, v_cache_;  // per layer [n_kv, context, head_dim]
  std::vector<float> cos_, sin_;                       // rope_table.h
};

// The index of the first largest value.
std::int64_t argmax_first(std::span<const float> values);

// The rank (in the descending order of `sorted_values`) that sample_topk (kernels/sampling.h)
// picks for the uniform number u.
std::int64_t sample_rank(std::span<const double> sorted_values, double inv_temperature, std::int64_t top_k,
                         double top_p, double u);

}  // namespace qwen3
