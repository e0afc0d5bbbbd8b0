// test_engine_sampling.cpp: the Sampler (sampler.h) on the CPU target and (tagged [gpu]) on the
// GPU: seeded reproducibility, top_k = 1 is greedy, the draw follows the host rule
// (reference.h: sample_rank) and the distribution, top-p keeps the smallest prefix; parameter
// errors; and the generation loop's stop tokens.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <numeric>
#include <vector>

#include "engine_test_support.h"
#include "errors.h"
#include "generate.h"
#include "model_presets.h"
#include "reference.h"
#include "sampler.h"
#include "test_files.h"

using namespace qwen3;
using qwen3::test::random_f32;
using tessera::Target;
using tessera::Tensor;

namespace {

SamplingParams params(double temperature, std::int64_t top_k, double top_p, std::uint64_t seed) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.seed = seed;
  return p;
}

void seeded_reproducible(Target target) {
  auto logits = random_f32<1>({5000}, -1, 1, 1);  // flat: many tokens are likely
  Sampler a(5000, params(1.0, 0, 1.0, 7), target), b(5000, params(1.0, 0, 1.0, 7), target),
      c(5000, params(1.0, 0, 1.0, 8), target);
  std::vector<std::int32_t> ta, tb, tc;
  for (int i = 0; i < 30; ++i) {
    ta.push_back(a.sample(logits));
    tb.push_back(b.sample(logits));
    tc.push_back(c.sample(logits));
  }
  CHECK(ta == tb);
  CHECK(ta != tc);
  CHECK(a.draws() == 30);
}

void top_k_one_is_greedy(Target target) {
  Sampler greedy(3000, SamplingParams{}, target), top1(3000, params(0.8, 1, 0.9, 3), target);
  for (unsigned s = 0; s < 10; ++s) {
    auto logits = random_f32<1>({3000}, -5, 5, 100 + s);
    if (s == 3) logits(2999) = logits(5) = 6;  // a tie: the smaller id, both ways
    const std::vector<float> v = logits.to_vector();
    const std::int32_t want = static_cast<std::int32_t>(argmax_first(v));
    CHECK(greedy.sample(logits) == want);
    CHECK(top1.sample(logits) == want);
  }
}

// The sampler's draws are the host rule's for the n-th uniform number of its seed.
void follows_host_rule(Target target) {
  auto logits = random_f32<1>({5000}, -3, 3, 2);
  const std::vector<float> v = logits.to_vector();
  std::vector<std::int64_t> order(v.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return v[x] > v[y]; });
  std::vector<double> sorted;
  for (std::int64_t i = 0; i < kMaxTopK; ++i) sorted.push_back(v[order[i]]);
  for (const SamplingParams& p : {params(1.0, 0, 1.0, 1), params(0.7, 20, 0.8, 2), params(1.3, 64, 0.95, 3)}) {
    Sampler s(5000, p, target);
    int64_t differ = 0;
    for (std::uint64_t n = 0; n < 20; ++n) {
      const double u = sampler_uniform(p.seed, n);
      differ += s.sample(logits) != order[sample_rank(sorted, 1 / p.temperature, p.top_k ? p.top_k : 64, p.top_p, u)];
    }
    CHECK(differ == 0);
  }
}

// Known probabilities 0.5, 0.3, 0.2 on tokens 10, 20, 30 (all others -inf): the frequencies of
// 2000 draws are within 4 standard deviations, and top-p keeps the smallest prefix reaching p.
void distribution_and_top_p(Target target) {
  Tensor<float, 1> logits({100});
  logits.fill(-tessera::inf);
  logits(10) = std::log(0.5f);
  logits(20) = std::log(0.3f);
  logits(30) = std::log(0.2f);
  auto counts = [&](double top_p, int draws) {
    Sampler s(100, params(1.0, 0, top_p, 9), target);
    std::map<std::int32_t, int> c;
    for (int i = 0; i < draws; ++i) ++c[s.sample(logits)];
    return c;
  };
  std::map<std::int32_t, int> all = counts(1.0, 2000);
  CHECK(all.size() == 3);
  for (auto [token, p] : {std::pair(10, 0.5), std::pair(20, 0.3), std::pair(30, 0.2)})
    CHECK(std::abs(all[token] - 2000 * p) <= 4 * std::sqrt(2000 * p * (1 - p)));
  std::map<std::int32_t, int> two = counts(0.75, 300);  // 0.5 < 0.75 <= 0.8: tokens 10 and 20
  CHECK(two.size() == 2);
  CHECK(two.count(30) == 0);
  CHECK(counts(0.5, 100).size() == 1);  // 0.5 alone reaches 0.5
  CHECK(counts(0.81, 300).size() == 3);
}

}  // namespace

QWEN3_TARGET_TEST_CASE("sampler: seeded reproducibility", "[engine][sampling]", seeded_reproducible)
QWEN3_TARGET_TEST_CASE("sampler: top_k 1 is greedy", "[engine][sampling]", top_k_one_is_greedy)
QWEN3_TARGET_TEST_CASE("sampler: draws follow the host rule", "[engine][sampling]", follows_host_rule)
QWEN3_TARGET_TEST_CASE("sampler: distribution and top-p prefix", "[engine][sampling]", distribution_and_top_p)

TEST_CASE("sampler: bad parameters are clear errors", "[engine][sampling][cpu]") {
  auto message = [](const SamplingParams& p) -> std::string {
    try {
      check_sampling_params(p);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(message(params(-1, 0, 1, 0)), Catch::Contains("temperature -1 must be a finite number >= 0"));
  CHECK_THAT(message(params(NAN, 0, 1, 0)), Catch::Contains("temperature nan"));
  CHECK_THAT(message(params(1, 65, 1, 0)), Catch::Contains("top_k 65 must be in [0, 64]"));
  CHECK_THAT(message(params(1, -1, 1, 0)), Catch::Contains("top_k -1"));
  CHECK_THAT(message(params(1, 0, 0, 0)), Catch::Contains("top_p 0 must be in (0, 1]"));
  CHECK_THAT(message(params(1, 0, 1.5, 0)), Catch::Contains("top_p 1.5"));
  CHECK(message(params(0.6, 20, 0.95, 0)) == "no error");
  CHECK_THROWS_AS(Sampler(100, params(1, 0, 2, 0), Target::cpu), Error);
  Sampler s(100, SamplingParams{}, Target::cpu);
  Tensor<float, 1> wrong({99});
  CHECK_THROWS_WITH(s.sample(wrong), Catch::Contains("sampler for 100 tokens given 99 logits"));
}

TEST_CASE("generate: a stop token ends the generation, tokens stream in order", "[engine][generate][cpu]") {
  ModelConfig config = qwen3_preset("tiny");
  config.vocab_size = 700;
  const WeightSource source = WeightSource::synthetic(4);
  EngineOptions options;
  options.target = Target::cpu;
  options.context_limit = 32;
  Model model(config, source, options);
  Sampler sampler(config.vocab_size, SamplingParams{}, Target::cpu);
  const std::vector<std::int32_t> prompt = {1, 2, 3};
  GenerateOptions go;
  go.max_new_tokens = 8;
  std::vector<std::int32_t> streamed;
  const GenerationResult free_run =
      generate(model, sampler, prompt, go, [&](std::int32_t t) { streamed.push_back(t); });
  CHECK(free_run.tokens.size() == 8);
  CHECK(free_run.stop == GenerationResult::Stop::kMaxTokens);
  CHECK(streamed == free_run.tokens);
  CHECK(free_run.prompt_tokens == 3);
  CHECK(free_run.prefill_seconds > 0);

  // Stop at the third token's value (its first occurrence).
  const std::int32_t stop = free_run.tokens[2];
  const auto first = std::find(free_run.tokens.begin(), free_run.tokens.end(), stop) - free_run.tokens.begin();
  go.stop_tokens = {stop};
  const GenerationResult stopped = generate(model, sampler, prompt, go);
  CHECK(stopped.stop == GenerationResult::Stop::kStopToken);
  CHECK(stopped.tokens == std::vector<std::int32_t>(free_run.tokens.begin(), free_run.tokens.begin() + first + 1));
}

TEST_CASE("generate: default stop tokens", "[engine][generate][cpu]") {
  ModelConfig config = qwen3_preset("0.6B");
  CHECK(default_stop_tokens(config, nullptr) == std::vector<std::int32_t>{151645});
  const Tokenizer* tokenizer = qwen3::test::qwen3_tokenizer();
  if (!tokenizer) return;
  CHECK(default_stop_tokens(config, tokenizer) == std::vector<std::int32_t>{151643, 151645});
}
