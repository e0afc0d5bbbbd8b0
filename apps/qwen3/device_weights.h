// device_weights.h: a Qwen3 model's weights as device-resident tessera tensors.
//
// Every tensor is bf16, [out, in] for linear weights as Hugging Face stores them. Two sibling
// projections are concatenated along their rows when uploaded, so that one matrix-vector product
// reads them: `qkv` is q_proj, k_proj and v_proj stacked ([q_width + 2 kv_width, hidden]). Gate
// and up stay apart (the SwiGLU kernel reads both in one pass). A tied model has no lm_head: the
// LM head is the embedding table (head()).
//
// load() fills the tensors from a WeightSource through small host staging tensors (8 MB, two per
// row width, alternating so that one is filled while the other is copied) and a copy kernel
// (kernels/weight_copy.h) into row ranges of each tensor: on a GPU the weights are written only by
// kernels, so they never take host memory and a 32B model (61 GiB) needs none. Source values for
// a staging buffer are produced by up to `threads` host threads (the synthetic generator is the
// slow part). On the CPU target the same path runs, into host memory.
#pragma once

#include <tessera/tessera.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "model_config.h"
#include "weight_source.h"

namespace qwen3 {

struct LayerWeights {
  tessera::Tensor<tessera::bfloat16, 1> input_norm, q_norm, k_norm, post_norm;
  tessera::Tensor<tessera::bfloat16, 2> qkv, o, gate, up, down;
};

struct DeviceWeights {
  tessera::Tensor<tessera::bfloat16, 2> embed;
  std::vector<LayerWeights> layers;
  tessera::Tensor<tessera::bfloat16, 1> final_norm;
  std::optional<tessera::Tensor<tessera::bfloat16, 2>> lm_head;  // untied models only

  const tessera::Tensor<tessera::bfloat16, 2>& head() const { return lm_head ? *lm_head : embed; }
  // Bytes of all tensors (what a decode step reads, plus the embedding rows it does not).
  std::int64_t bytes() const;

  // Throws what the source throws (ModelError naming the file and tensor), or tessera::Error.
  static DeviceWeights load(const ModelConfig& config, const WeightSource& source, tessera::Target target,
                            unsigned threads = 0);
};

}  // namespace qwen3
