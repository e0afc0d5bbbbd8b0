// sampler.cpp: Sampler, the launches of kernels/sampling.h.
#include "sampler.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "errors.h"
#include "kernels/sampling.h"
#include "synthetic_model.h"

namespace qwen3 {

namespace k = kernels;
using tessera::Tensor;

static_assert(kMaxTopK == k::kTopK);

void check_sampling_params(const SamplingParams& p) {
  if (!(p.temperature >= 0) || !std::isfinite(p.temperature))
    throw Error(fmt::format("temperature {} must be a finite number >= 0 (0: greedy)", p.temperature));
  if (p.top_k < 0 || p.top_k > kMaxTopK)
    throw Error(fmt::format("top_k {} must be in [0, {}] (0: all {} candidates)", p.top_k, kMaxTopK, kMaxTopK));
  if (!(p.top_p > 0 && p.top_p <= 1)) throw Error(fmt::format("top_p {} must be in (0, 1]", p.top_p));
}

float sampler_uniform(std::uint64_t seed, std::uint64_t n) {
  return static_cast<float>(splitmix64(splitmix64(seed) + n) >> 40) * 0x1p-24f;
}

Sampler::Sampler(std::int64_t vocab_size, const SamplingParams& params, std::optional<tessera::Target> target)
    : params_(params),
      vocab_(vocab_size),
      block_value_({(vocab_size + k::kArgmaxBlock - 1) / k::kArgmaxBlock}),
      block_index_({(vocab_size + k::kArgmaxBlock - 1) / k::kArgmaxBlock}),
      token_({1}) {
  check_sampling_params(params);
  if (vocab_size <= 0 || vocab_size > std::numeric_limits<std::int32_t>::max())
    throw Error(fmt::format("vocabulary of {} tokens", vocab_size));
  options_.target = target.value_or(tessera::default_target());
  options_.stream = tessera::Stream::create();
  if (params.temperature >= kGreedyBelow) {
    std::int64_t lists = (vocab_size + k::kTopKBlock - 1) / k::kTopKBlock;
    while (true) {
      cand_value_.emplace_back(std::array<std::int64_t, 2>{lists, k::kTopK});
      cand_index_.emplace_back(std::array<std::int64_t, 2>{lists, k::kTopK});
      if (lists == 1) break;
      lists = (lists + k::kTopKMerge - 1) / k::kTopKMerge;
    }
  }
}

std::int32_t Sampler::sample(const Tensor<float, 1>& logits) {
  const bool greedy = params_.temperature < kGreedyBelow;
  return choose(logits, greedy ? 0.0f : sampler_uniform(params_.seed, draws_++));
}

void Sampler::warm_up(const Tensor<float, 1>& logits) { choose(logits, 0.0f); }

void Sampler::check_logits(const Tensor<float, 1>& logits) const {
  if (logits.shape(0) != vocab_)
    throw Error(fmt::format("sampler for {} tokens given {} logits", vocab_, logits.shape(0)));
}

template <class Run>
void Sampler::for_each_launch(const Tensor<float, 1>& logits, float u, Run&& run) {
  if (params_.temperature < kGreedyBelow) {
    run(k::argmax_blocks<k::kArgmaxBlock>(), block_value_.partition<1>(), block_index_.partition<1>(), logits);
    run(k::argmax_final<k::kArgmaxFinal>(), token_.partition<1>(), block_value_, block_index_);
  } else {
    run(k::topk_blocks<k::kTopKBlock, k::kTopK>(), cand_value_[0].partition<1, k::kTopK>(),
        cand_index_[0].partition<1, k::kTopK>(), logits);
    for (std::size_t i = 1; i < cand_value_.size(); ++i)
      run(k::topk_merge<k::kTopKMerge, k::kTopK>(), cand_value_[i].partition<1, k::kTopK>(),
          cand_index_[i].partition<1, k::kTopK>(), cand_value_[i - 1], cand_index_[i - 1]);
    const auto top_k = static_cast<std::int32_t>(params_.top_k == 0 ? kMaxTopK : params_.top_k);
    run(k::sample_topk<k::kTopK>(), token_.partition<1>(), cand_value_.back(), cand_index_.back(),
        static_cast<float>(1 / params_.temperature), top_k, static_cast<float>(params_.top_p), u);
  }
}

std::vector<tessera::PendingCompile> Sampler::pending_compiles(const Tensor<float, 1>& logits) {
  check_logits(logits);
  std::vector<tessera::PendingCompile> compiles;
  for_each_launch(logits, 0.0f, [&](const auto& kernel, auto&&... args) {
    compiles.push_back(kernel.pending_compile(options_, std::forward<decltype(args)>(args)...));
  });
  return compiles;
}

std::int32_t Sampler::choose(const Tensor<float, 1>& logits, float u) {
  check_logits(logits);
  for_each_launch(logits, u, [&](const auto& kernel, auto&&... args) {
    std::move(kernel.launch_async(options_, std::forward<decltype(args)>(args)...)).detach();
  });
  const std::int32_t token = token_(0);
  if (token < 0 || token >= vocab_)
    throw Error("the logits have no largest value (are they NaN?): no token could be chosen");
  return token;
}

}  // namespace qwen3
