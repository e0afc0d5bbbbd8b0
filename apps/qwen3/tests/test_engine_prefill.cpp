// test_engine_prefill.cpp: the matmul prefill (Model::prefill) against the host reference
// (reference.h) and against the decode-step prefill, on synthetic models, on the CPU target and
// (tagged [gpu]) on the GPU: the last token's logits and the KV cache of every prompt position,
// for one token, prompts in one chunk and over several, and a prefill at start > 0 after earlier
// prefilled and decoded positions, followed by a decode step; and generate()'s reuse of the
// prefix the cache holds.
//
// Tolerances, in units of 2^-8 max|x| (one bf16 rounding of the largest element x: of the logits,
// or of one layer's K or V cache rows):
//  - against the reference with the prefill's numerics (ReferenceNumerics::kPrefill: the same
//    bf16 rounding points but one, below), 6, for the logits and the caches. The engine agrees with it to f32
//    precision (measured: 4e-5 of the unit) until an element of a bf16 value -- a GEMM operand,
//    q, K or V -- lies within the f32 error of a rounding midpoint and rounds the other way (about
//    one in 10^4). That element then moves by one bf16 ulp (2^-7 of itself), and the roundings
//    after it turn its small effect into whole-ulp differences of the positions that attend to it
//    (a flip in one position's SwiGLU output differed 60% of layer 1's K row of that position and
//    27% of layer 2's later rows by an ulp). Measured with such flips: logits 0.6-2.3, caches
//    1.0-2.0 (gqa5, mha-long). The attention's p V rounds its probabilities to bf16 (kernels/
//    attention.h), which the reference cannot follow (the engine's p are relative to running
//    maxima): with it, 6 (measured on the CPU target: logits up to 4.4, caches 2.6).
//  - against the decode numerics (ReferenceNumerics::kDecode, and the engine's decode steps), 8:
//    the prefill rounds more values per layer to bf16 (n, the attention output, n again and the
//    SwiGLU output: the tensor-core GEMM takes 16-bit operands; the QKV and gate outputs and the
//    residual stream after each add, as a bf16 transformers model does), each by at most half an
//    ulp (2^-8 relative) per element, and attention amplifies a relative change of q or K by
//    about the size of the scores. Measured: 0.8-4.1 (with the bf16 residual stream, on the CPU
//    target; against the prefill numerics then: logits up to 2.7, caches 3.8).
// "the tolerances separate a wrong model" checks that both are tight enough to see a real
// difference: a reference with another rope_theta is 15 units away at 40 positions.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "engine_test_support.h"
#include "generate.h"
#include "sampler.h"
#include "test_models.h"
#include "model.h"
#include "model_presets.h"
#include "reference.h"

using namespace qwen3;
using qwen3::test::config_named;
using tessera::Target;

namespace {

EngineOptions engine_options(Target target, std::int64_t context, std::int64_t chunk) {
  EngineOptions o;
  o.target = target;
  o.context_limit = context;
  o.prefill_chunk = chunk;
  return o;
}

std::vector<std::int32_t> tokens_below(std::int64_t vocab, std::size_t n, std::size_t salt = 0) {
  std::vector<std::int32_t> t;
  for (std::size_t i = 0; i < n; ++i) t.push_back(static_cast<std::int32_t>(((i + salt) * 7919 + 13) % vocab));
  return t;
}

// The tolerances, in units of 2^-8 max|x| (see the top).
constexpr double kExactRatio = 6;
constexpr double kDecodeRatio = 8;

double max_abs(const std::vector<float>& v) {
  double m = 0;
  for (float x : v) m = std::max(m, std::abs(static_cast<double>(x)));
  return m;
}

// max |got - want| / (2^-8 max |want|).
double error_ratio(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) e = std::max(e, std::abs(static_cast<double>(got[i]) - want[i]));
  return e / (0x1p-8 * max_abs(want));
}

// The worst error ratio of the cache rows [0, positions) over the layers and K and V.
double cache_ratio(const Model& model, const ReferenceModel& ref, const ModelConfig& c, std::int64_t positions) {
  double worst = 0;
  const std::int64_t context = model.context_limit(), d = c.head_dim;
  for (std::size_t l = 0; l < static_cast<std::size_t>(c.num_hidden_layers); ++l)
    for (const auto& [tensor, want] :
         {std::pair(&model.k_cache(l), &ref.k_cache(l)), std::pair(&model.v_cache(l), &ref.v_cache(l))}) {
      const std::vector<tessera::bfloat16> got = tensor->to_vector();
      std::vector<float> g, w;
      for (std::int64_t h = 0; h < c.num_key_value_heads; ++h)
        for (std::int64_t p = 0; p < positions; ++p)
          for (std::int64_t i = 0; i < d; ++i) {
            g.push_back(static_cast<float>(got[(h * context + p) * d + i]));
            w.push_back((*want)[(h * context + p) * d + i]);
          }
      worst = std::max(worst, error_ratio(g, w));
    }
  return worst;
}

struct Case {
  const char* model;
  std::int64_t context, chunk;
  std::size_t prompt;
};

// prefill(prompt) against the reference stepped through it (both numerics) and against decode
// steps; then, if `more` > 0, `steps` decode steps and a second prefill of `more` tokens at start >
// 0, and one decode step after it.
void prefill_case(Target target, const Case& k, std::size_t steps = 0, std::size_t more = 0) {
  const ModelConfig config = config_named(k.model);
  const WeightSource source = WeightSource::synthetic(17);
  Model model(config, source, engine_options(target, k.context, k.chunk));
  Model stepped(config, source, engine_options(target, k.context, k.chunk));
  ReferenceModel ref(config, source, k.context, ReferenceNumerics::kPrefill);
  ReferenceModel decode_ref(config, source, k.context);
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, k.prompt + steps + more + 1);
  std::vector<float> want, want_decode, by_steps;
  std::int64_t referenced = 0;  // positions the references and `stepped` have run
  auto reference_to = [&](std::size_t end) {
    for (std::int64_t& p = referenced; p < static_cast<std::int64_t>(end); ++p) {
      want = ref.step(tokens[p], p);
      want_decode = decode_ref.step(tokens[p], p);
      by_steps = stepped.decode_step(tokens[p], p).to_vector();
    }
  };
  auto check = [&](const std::vector<float>& got, const char* what, std::size_t positions) {
    const double exact = error_ratio(got, want), decode = error_ratio(got, want_decode),
                 vs_steps = error_ratio(got, by_steps);
    const double cache = cache_ratio(model, ref, config, static_cast<std::int64_t>(positions));
    const std::string measured = fmt::format(
        "{}, {}, chunks of {} (units of 2^-8 max|x|): logits {:.3g}, cache {:.3g}; from the decode "
        "numerics {:.3g}, from decode steps {:.3g}",
        k.model, what, k.chunk, exact, cache, decode, vs_steps);
    INFO(measured);
    if (std::getenv("QWEN3_PRINT_ERRORS")) WARN(measured);
    CHECK(exact <= kExactRatio);
    CHECK(cache <= kExactRatio);
    CHECK(decode <= kDecodeRatio);
    CHECK(vs_steps <= kDecodeRatio);
  };
  const std::span<const std::int32_t> all(tokens);
  const std::vector<float> first = model.prefill(all.first(k.prompt)).to_vector();
  CHECK(model.cached_positions() == static_cast<std::int64_t>(k.prompt));
  reference_to(k.prompt);
  check(first, "the prompt", k.prompt);
  if (more == 0) return;
  std::vector<float> got;
  for (std::size_t p = k.prompt; p < k.prompt + steps; ++p) {
    got = model.decode_step(tokens[p], static_cast<std::int64_t>(p)).to_vector();
    reference_to(p + 1);
  }
  const std::size_t start = k.prompt + steps, end = start + more;
  got = model.prefill(all.subspan(start, more), static_cast<std::int64_t>(start)).to_vector();
  CHECK(model.cached_positions() == static_cast<std::int64_t>(end));
  reference_to(end);
  check(got, "a second prefill at start > 0", end);
  // Decoding continues from the prefilled cache.
  got = model.decode_step(tokens[end], static_cast<std::int64_t>(end)).to_vector();
  reference_to(end + 1);
  check(got, "a decode step after it", end + 1);
}

void tiny_prompts(Target target) {
  prefill_case(target, {"tiny", 64, 1024, 1});
  prefill_case(target, {"tiny", 64, 1024, 37});
  prefill_case(target, {"tiny", 64, 16, 37});
}
void gqa5_prompts(Target target) {
  prefill_case(target, {"gqa5", 64, 16, 40});
  prefill_case(target, {"gqa5", 128, 16, 10}, 3, 45);
}
void mha_long_prompt(Target target) { prefill_case(target, {"mha-long", 256, 64, 150}); }

// The tolerances are tight enough to tell a model with another rope_theta from this one.
void tolerance_separates(Target target) {
  const ModelConfig config = config_named("tiny");
  ModelConfig other = config;
  other.rope_theta = 1.5e6;
  const WeightSource source = WeightSource::synthetic(11);
  Model model(config, source, engine_options(target, 64, 64));
  ReferenceModel wrong(other, source, 64, ReferenceNumerics::kPrefill);
  ReferenceModel wrong_decode(other, source, 64);
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, 40);
  std::vector<float> want, want_decode;
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    want = wrong.step(tokens[p], static_cast<std::int64_t>(p));
    want_decode = wrong_decode.step(tokens[p], static_cast<std::int64_t>(p));
  }
  const std::vector<float> got = model.prefill(tokens).to_vector();
  CHECK(error_ratio(got, want) > kExactRatio);
  CHECK(error_ratio(got, want_decode) > kDecodeRatio);
}

// The chunk size does not change the result: chunks of 7 (ragged) equal one chunk, on every
// target, since each row's products, norms and attention are computed alike in any chunk.
void chunking_invariant(Target target) {
  const ModelConfig config = config_named("gqa5");
  const WeightSource source = WeightSource::synthetic(3);
  Model whole(config, source, engine_options(target, 64, 64));
  Model chunked(config, source, engine_options(target, 64, 7));
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, 30, 5);
  const std::vector<float> a = whole.prefill(tokens).to_vector(), b = chunked.prefill(tokens).to_vector();
  CHECK(a == b);
}

// generate() with reuse_cache: a second turn (the first turn's prompt and answer, then new
// tokens) prefills only past what the cache holds, and its logits equal a whole prefill's within
// the tolerance against the decode numerics (the answer's positions were decode steps). A prompt
// that diverges early reuses the common prefix only; a repeated prompt still prefills its last
// token; without reuse_cache nothing is reused.
void prefix_reuse(Target target) {
  const ModelConfig config = config_named("gqa5");
  const WeightSource source = WeightSource::synthetic(23);
  Model model(config, source, engine_options(target, 96, 16));
  Model fresh(config, source, engine_options(target, 96, 16));
  Sampler greedy(config.vocab_size, SamplingParams{}, target);
  GenerateOptions go;
  go.max_new_tokens = 5;
  go.reuse_cache = true;
  const std::vector<std::int32_t> first = tokens_below(config.vocab_size, 20);
  const GenerationResult r1 = generate(model, greedy, first, go);
  CHECK(r1.cached_prompt_tokens == 0);
  // The cache holds the prompt and every new token but the last, which no step has run.
  std::vector<std::int32_t> held = first;
  held.insert(held.end(), r1.tokens.begin(), r1.tokens.end() - 1);
  CHECK(std::ranges::equal(model.cached_tokens(), held));

  std::vector<std::int32_t> second = first;
  second.insert(second.end(), r1.tokens.begin(), r1.tokens.end());
  const std::vector<std::int32_t> turn = tokens_below(config.vocab_size, 12, 3);
  second.insert(second.end(), turn.begin(), turn.end());
  go.max_new_tokens = 1;
  const GenerationResult r2 = generate(model, greedy, second, go);
  CHECK(r2.cached_prompt_tokens == static_cast<std::int64_t>(held.size()));
  CHECK(std::ranges::equal(model.cached_tokens(), second));
  // The last position again, over the cache the reuse left, against a whole prefill.
  const std::int64_t last = static_cast<std::int64_t>(second.size()) - 1;
  const std::vector<float> got = model.prefill(std::span(second).last(1), last).to_vector();
  const std::vector<float> want = fresh.prefill(second).to_vector();
  const double ratio = error_ratio(got, want);
  INFO(fmt::format("a reused cache's logits against a whole prefill: {:.3g} units of 2^-8 max|x|", ratio));
  CHECK(ratio <= kDecodeRatio);

  std::vector<std::int32_t> third(first.begin(), first.begin() + 7);
  const std::vector<std::int32_t> other = tokens_below(config.vocab_size, 9, 40);
  third.insert(third.end(), other.begin(), other.end());
  REQUIRE(third[7] != first[7]);
  CHECK(generate(model, greedy, third, go).cached_prompt_tokens == 7);
  CHECK(generate(model, greedy, third, go).cached_prompt_tokens == static_cast<std::int64_t>(third.size()) - 1);
  go.reuse_cache = false;
  CHECK(generate(model, greedy, third, go).cached_prompt_tokens == 0);
  CHECK(std::ranges::equal(model.cached_tokens(), third));
}

}  // namespace

TEST_CASE("generate: the reusable prefix of a prompt", "[engine][generate][cpu]") {
  const std::vector<std::int32_t> cached = {5, 6, 7, 8};
  CHECK(reusable_prefix(std::vector<std::int32_t>{5, 6, 9}, cached) == 2);
  CHECK(reusable_prefix(std::vector<std::int32_t>{5, 6, 7, 8, 9}, cached) == 4);
  CHECK(reusable_prefix(std::vector<std::int32_t>{5, 6, 7, 8}, cached) == 3);  // the last is prefilled
  CHECK(reusable_prefix(std::vector<std::int32_t>{5, 6}, cached) == 1);
  CHECK(reusable_prefix(std::vector<std::int32_t>{4}, cached) == 0);
  CHECK(reusable_prefix(std::vector<std::int32_t>{}, cached) == 0);
  CHECK(reusable_prefix(std::vector<std::int32_t>{5, 6}, std::vector<std::int32_t>{}) == 0);
}

QWEN3_TARGET_TEST_CASE("prefill: tiny, one token, one chunk, three chunks", "[engine][prefill]", tiny_prompts)
QWEN3_TARGET_TEST_CASE("prefill: gqa5 untied, three chunks, then at start > 0 after decode steps", "[engine][prefill]",
                       gqa5_prompts)
QWEN3_TARGET_TEST_CASE("prefill: mha-long, chunks over several KV tiles", "[engine][prefill]", mha_long_prompt)
QWEN3_TARGET_TEST_CASE("prefill: chunking does not change the result", "[engine][prefill]", chunking_invariant)
QWEN3_TARGET_TEST_CASE("prefill: the tolerances separate a wrong model", "[engine][prefill]", tolerance_separates)
QWEN3_TARGET_TEST_CASE("generate: a prompt's prefix in the cache is not prefilled again", "[engine][prefill][generate]",
                       prefix_reuse)
