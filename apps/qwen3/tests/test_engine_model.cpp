// test_engine_model.cpp: the engine's forward pass against the host reference (reference.h) on
// synthetic models, teacher-forced, on the CPU target and (tagged [gpu]) on the GPU; greedy
// generation token for token; prefill, checkpoint loading and the errors of bad calls.
//
// Models: "tiny" (GQA group 2, tied embeddings, rope_theta 1e6, the real vocabulary), "gqa5" (10
// query heads on 2 KV heads: group 5, whose tile is 8 -- a group that is not a power of two --
// untied, rope_theta 5e6, 3 layers, intermediate 160, vocabulary 1000, eps 1e-5) and "mha-long"
// (one query head per KV head, 150 positions in 3 chunks of 64 with 2 chunks per split).
//
// Tolerance on the logits: |engine - reference| <= 2^-8 max|reference logits|. Derivation: the
// engine computes in f32 what the reference computes in double, and both store q, K and V in bf16.
//  (1) f32 rounding. A dot product of K terms errs by at most about K u sum|terms| (u = 2^-24),
//      the norms and softmaxes by a few u; compounded over the layers this stays near 1e-6
//      relative (the tests print the measured error: about 3e-6 on logits of magnitude 4).
//  (2) bf16 storage. An element of q, K or V whose f32 and double values straddle the midpoint
//      of two bf16 numbers is stored one bf16 ulp apart: at most 2^-8 of itself. This is rare
//      (|f32 error| / ulp, about 1e-4 per element) but possible on any run. Such an element
//      changes its layer's attention output by at most 2^-8 of that output (normwise); every
//      layer normalizes its input (RMSNorm before each projection and per head) and the random
//      projections keep norms (weights of variance 1 / fan-in), so to first order the change
//      reaches the logits no larger, relative to them.
// So one bf16 rounding of the largest logit bounds both with room: the engine agrees with its
// definition to bf16 precision. "the tolerance separates a wrong model" checks that it is tight
// enough to see a real difference (a reference with another rope_theta fails it).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <vector>

#include "engine_test_support.h"
#include "test_models.h"
#include "errors.h"
#include "generate.h"
#include "model.h"
#include "model_presets.h"
#include "reference.h"
#include "rope_table.h"
#include "sampler.h"
#include "synthetic_model.h"
#include "test_files.h"

using namespace qwen3;
using qwen3::test::config_named;
using tessera::Target;

namespace {

EngineOptions engine_options(Target target, std::int64_t context) {
  EngineOptions o;
  o.target = target;
  o.context_limit = context;
  return o;
}

double tolerance(const std::vector<float>& reference) {
  double m = 0;
  for (float v : reference) m = std::max(m, std::abs(static_cast<double>(v)));
  return 0x1p-8 * m;
}

double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  double e = 0;
  for (std::size_t i = 0; i < got.size(); ++i) e = std::max(e, std::abs(static_cast<double>(got[i]) - want[i]));
  return e;
}

// A deterministic token sequence below `vocab`.
std::vector<std::int32_t> tokens_below(std::int64_t vocab, std::size_t n) {
  std::vector<std::int32_t> t;
  for (std::size_t i = 0; i < n; ++i) t.push_back(static_cast<std::int32_t>((i * 7919 + 13) % vocab));
  return t;
}

// Teacher-forced steps of `tokens`, engine vs reference; checks positions listed (all when empty).
void teacher_forced(Target target, const std::string& name, std::size_t steps, const EngineOptions& options,
                    std::vector<std::size_t> checked = {}) {
  const ModelConfig config = config_named(name);
  const WeightSource source = WeightSource::synthetic(11);
  Model model(config, source, options);
  ReferenceModel ref(config, source, model.context_limit());
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, steps);
  double worst = 0;
  for (std::size_t p = 0; p < steps; ++p) {
    const bool check = checked.empty() || std::find(checked.begin(), checked.end(), p) != checked.end();
    const std::vector<float> want = ref.step(tokens[p], static_cast<std::int64_t>(p));
    const tessera::Tensor<float, 1>& logits = model.decode_step(tokens[p], static_cast<std::int64_t>(p));
    if (!check) continue;
    const std::vector<float> got = logits.to_vector();
    const double error = max_error(got, want), tol = tolerance(want);
    worst = std::max(worst, error / tol);
    INFO(name << " position " << p << ": max |error| " << error << ", tolerance " << tol);
    if (std::getenv("QWEN3_PRINT_ERRORS")) WARN(name << " position " << p << ": " << error / tol);
    CHECK(error <= tol);
  }
  // The caches agree to the same bound as the logits, 2^-8 of their largest element, and one bf16
  // ulp (2^-7) of the element itself: past the first layer their inputs carry the f32 and bf16
  // differences of the layers before (normwise), so a small element may be several of its own
  // ulps apart, and any element may round to the other bf16 neighbour of a value those
  // differences moved. Most elements are equal.
  std::int64_t elements = 0, differ = 0, far = 0;
  for (std::size_t l = 0; l < static_cast<std::size_t>(config.num_hidden_layers); ++l) {
    CHECK(model.k_cache(l).shape(1) == model.context_limit());
    CHECK(model.v_cache(l).shape(1) == model.context_limit());
  }
  for (std::size_t l = 0; l < static_cast<std::size_t>(config.num_hidden_layers); ++l)
    for (const auto& [got, want] : {std::pair(model.k_cache(l).to_vector(), ref.k_cache(l)),
                                    std::pair(model.v_cache(l).to_vector(), ref.v_cache(l))}) {
      double scale = 0;
      for (float w : want) scale = std::max(scale, std::abs(static_cast<double>(w)));
      for (std::size_t i = 0; i < want.size(); ++i) {
        const double g = static_cast<float>(got[i]), w = want[i];
        elements += w != 0;
        differ += g != w;
        far += std::abs(g - w) > 0x1p-8 * scale + 0x1p-7 * std::abs(w);
      }
    }
  CHECK(far == 0);
  WARN(name << ": worst error " << worst << " of the tolerance over " << steps << " steps; " << differ << " of "
            << elements << " cache elements differ");
}

void tiny_logits(Target target) { teacher_forced(target, "tiny", 8, engine_options(target, 64)); }
void gqa5_logits(Target target) { teacher_forced(target, "gqa5", 8, engine_options(target, 64)); }
// The decode products with their registers capped (the engine's default from 4B up caps the norm
// products; these test models are smaller) and loading weights early: the same logits.
void capped_products_logits(Target target) {
  EngineOptions o = engine_options(target, 64);
  o.norm_product_occupancy = 3;
  o.residual_product_occupancy = 4;
  o.residual_product_threads = 256;
  o.early_weight_steps = 2;
  teacher_forced(target, "gqa5", 8, o);
}
void mha_long_logits(Target target) {
  // A context of 200 positions (4 chunks) whose cache holds 256 (attention_cache_positions), so
  // that the caches the model shows are the context's part of larger tensors.
  EngineOptions o = engine_options(target, 200);
  o.attention_programs = 4;  // 2 KV heads x 2 splits: 150 positions are 3 chunks, 2 per split
  o.fused_attention_positions = 0;  // split-KV at every step
  o.short_attention_positions = 0;
  teacher_forced(target, "mha-long", 150, o, {0, 1, 62, 63, 64, 65, 100, 127, 128, 129, 149});
}
// The same with the split loading each chunk during the one before (EngineOptions::split_prefetch).
void mha_long_prefetch_logits(Target target) {
  EngineOptions o = engine_options(target, 200);
  o.attention_programs = 4;
  o.fused_attention_positions = 0;
  o.short_attention_positions = 0;
  o.split_prefetch = true;
  teacher_forced(target, "mha-long", 150, o, {0, 1, 63, 64, 65, 127, 128, 129, 149});
}
// The fused attention up to 100 positions, then split-KV: both decode graphs in one sequence.
void mha_long_fused_logits(Target target) {
  EngineOptions o = engine_options(target, 200);
  o.attention_programs = 4;
  o.fused_attention_positions = 100;
  o.short_attention_positions = 0;
  teacher_forced(target, "mha-long", 150, o, {0, 1, 62, 63, 64, 65, 99, 100, 101, 127, 128, 149});
}
// The short attention up to 128 positions, then split-KV: both decode graphs in one sequence.
void mha_long_short_logits(Target target) {
  EngineOptions o = engine_options(target, 200);
  o.attention_programs = 4;
  o.short_attention_positions = 128;
  teacher_forced(target, "mha-long", 150, o, {0, 1, 62, 63, 64, 65, 100, 127, 128, 129, 149});
}
// The short attention over 128 positions, then over 256: both graphs in one sequence, with a
// context of 200 positions whose cache holds 256 (the short attention's whole tiles).
void mha_long_short_256_logits(Target target) {
  EngineOptions o = engine_options(target, 200);
  o.attention_programs = 4;
  o.short_attention_positions = 256;
  teacher_forced(target, "mha-long", 150, o, {0, 1, 64, 127, 128, 129, 130, 149});
}

// The tolerance is tight enough to tell a model with another rope_theta from this one.
void tolerance_separates(Target target) {
  ModelConfig config = config_named("tiny");
  const WeightSource source = WeightSource::synthetic(11);
  Model model(config, source, engine_options(target, 16));
  ModelConfig other = config;
  other.rope_theta = 1.5e6;
  ReferenceModel wrong(other, source, 16);
  double worst = 0;
  for (std::int64_t p = 0; p < 6; ++p) {
    const std::vector<float> want = wrong.step(static_cast<std::int32_t>(100 + p), p);
    const std::vector<float> got = model.decode_step(static_cast<std::int32_t>(100 + p), p).to_vector();
    worst = std::max(worst, max_error(got, want) / tolerance(want));
  }
  CHECK(worst > 1);
}

// Greedy generation: the engine's tokens (on-device argmax) equal the reference's for 20 steps.
void greedy_identical(Target target) {
  const ModelConfig config = config_named("tiny");
  const WeightSource source = WeightSource::synthetic(5);
  Model model(config, source, engine_options(target, 64));
  Sampler sampler(config.vocab_size, SamplingParams{}, target);
  const std::vector<std::int32_t> prompt = {9707, 11, 1879, 0};
  GenerateOptions options;
  options.max_new_tokens = 20;
  const GenerationResult result = generate(model, sampler, prompt, options);
  REQUIRE(result.tokens.size() == 20);

  ReferenceModel ref(config, source, 64);
  std::vector<float> logits;
  for (std::size_t p = 0; p < prompt.size(); ++p) logits = ref.step(prompt[p], static_cast<std::int64_t>(p));
  std::vector<std::int32_t> want;
  double smallest_gap = 1e30;
  for (std::int64_t p = static_cast<std::int64_t>(prompt.size()); want.size() < 20; ++p) {
    std::vector<float> sorted = logits;
    std::partial_sort(sorted.begin(), sorted.begin() + 2, sorted.end(), std::greater<>());
    smallest_gap = std::min(smallest_gap, static_cast<double>(sorted[0] - sorted[1]));
    want.push_back(static_cast<std::int32_t>(argmax_first(logits)));
    if (want.size() < 20) logits = ref.step(want.back(), p);
  }
  INFO("smallest gap between the two largest reference logits: " << smallest_gap);
  CHECK(result.tokens == want);
}

// prefill(tokens) gives the logits of stepping through them (within the bf16 tolerance of the
// matmul prefill, 2^-5 max|logit|: test_engine_prefill.cpp); a step may be re-run at an earlier
// position (the cache is cut there).
void prefill_and_rewind(Target target) {
  const ModelConfig config = config_named("gqa5");
  const WeightSource source = WeightSource::synthetic(2);
  Model a(config, source, engine_options(target, 32));
  Model b(config, source, engine_options(target, 32));
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, 6);
  const std::vector<float> prefilled = a.prefill(tokens).to_vector();
  std::vector<float> stepped;
  for (std::size_t p = 0; p < tokens.size(); ++p)
    stepped = b.decode_step(tokens[p], static_cast<std::int64_t>(p)).to_vector();
  CHECK(max_error(prefilled, stepped) <= 8 * tolerance(stepped));  // tolerance(): 2^-8 max|logit|
  CHECK(a.cached_positions() == 6);
  // Re-run positions 3.. with other tokens: the same as a fresh model given those tokens.
  std::vector<std::int32_t> other = tokens;
  other[3] = 999;
  other[4] = 1;
  const std::vector<float> rewound = a.prefill(std::span(other).subspan(3), 3).to_vector();
  Model c(config, source, engine_options(target, 32));
  CHECK(rewound == c.prefill(other).to_vector());
}

// A model loaded from a checkpoint folder written by the synthetic writer equals the model whose
// weights the same generator made in place.
void checkpoint_equals_synthetic(Target target) {
  const ModelConfig config = config_named("gqa5");
  const std::filesystem::path dir = qwen3::test::scratch_dir("engine_checkpoint");
  write_synthetic_model(dir, config, 21, 2);
  const ModelWeights files = ModelWeights::open(dir);
  const ModelConfig read = load_model_config(dir);
  Model from_files(read, WeightSource::checkpoint(files, read), engine_options(target, 16));
  Model in_place(config, WeightSource::synthetic(21), engine_options(target, 16));
  for (std::int64_t p = 0; p < 3; ++p)
    CHECK(from_files.decode_step(static_cast<std::int32_t>(p * 300), p).to_vector() ==
          in_place.decode_step(static_cast<std::int32_t>(p * 300), p).to_vector());
}

// The warm-up compiles every kernel that a prompt's prefill, the decode steps and the samplers
// given to it (greedy and random) launch, on
// threads (EngineOptions::compile_jobs 0) or one after another (1): afterwards they compile and
// load nothing, and give the logits of a model that compiled its kernels as it launched them. A
// context of 160 positions also runs a step past 128 positions (split-KV, or the short attention
// over 256), whose kernels the warm-up compiles too (they are loaded at that step).
void warm_up_compiles_all(Target target) {
  const ModelConfig config = config_named("gqa5");
  const WeightSource source = WeightSource::synthetic(3);
  struct Case {
    std::int64_t context, prompt, short_positions;
  };
  for (const auto [context, prompt, short_positions] : {Case{32, 5, 128}, Case{160, 130, 128}, Case{160, 130, 256}}) {
    const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, static_cast<std::size_t>(prompt));
    EngineOptions plain_options = engine_options(target, context);
    plain_options.short_attention_positions = short_positions;
    Model plain(config, source, plain_options);
    plain.prefill(tokens);
    const std::vector<float> want = plain.decode_step(7, prompt).to_vector();
    for (const unsigned jobs : {0u, 1u}) {
      INFO(jobs << " compile jobs, context " << context << ", short attention up to " << short_positions);
      EngineOptions o = plain_options;
      o.compile_jobs = jobs;
      tessera::clear_memory_cache();
      Model model(config, source, o);
      Sampler greedy(config.vocab_size, SamplingParams{}, target);
      Sampler random(config.vocab_size, SamplingParams{.temperature = 1.0, .seed = 5}, target);
      std::vector<tessera::PendingCompile> sampling = greedy.pending_compiles(model.logits());
      for (tessera::PendingCompile& c : random.pending_compiles(model.logits())) sampling.push_back(std::move(c));
      model.warm_up(std::move(sampling));
      const tessera::CacheStats warm = tessera::cache_stats();
      model.prefill(tokens);
      const tessera::Tensor<float, 1>& logits = model.decode_step(7, prompt);
      const std::vector<float> got = logits.to_vector();
      const std::int32_t token = greedy.sample(logits);
      random.sample(logits);
      CHECK(tessera::cache_stats().compiles == warm.compiles);
      CHECK(tessera::cache_stats().disk_hits == warm.disk_hits);
      CHECK(got == want);
      CHECK(token == static_cast<std::int32_t>(std::max_element(got.begin(), got.end()) - got.begin()));
    }
  }
}

// After the warm-up, steps at every number of attention splits a context of 1024 positions
// reaches (1 to 16: the part tensors' shape changes with it) compile and load nothing from disk,
// with the plain split and with the prefetching one (which the steps with 16 splits run).
void warm_up_covers_splits(Target target) {
  const ModelConfig config = config_named("gqa5");
  const WeightSource source = WeightSource::synthetic(3);
  const std::int64_t context = 1024;
  const std::vector<std::int32_t> tokens = tokens_below(config.vocab_size, static_cast<std::size_t>(context - 1));
  for (const bool prefetch : {false, true}) {
    tessera::clear_memory_cache();
    EngineOptions o = engine_options(target, context);
    o.split_prefetch = prefetch;
    Model model(config, source, o);
    model.warm_up();
    model.prefill(tokens);
    const tessera::CacheStats warm = tessera::cache_stats();
    for (std::int64_t position = context - 1; position >= 128; position -= 64) {
      INFO("position " << position << ", prefetch " << prefetch);
      model.decode_step(7, position);
      CHECK(tessera::cache_stats().compiles == warm.compiles);
      CHECK(tessera::cache_stats().disk_hits == warm.disk_hits);
    }
  }
}

template <class E>
std::string message_of(auto&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

QWEN3_TARGET_TEST_CASE("model: tiny teacher-forced logits", "[engine][model]", tiny_logits)
QWEN3_TARGET_TEST_CASE("model: gqa5 untied teacher-forced logits", "[engine][model]", gqa5_logits)
QWEN3_TARGET_TEST_CASE("model: capped registers and early weight loads keep the logits", "[engine][model]",
                       capped_products_logits)
QWEN3_TARGET_TEST_CASE("model: mha-long, fused attention then split-kv, teacher-forced logits", "[engine][model]",
                       mha_long_fused_logits)
QWEN3_TARGET_TEST_CASE("model: mha-long, short attention then split-kv, teacher-forced logits", "[engine][model]",
                       mha_long_short_logits)
QWEN3_TARGET_TEST_CASE("model: mha-long, short attention of 128 then 256, teacher-forced logits", "[engine][model]",
                       mha_long_short_256_logits)
QWEN3_TARGET_TEST_CASE("model: mha-long split-kv teacher-forced logits", "[engine][model]", mha_long_logits)
QWEN3_TARGET_TEST_CASE("model: mha-long split-kv with prefetch, teacher-forced logits", "[engine][model]",
                       mha_long_prefetch_logits)
QWEN3_TARGET_TEST_CASE("model: the tolerance separates a wrong model", "[engine][model]", tolerance_separates)
QWEN3_TARGET_TEST_CASE("model: greedy tokens equal the reference's for 20 steps", "[engine][model]", greedy_identical)
QWEN3_TARGET_TEST_CASE("model: prefill and rewind", "[engine][model]", prefill_and_rewind)
QWEN3_TARGET_TEST_CASE("model: the warm-up compiles every kernel, on threads or not", "[engine][model][counts-compiles]",
                       warm_up_compiles_all)
QWEN3_TARGET_TEST_CASE("model: after the warm-up, steps at every split count compile nothing",
                       "[engine][model][counts-compiles]", warm_up_covers_splits)
QWEN3_TARGET_TEST_CASE("model: checkpoint folder equals in-place synthetic", "[engine][model]",
                       checkpoint_equals_synthetic)

TEST_CASE("model: bad calls and unsupported configs are clear errors", "[engine][model][cpu]") {
  const ModelConfig config = config_named("mha-long");
  const WeightSource source = WeightSource::synthetic(1);
  Model model(config, source, engine_options(Target::cpu, 8));
  CHECK_THAT(message_of<Error>([&] { model.decode_step(500, 0); }),
             Catch::Contains("token id 500 is outside the vocabulary [0, 500)"));
  CHECK_THAT(message_of<Error>([&] { model.decode_step(-1, 0); }), Catch::Contains("token id -1"));
  CHECK_THAT(message_of<Error>([&] { model.decode_step(1, 1); }),
             Catch::Contains("position 1 cannot be decoded: the KV cache holds positions 0..-1"));
  const std::vector<std::int32_t> eight(8, 3);
  model.prefill(eight);
  CHECK_THAT(message_of<ContextLimitError>([&] { model.decode_step(1, 8); }),
             Catch::Contains("position 8 is past the context limit of 8 tokens"));
  const std::vector<std::int32_t> nine(9, 3);
  CHECK_THAT(message_of<ContextLimitError>([&] { model.prefill(nine); }),
             Catch::Contains("a prompt of 9 tokens at position 0 does not fit the context limit of 8"));
  CHECK_THAT(message_of<Error>([&] { model.prefill({}); }), Catch::Contains("the prompt has no tokens"));

  Sampler sampler(config.vocab_size, SamplingParams{}, Target::cpu);
  GenerateOptions options;
  options.max_new_tokens = 6;
  const std::vector<std::int32_t> three(3, 3);
  CHECK_THAT(message_of<ContextLimitError>([&] { generate(model, sampler, three, options); }),
             Catch::Contains("the prompt (3 tokens) and up to 6 new tokens need 9 positions, more than the context "
                             "limit of 8"));

  ModelConfig wide = config;
  wide.head_dim = 64;
  CHECK_THAT(message_of<ModelError>([&] { Model m(wide, source, engine_options(Target::cpu, 8)); }),
             Catch::Contains("head_dim 64 is not supported"));
  ModelConfig ragged = config;
  ragged.num_attention_heads = 3;
  CHECK_THAT(message_of<ModelError>([&] { Model m(ragged, source, engine_options(Target::cpu, 8)); }),
             Catch::Contains("num_attention_heads 3 is not a multiple of num_key_value_heads 2"));
  ModelConfig many = config;
  many.num_attention_heads = 34;
  CHECK_THAT(message_of<ModelError>([&] { Model m(many, source, engine_options(Target::cpu, 8)); }),
             Catch::Contains("17 query heads per KV head"));
}

// The RoPE tables (which the reference shares, so the model tests cannot see a wrong formula)
// against cos and sin of position * theta^(-2i / 128) in double: the f32 angle is off by at most
// a few ulps of itself (the f32 inverse frequency and product), so the values by as much.
TEST_CASE("rope table: transformers' default RoPE", "[engine][model][cpu]") {
  for (double theta : {1e6, 5e6}) {
    const RopeTable t = make_rope_table(theta, 128, 3000);
    REQUIRE(t.half == 64);
    int64_t bad = 0;
    for (int64_t p = 0; p < 3000; p += 7)
      for (int64_t i = 0; i < 64; ++i) {
        const double angle = static_cast<double>(p) * std::pow(theta, -2.0 * static_cast<double>(i) / 128.0);
        const double tol = 4 * 0x1p-24 * angle + 1e-7;
        bad +=
            std::abs(t.cos[p * 64 + i] - std::cos(angle)) > tol || std::abs(t.sin[p * 64 + i] - std::sin(angle)) > tol;
      }
    CHECK(bad == 0);
  }
}
