// sampler.h: choosing the next token on the device (kernels/sampling.h), greedy or random.
//
// temperature 0 is greedy: the first index of the largest logit (as torch.argmax); so is any
// temperature below kGreedyBelow (1e-6), where 1 / temperature would overflow f32 math and the
// draw is greedy anyway (but for exact ties). Otherwise the
// token is drawn from the K = 64 most likely tokens (the candidates): with p_i proportional to
// exp((logit_i - max) / temperature), restricted to the top_k first candidates (top_k 0: all 64)
// and then to the smallest prefix whose mass reaches top_p of theirs, the draw inverts the
// cumulative sum of the kept p_i at u times their total. Ties go to the smaller token id, so
// top_k 1 is exactly greedy. Tokens outside the 64 candidates are never drawn: transformers
// samples over the whole vocabulary when no top_k is set, so with top_k 0 and a flat
// distribution (high temperature, random weights) the two differ; with Qwen3's recommended
// settings (top_k 20) they do not.
//
// The uniform numbers come from a counter-based generator, the n-th draw of a sampler (n = 0, 1,
// 2, ...) being u_n = (splitmix64(splitmix64(seed) + n) >> 40) * 2^-24, a float in [0, 1): the
// same seed gives the same tokens for the same logits, on every target. It is drawn on the host
// and passed to the sampling kernel as a scalar (the tile language has no integer bit operations
// to hash with on the device).
//
// Bad parameters are qwen3::Error naming the parameter: temperature negative or not finite,
// top_k outside [0, 64], top_p outside (0, 1].
#pragma once

#include <tessera/tessera.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace qwen3 {

struct SamplingParams {
  double temperature = 0;  // 0: greedy
  std::int64_t top_k = 0;  // 0: all candidates; at most kMaxTopK
  double top_p = 1;
  std::uint64_t seed = 0;
};

inline constexpr std::int64_t kMaxTopK = 64;
inline constexpr double kGreedyBelow = 1e-6;

void check_sampling_params(const SamplingParams& params);

// The n-th uniform number of the generator above.
float sampler_uniform(std::uint64_t seed, std::uint64_t n);

class Sampler {
 public:
  Sampler(std::int64_t vocab_size, const SamplingParams& params, std::optional<tessera::Target> target = {});

  // The next token for the f32 logits [vocab] (waits for them). Throws qwen3::Error when the
  // logits hold no largest value (NaN everywhere).
  std::int32_t sample(const tessera::Tensor<float, 1>& logits);
  // The compiles of the kernels that sample() launches on logits of this shape (for
  // Model::warm_up, which compiles them with its own on threads).
  std::vector<tessera::PendingCompile> pending_compiles(const tessera::Tensor<float, 1>& logits);
  // Runs the sampling kernels once on `logits` without using a draw of the generator (so that
  // they are compiled, where pending_compiles' were not, and loaded before anything is timed);
  // the result is dropped.
  void warm_up(const tessera::Tensor<float, 1>& logits);
  const SamplingParams& params() const { return params_; }
  std::uint64_t draws() const { return draws_; }

 private:
  SamplingParams params_;
  std::int64_t vocab_;
  tessera::LaunchOptions options_;
  std::uint64_t draws_ = 0;
  std::int32_t choose(const tessera::Tensor<float, 1>& logits, float u);
  void check_logits(const tessera::Tensor<float, 1>& logits) const;
  // Calls run(kernel, arguments...) for each launch of a choice on `logits` with the uniform
  // number u, in order.
  template <class Run>
  void for_each_launch(const tessera::Tensor<float, 1>& logits, float u, Run&& run);
  // Greedy: per block the largest value and its index.
  tessera::Tensor<float, 1> block_value_;
  tessera::Tensor<std::int32_t, 1> block_index_;
  // Sampling: candidate lists [n, 64], from the blocks down to one list.
  std::vector<tessera::Tensor<float, 2>> cand_value_;
  std::vector<tessera::Tensor<std::int32_t, 2>> cand_index_;
  tessera::Tensor<std::int32_t, 1> token_;
};

}  // namespace qwen3
