// model.cpp: Model, the decode step and the prefill as sequences of tile-kernel launches (see
// model.h).
#include "model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "errors.h"
#include "kernels/attention.h"
#include "kernels/attention_fused.h"
#include "kernels/attention_short.h"
#include "kernels/decode_step.h"
#include "kernels/embedding.h"
#include "kernels/matvec.h"
#include "kernels/prefill_attention.h"
#include "kernels/prefill_embedding.h"
#include "kernels/prefill_matmul.h"
#include "kernels/prefill_qk_norm_rope.h"
#include "kernels/prefill_rmsnorm.h"
#include "kernels/prefill_tiles.h"
#include "kernels/qk_norm_rope.h"
#include "rope_table.h"

namespace qwen3 {

using tessera::bfloat16;
using tessera::Tensor;
namespace k = kernels;

namespace {

constexpr std::int64_t kHeadDim = 128;
constexpr std::int64_t kMaxGroup = 16;
constexpr std::int64_t kDefaultContext = 4096;

// Calls f(std::integral_constant<int, GP>) for the power of two GP >= group (group <= kMaxGroup):
// the query-head tile of the attention kernels is static.
template <class F>
void with_group_tile(std::int64_t group, F&& f) {
  switch (k::next_power_of_two(group)) {
    case 1:
      return f(std::integral_constant<int, 1>{});
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
  }
  throw Error(fmt::format("{} query heads per KV head: at most {} are supported", group, kMaxGroup));
}

}  // namespace

void check_engine_config(const ModelConfig& c) {
  using Kind = ModelError::Kind;
  if (c.head_dim != kHeadDim)
    throw ModelError(Kind::kUnsupported, fmt::format("head_dim {} is not supported: the engine's kernels are written "
                                                     "for head_dim {} (that of every Qwen3 model)",
                                                     c.head_dim, kHeadDim));
  if (c.num_key_value_heads <= 0 || c.num_attention_heads % c.num_key_value_heads != 0)
    throw ModelError(Kind::kUnsupported,
                     fmt::format("num_attention_heads {} is not a multiple of num_key_value_heads {}",
                                 c.num_attention_heads, c.num_key_value_heads));
  if (c.gqa_group() > kMaxGroup)
    throw ModelError(Kind::kUnsupported,
                     fmt::format("{} query heads per KV head (num_attention_heads {} / "
                                 "num_key_value_heads {}): at most {} are supported",
                                 c.gqa_group(), c.num_attention_heads, c.num_key_value_heads, kMaxGroup));
  if (c.vocab_size > std::numeric_limits<std::int32_t>::max() || c.hidden_size > (1 << 30) ||
      c.intermediate_size > (1 << 30))
    throw ModelError(Kind::kUnsupported, "sizes past 2^30 are not supported (kernel indices are i32)");
}

// The KV cache, the RoPE tables and the activations of one decode step, with the views the
// kernels read them through.
struct Model::Scratch {
  // `positions`: the caches' positions (kernels::attention_cache_positions of the context).
  Scratch(const ModelConfig& c, std::int64_t context, std::int64_t positions, std::int64_t max_splits,
          tessera::Target target);

  // Launches (or, while `compiles` is set, only describes the compile of) each kernel the
  // engine runs.
  template <class Kernel, class... Args>
  void run(const Kernel& kernel, Args&&... args) {
    run_with(options, kernel, std::forward<Args>(args)...);
  }
  // A decode product with `hints` (threads, bulk rings of weight tiles, split, occupancy; 0: the
  // compiler's choice) and the launch's own early frozen steps.
  template <class Kernel, class... Args>
  void run_product(tessera::CompilerHints hints, const Kernel& kernel, Args&&... args) {
    hints.bulk_streams = hints.stream_stages > 0;
    hints.early_frozen_steps = options.hints.early_frozen_steps;
    run_hinted(hints, kernel, std::forward<Args>(args)...);
  }
  // A launch with its own CompilerHints and nothing else of the decode products' (the prefill's
  // split GEMMs).
  template <class Kernel, class... Args>
  void run_hinted(const tessera::CompilerHints& hints, const Kernel& kernel, Args&&... args) {
    tessera::LaunchOptions o = options;
    o.hints = hints;
    run_with(o, kernel, std::forward<Args>(args)...);
  }
  template <class Kernel, class... Args>
  void run_with(const tessera::LaunchOptions& o, const Kernel& kernel, Args&&... args) {
    if (compiles)
      compiles->push_back(kernel.pending_compile(o, std::forward<Args>(args)...));
    else
      std::move(kernel.launch_async(o, std::forward<Args>(args)...)).detach();
    ++launches;
  }
  std::size_t launches = 0;  // launches so far (a graph numbers its launches in capture order)
  // Where run() puts the compiles of its kernels instead of launching them (Model::warm_up).
  std::vector<tessera::PendingCompile>* compiles = nullptr;

  Tensor<bfloat16, 3> k_all, v_all;  // [layers * n_kv, positions, 128]: attention_cache_positions(context)
  std::vector<Tensor<bfloat16, 3>> k_cache, v_cache;  // per layer: views [n_kv, positions, 128]
  std::vector<Tensor<bfloat16, 4>> k_halves, v_halves;  // the same, [n_kv, positions, 2, 64]
  // Per layer: views [n_kv, context, 128], what Model::k_cache() and v_cache() return.
  std::vector<Tensor<bfloat16, 3>> k_context, v_context;
  Tensor<bfloat16, 2> k_new, v_new;                   // the step's new K and V rows [layers * n_kv, 128]
  Tensor<float, 2> rope_cos, rope_sin;                // [context, 64]
  Tensor<float, 2> cos_now, sin_now;                  // the step's rows of the tables [1, 64]
  Tensor<std::int32_t, 2> seq;                        // [1, 1]: the step's position + 1
  Tensor<float, 1> x;                                 // residual stream [hidden]
  Tensor<float, 1> qkv;                               // [q_width + 2 kv_width]
  Tensor<float, 4> q_in;                              // views of qkv: [n_kv, G, 2, 64]
  Tensor<float, 3> k_in;                              //   [n_kv, 2, 64]
  Tensor<float, 2> v_in;                              //   [n_kv, 128]
  Tensor<bfloat16, 3> q;                              // [n_kv, G, 128]
  Tensor<float, 3> part_o, part_m, part_l;            // [n_kv, max splits, G * 128 | G | G]
  Tensor<float, 1> attn;                              // [q_width]
  Tensor<float, 2> attn_by_kv_head;                   // view of attn: [n_kv, G * 128]
  Tensor<float, 1> mlp;                               // [intermediate]
  Tensor<float, 1> logits;                            // [vocab]
  tessera::LaunchOptions options;                     // the target and the model's stream
  // The step's scalars, read at each launch and each graph replay.
  tessera::Scalar<std::int32_t> token, position, chunks_per_split;
};

// The activations of one prefill chunk, sized for prefill_chunk tokens; a chunk of T tokens uses
// their first T rows (views).
struct Model::PrefillScratch {
  PrefillScratch(const ModelConfig& c, std::int64_t chunk)
      : x({chunk, c.hidden_size}),
        x_mid({chunk, c.hidden_size}),
        normed({chunk, c.hidden_size}),
        qkv({chunk, c.q_width() + 2 * c.kv_width()}),
        q({c.num_attention_heads, chunk, kHeadDim}),
        attn({chunk, c.q_width()}),
        gate({chunk, c.intermediate_size}),
        mlp({chunk, c.intermediate_size}) {}

  // The residual stream [chunk, hidden]: a layer's input, and after attention; bf16 as in transformers
  // (its f32 bytes cost o_proj and down 15% of their time on the H100).
  Tensor<bfloat16, 2> x, x_mid;
  Tensor<bfloat16, 2> normed;  // bf16(rmsnorm(x)) [chunk, hidden], a GEMM operand
  Tensor<bfloat16, 2> qkv;     // [chunk, q_width + 2 kv_width]
  Tensor<bfloat16, 3> q;       // [n_heads, chunk, 128]
  Tensor<bfloat16, 2> attn;    // [chunk, q_width]
  Tensor<bfloat16, 2> gate;    // [chunk, intermediate]
  Tensor<bfloat16, 2> mlp;     // silu(gate) * up [chunk, intermediate]
};

// The decode step of one number of attention splits (or of a one-kernel attention), and where each
// layer's K/V append is.
struct Model::DecodeGraph {
  explicit DecodeGraph(tessera::Target target) : graph(target) {}
  tessera::Graph graph;
  std::size_t append = 0;  // the launch index of kv_append
};

Model::Scratch::Scratch(const ModelConfig& c, std::int64_t context, std::int64_t positions, std::int64_t max_splits,
                        tessera::Target target)
    : k_all({c.num_hidden_layers * c.num_key_value_heads, positions, kHeadDim}),
      v_all({c.num_hidden_layers * c.num_key_value_heads, positions, kHeadDim}),
      k_new({c.num_hidden_layers * c.num_key_value_heads, kHeadDim}),
      v_new({c.num_hidden_layers * c.num_key_value_heads, kHeadDim}),
      rope_cos({context, kHeadDim / 2}),
      rope_sin({context, kHeadDim / 2}),
      cos_now({1, kHeadDim / 2}),
      sin_now({1, kHeadDim / 2}),
      seq({1, 1}),
      x({c.hidden_size}),
      qkv({c.q_width() + 2 * c.kv_width()}),
      q_in(qkv.slice(0, 0, c.q_width()).reshape<4>({c.num_key_value_heads, c.gqa_group(), 2, kHeadDim / 2})),
      k_in(qkv.slice(0, c.q_width(), c.q_width() + c.kv_width()).reshape<3>({c.num_key_value_heads, 2, kHeadDim / 2})),
      v_in(qkv.slice(0, c.q_width() + c.kv_width(), c.q_width() + 2 * c.kv_width())
               .reshape<2>({c.num_key_value_heads, kHeadDim})),
      q({c.num_key_value_heads, c.gqa_group(), kHeadDim}),
      part_o({c.num_key_value_heads, max_splits, c.gqa_group() * kHeadDim}),
      part_m({c.num_key_value_heads, max_splits, c.gqa_group()}),
      part_l({c.num_key_value_heads, max_splits, c.gqa_group()}),
      attn({c.q_width()}),
      attn_by_kv_head(attn.slice(0, 0, c.q_width()).reshape<2>({c.num_key_value_heads, c.gqa_group() * kHeadDim})),
      mlp({c.intermediate_size}),
      logits({c.vocab_size}) {
  const std::int64_t n_kv = c.num_key_value_heads;
  for (std::int64_t l = 0; l < c.num_hidden_layers; ++l) {
    k_cache.push_back(k_all.slice(0, l * n_kv, (l + 1) * n_kv));
    v_cache.push_back(v_all.slice(0, l * n_kv, (l + 1) * n_kv));
    k_halves.push_back(k_all.slice(0, l * n_kv, (l + 1) * n_kv).reshape<4>({n_kv, positions, 2, kHeadDim / 2}));
    v_halves.push_back(v_all.slice(0, l * n_kv, (l + 1) * n_kv).reshape<4>({n_kv, positions, 2, kHeadDim / 2}));
    k_context.push_back(k_cache.back().slice(1, 0, context));
    v_context.push_back(v_cache.back().slice(1, 0, context));
  }
  const RopeTable rope = make_rope_table(c.rope_theta, kHeadDim, context);
  std::copy(rope.cos.begin(), rope.cos.end(), rope_cos.data());
  std::copy(rope.sin.begin(), rope.sin.end(), rope_sin.data());
  options.target = target;
  options.stream = tessera::Stream::create();
}

namespace {

std::int64_t context_limit_of(const ModelConfig& config, const EngineOptions& options) {
  const std::int64_t context =
      options.context_limit > 0 ? options.context_limit : std::min(config.max_position_embeddings, kDefaultContext);
  if (context > (1 << 30)) throw Error(fmt::format("context limit {} is past 2^30 positions", context));
  return context;
}

// The shorter of decode_attention_short's two chunks: steps at up to this many positions run it,
// longer ones up to EngineOptions::short_attention_positions the other (256).
constexpr int kShortPositions = 128;

// EngineOptions::short_attention_positions: 0 or a chunk decode_attention_short is built for.
std::int64_t checked_short_attention(std::int64_t positions) {
  if (positions != 0 && positions != 128 && positions != 256)
    throw Error(fmt::format("short_attention_positions must be 0, 128 or 256, not {}", positions));
  return positions;
}

DeviceWeights checked_weights(const ModelConfig& config, const WeightSource& source, tessera::Target target,
                              unsigned threads) {
  check_engine_config(config);
  return DeviceWeights::load(config, source, target, threads);
}

}  // namespace

Model::Model(const ModelConfig& config, const WeightSource& source, const EngineOptions& options)
    : config_(config),
      target_(options.target.value_or(tessera::default_target())),
      context_(context_limit_of(config, options)),
      attention_programs_(std::max<std::int64_t>(1, options.attention_programs)),
      fused_attention_positions_(std::max<std::int64_t>(0, options.fused_attention_positions)),
      short_attention_positions_(checked_short_attention(options.short_attention_positions)),
      split_prefetch_(options.split_prefetch),
      product_threads_(options.product_threads),
      compile_jobs_(options.compile_jobs),
      stream_stages_(options.stream_stages),
      split_k_(options.split_k),
      norm_occupancy_(options.norm_product_occupancy.value_or(
          config.intermediate_size < k::kSmallModelIntermediate ? 0 : k::kNormProductOccupancy)),
      residual_occupancy_(options.residual_product_occupancy),
      residual_threads_(options.residual_product_threads),
      prefill_split_k_(options.prefill_split_k),
      prefill_chunk_(std::min(std::max<std::int64_t>(1, options.prefill_chunk), context_)),
      weights_(checked_weights(config, source, target_, options.threads)) {
  const std::int64_t max_splits =
      k::max_attention_splits(attention_programs_, config.num_key_value_heads, context_, k::kAttentionChunk);
  // The short attention loads the cache's first 128 or 256 positions as whole tiles.
  const std::int64_t positions =
      std::max(k::attention_cache_positions(context_, k::kAttentionChunk, max_splits), short_attention_positions_);
  scratch_ = std::make_unique<Scratch>(config_, context_, positions, max_splits, target_);
  scratch_->options.hints.early_frozen_steps = options.early_weight_steps;
}

Model::Model(Model&&) noexcept = default;
Model& Model::operator=(Model&&) noexcept = default;
Model::~Model() = default;

const Tensor<bfloat16, 3>& Model::k_cache(std::size_t layer) const { return scratch_->k_context.at(layer); }
const Tensor<bfloat16, 3>& Model::v_cache(std::size_t layer) const { return scratch_->v_context.at(layer); }

void Model::check_step(std::int32_t token, std::int64_t position) const {
  if (token < 0 || token >= config_.vocab_size)
    throw Error(fmt::format("token id {} is outside the vocabulary [0, {})", token, config_.vocab_size));
  if (position >= context_)
    throw ContextLimitError(fmt::format("position {} is past the context limit of {} tokens", position, context_));
  if (position < 0 || position > cached_)
    throw Error(
        fmt::format("position {} cannot be decoded: the KV cache holds positions 0..{} (a step may run at "
                    "any position up to the next one, {})",
                    position, cached_ - 1, cached_));
}

const Tensor<float, 1>& Model::decode_step(std::int32_t token, std::int64_t position) {
  check_step(token, position);
  step(token, position, true, /*graph=*/true);
  return scratch_->logits;
}

const Tensor<float, 1>& Model::prefill(std::span<const std::int32_t> tokens, std::int64_t start) {
  if (tokens.empty()) throw Error("prefill: the prompt has no tokens");
  if (start < 0 || start > cached_)
    throw Error(fmt::format("prefill at position {}: the KV cache holds positions 0..{}", start, cached_ - 1));
  const std::int64_t end = start + static_cast<std::int64_t>(tokens.size());
  if (end > context_)
    throw ContextLimitError(
        fmt::format("a prompt of {} tokens at position {} does not fit the context limit of {} "
                    "tokens",
                    tokens.size(), start, context_));
  for (std::int32_t token : tokens)
    if (token < 0 || token >= config_.vocab_size)
      throw Error(fmt::format("token id {} is outside the vocabulary [0, {})", token, config_.vocab_size));
  if (!prefill_scratch_) prefill_scratch_ = std::make_unique<PrefillScratch>(config_, prefill_chunk_);
  // Positions from `start` on are overwritten: if a launch throws, the cache holds those before.
  forget_from(start);
  for (std::size_t done = 0; done < tokens.size();) {
    const std::size_t n = std::min(tokens.size() - done, static_cast<std::size_t>(prefill_chunk_));
    launch_prefill_chunk(tokens.subspan(done, n), start + static_cast<std::int64_t>(done), done + n == tokens.size());
    done += n;
  }
  cached_ = end;
  cached_tokens_.insert(cached_tokens_.end(), tokens.begin(), tokens.end());
  return scratch_->logits;
}

std::vector<tessera::PendingCompile> Model::prefill_variants() {
  std::vector<tessera::PendingCompile> compiles;
  constexpr int BM = k::kPrefillGemmRows, BN = k::kPrefillGemmCols, BK = k::kPrefillGemmDepth;
  PrefillScratch& ps = *prefill_scratch_;
  Scratch& s = *scratch_;
  const LayerWeights& w = weights_.layers.front();
  const auto eps = static_cast<float>(config_.rms_norm_eps);
  const auto k_column = static_cast<std::int32_t>(config_.q_width() / 64);
  const auto v_column = static_cast<std::int32_t>((config_.q_width() + config_.kv_width()) / kHeadDim);
  // The q/k norm + RoPE kernels at both position tiles, a whole chunk and a ragged one of each (a
  // tile of 16 serves chunks of fewer than 64 positions only).
  auto norm_rope = [&]<int BT>(std::int64_t t) {
    if (t > prefill_chunk_) return;
    Tensor<bfloat16, 2> qkv = ps.qkv.slice(0, 0, t);
    Tensor<bfloat16, 3> q = ps.q.slice(1, 0, t), k_rows = s.k_cache.front().slice(1, 0, t),
                        v_rows = s.v_cache.front().slice(1, 0, t);
    const Tensor<float, 2> cos_rows = s.rope_cos.slice(0, 0, t), sin_rows = s.rope_sin.slice(0, 0, t);
    compiles.push_back(k::prefill_q_norm_rope<BT>().pending_compile(s.options, q.partition<1, BT, 128>(), qkv,
                                                                      w.q_norm, cos_rows, sin_rows, eps));
    compiles.push_back(k::prefill_kv_norm_rope_append<BT>().pending_compile(
        s.options, k_rows.partition<1, BT, 128>(), v_rows.partition<1, BT, 128>(), qkv, w.k_norm, cos_rows, sin_rows,
        k_column, v_column, eps));
  };
  norm_rope.template operator()<k::kPrefillRopeRowsShort>(k::kPrefillRopeRowsShort);
  norm_rope.template operator()<k::kPrefillRopeRowsShort>(1);
  norm_rope.template operator()<k::kPrefillRopeRows>(k::kPrefillRopeRows);
  norm_rope.template operator()<k::kPrefillRopeRows>(k::kPrefillRopeRows + 1);
  // The CPU target ignores the split: its GEMMs are the ones the prefills above compiled.
  if (target_ == tessera::Target::cpu || prefill_split_k_) return compiles;
  // A whole chunk and a ragged one, at every split the rule chooses.
  for (const std::int64_t t : {prefill_chunk_, std::int64_t{1}}) {
    Tensor<bfloat16, 2> x = ps.x.slice(0, 0, t), x_mid = ps.x_mid.slice(0, 0, t), attn = ps.attn.slice(0, 0, t),
                        mlp = ps.mlp.slice(0, 0, t);
    for (const int split : k::kPrefillResidualSplits) {
      tessera::LaunchOptions o = scratch_->options;
      o.hints = tessera::CompilerHints{.split_k = split};
      compiles.push_back(
          k::prefill_matmul_residual<BM, BN, BK>().pending_compile(o, x_mid.partition<BM, BN>(), attn, w.o.transposed(), x));
      compiles.push_back(k::prefill_matmul_residual<BM, BN, BK>().pending_compile(o, x.partition<BM, BN>(), mlp,
                                                                                  w.down.transposed(), x_mid));
    }
  }
  return compiles;
}

const Tensor<float, 1>& Model::logits() const { return scratch_->logits; }

const Tensor<float, 1>& Model::warm_up(std::vector<tessera::PendingCompile> extra) {
  // A prefill of 128 tokens (whole tiles, where the model's sizes allow) and one of one token
  // (ragged tiles): a kernel is compiled once for each (LaunchOptions::whole_tiles).
  const std::vector<std::int32_t> zeros(static_cast<std::size_t>(std::min<std::int64_t>(prefill_chunk_, 128)), 0);
  const std::span<const std::int32_t> one = std::span(zeros).first(1);
  if (!prefill_scratch_) prefill_scratch_ = std::make_unique<PrefillScratch>(config_, prefill_chunk_);
  // Their kernels and the step's, compiled first on threads: the same launches, described
  // instead of run (Scratch::compiles), with the attention step(0, 0) chooses.
  std::vector<tessera::PendingCompile> compiles = prefill_variants();
  {
    scratch_->compiles = &compiles;
    struct Describing {
      Scratch& s;
      ~Describing() { s.compiles = nullptr; }
    } describing{*scratch_};
    launch_prefill_chunk(zeros, 0, true);
    launch_prefill_chunk(one, 0, true);
    // The step at position 0, and steps of every other attention form that longer contexts run
    // (their kernels are compiled here and loaded at their first step).
    const std::int64_t first_positions[] = {1, kShortPositions + 1, short_attention_positions_ + 1,
                                            fused_attention_positions_ + 1};
    const std::int64_t max_splits = scratch_->part_m.shape(1);
    std::vector<StepAttention> described;
    for (const std::int64_t positions : first_positions) {
      const StepAttention form = step_attention(positions);
      if (positions > context_ || std::find(described.begin(), described.end(), form) != described.end()) continue;
      described.push_back(form);
      const std::int64_t splits =
          form != StepAttention::split ? 1 : k::attention_splits(positions, k::kAttentionChunk, max_splits).splits;
      launch_step(form, splits, 0, true);
      // Steps with more splits may run the other split kernel.
      if (form == StepAttention::split && prefetched_split(max_splits) != prefetched_split(splits))
        launch_step(form, max_splits, 0, true);
    }
  }
  std::move(extra.begin(), extra.end(), std::back_inserter(compiles));
  tessera::compile_all(compiles, compile_jobs_);
  prefill(zeros, 0);
  prefill(one, 0);
  step(0, 0, true);
  static_cast<const Tensor<float, 1>&>(scratch_->logits).data();  // waits for both
  forget_from(0);
  return scratch_->logits;
}

void Model::forget_from(std::int64_t position) {
  cached_ = position;
  cached_tokens_.resize(static_cast<std::size_t>(position));
}

void Model::step(std::int32_t token, std::int64_t position, bool logits, bool graph) {
  Scratch& s = *scratch_;
  forget_from(position);
  // While the context is short, the attention in one kernel; then at most as many splits as the
  // part tensors hold, each of whole chunks, fewer while the context is short.
  const StepAttention form = step_attention(position + 1);
  const auto [chunks_per_split, splits] =
      form != StepAttention::split ? k::AttentionSplits{(position + k::kAttentionChunk) / k::kAttentionChunk, 1}
                                   : k::attention_splits(position + 1, k::kAttentionChunk, s.part_m.shape(1));
  s.token.set(token);
  s.position.set(static_cast<std::int32_t>(position));
  s.chunks_per_split.set(static_cast<std::int32_t>(chunks_per_split));
  if (!graph) {
    launch_step(form, splits, position, logits);
  } else {
    if (graphs_.size() < static_cast<std::size_t>(splits)) graphs_.resize(static_cast<std::size_t>(splits));
    std::unique_ptr<DecodeGraph>& g = form == StepAttention::short_128   ? short_graphs_[0]
                                      : form == StepAttention::short_256 ? short_graphs_[1]
                                      : form == StepAttention::fused     ? fused_graph_
                                                                         : graphs_[static_cast<std::size_t>(splits - 1)];
    if (!g) {
      g = std::make_unique<DecodeGraph>(target_);
      auto recording = g->graph.capture();
      g->append = launch_step(form, splits, position, logits);
    }
    auto k_slot = s.k_all.slice(1, position, position + 1);
    auto v_slot = s.v_all.slice(1, position, position + 1);
    g->graph.move_view(g->append, 0, k_slot);  // parameters 0 and 1 of kv_append
    g->graph.move_view(g->append, 1, v_slot);
    std::move(g->graph.replay_async(s.options)).detach();
  }
  cached_ = position + 1;
  cached_tokens_.push_back(token);
}

bool Model::prefetched_split(std::int64_t splits) const {
  return split_prefetch_ && splits == scratch_->part_m.shape(1);
}

Model::StepAttention Model::step_attention(std::int64_t positions) const {
  if (positions <= std::min<std::int64_t>(kShortPositions, short_attention_positions_)) return StepAttention::short_128;
  if (positions <= short_attention_positions_) return StepAttention::short_256;
  if (positions <= fused_attention_positions_) return StepAttention::fused;
  return StepAttention::split;
}

std::size_t Model::launch_step(StepAttention form, std::int64_t splits, std::int64_t position, bool logits) {
  constexpr int R = k::kMatvecRows, BK = k::kMatvecCols;
  const ModelConfig& c = config_;
  Scratch& s = *scratch_;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const float scale = static_cast<float>(1 / std::sqrt(static_cast<double>(kHeadDim)));
  const std::int64_t n_kv = c.num_key_value_heads;
  const int norm_threads = product_threads_ || stream_stages_ ? k::kNormMatvecThreads : 0;
  const int stages = stream_stages_;
  // The products with a folded RMSNorm (QKV, gate/up, LM head) and the residual ones (o_proj, down).
  const tessera::CompilerHints norm{.occupancy = norm_occupancy_, .stream_stages = stages, .threads = norm_threads};
  const tessera::CompilerHints residual{
      .occupancy = residual_occupancy_, .threads = residual_threads_, .split_k = split_k_};
  s.launches = 0;
  s.run(k::embedding_gather<k::kEmbeddingTile>(), s.x.partition<k::kEmbeddingTile>(), weights_.embed, s.token);
  s.run(k::step_rows(), s.cos_now.partition<1, 64>(), s.sin_now.partition<1, 64>(), s.seq.partition<1, 1>(),
        s.rope_cos, s.rope_sin, s.position);
  with_group_tile(c.gqa_group(), [&]<int GP>(std::integral_constant<int, GP>) {
    auto part_o = s.part_o.slice(1, 0, splits);
    auto part_m = s.part_m.slice(1, 0, splits);
    auto part_l = s.part_l.slice(1, 0, splits);
    for (std::size_t l = 0; l < weights_.layers.size(); ++l) {
      const LayerWeights& w = weights_.layers[l];
      const auto layer = static_cast<std::int64_t>(l);
      s.run_product(norm, k::rmsnorm_matvec<R, BK>(), s.qkv.partition<R>(), w.qkv, s.x, w.input_norm, eps);
      // The layer's new K and V rows, [n_kv, 128] (the kernels' [n_kv, 1, 128] slot shape for the
      // writer); the tables' rows at the position are step_rows' (row 0).
      auto k_row = s.k_new.slice(0, layer * n_kv, (layer + 1) * n_kv);
      auto v_row = s.v_new.slice(0, layer * n_kv, (layer + 1) * n_kv);
      auto k_slot = s.k_new.slice(0, layer * n_kv, (layer + 1) * n_kv).reshape<3>({n_kv, 1, kHeadDim});
      auto v_slot = s.v_new.slice(0, layer * n_kv, (layer + 1) * n_kv).reshape<3>({n_kv, 1, kHeadDim});
      if (form == StepAttention::short_128 || form == StepAttention::short_256) {
        auto short_attention = [&]<int CH>(std::integral_constant<int, CH>) {
          s.run(k::decode_attention_short<GP, CH>(), s.attn_by_kv_head.partition<1, GP * 128>(),
                k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), s.q_in, s.k_in, s.v_in, w.q_norm,
                w.k_norm, s.cos_now, s.sin_now, s.k_halves[l], s.v_halves[l], s.seq, eps, scale);
        };
        if (form == StepAttention::short_128)
          short_attention(std::integral_constant<int, kShortPositions>{});
        else
          short_attention(std::integral_constant<int, 256>{});
      } else if (form == StepAttention::fused) {
        s.run(k::decode_attention_fused<GP, k::kAttentionChunk>(), s.attn_by_kv_head.partition<1, GP * 128>(),
              k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), s.q_in, s.k_in, s.v_in, w.q_norm,
              w.k_norm, s.cos_now, s.sin_now, s.k_cache[l], s.v_cache[l], s.seq, s.chunks_per_split, eps, scale);
      } else {
        s.run(k::qk_norm_rope_append<GP>(), s.q.partition<1, GP, 128>(), k_slot.partition<1, 1, 128>(),
              v_slot.partition<1, 1, 128>(), s.q_in, s.k_in, s.v_in, w.q_norm, w.k_norm, s.cos_now, s.sin_now,
              eps);
        auto split = [&]<bool P>(std::bool_constant<P>) {
          s.run(k::decode_attention_split<GP, k::kAttentionChunk, P>(), part_o.partition<1, 1, GP * 128>(),
                part_m.partition<1, 1, GP>(), part_l.partition<1, 1, GP>(), s.q, s.k_cache[l], s.v_cache[l], k_row,
                v_row, s.seq, s.chunks_per_split, scale);
        };
        if (prefetched_split(splits))
          split(std::true_type{});
        else
          split(std::false_type{});
        s.run(k::decode_attention_combine<GP>(), s.attn_by_kv_head.partition<1, GP * 128>(), part_o, part_m,
              part_l);
      }
      // Streamed: the residual products at 8 x 512 and 256 threads (twice the programs of
      // 16 x 512, each with its own ring).
      constexpr int SR = k::kStreamResidualRows;
      const tessera::CompilerHints streamed{.stream_stages = stages, .threads = k::kStreamThreads};
      if (stages)
        s.run_product(streamed, k::matvec_residual<SR, BK>(), s.x.partition<SR>(), w.o, s.attn);
      else
        s.run_product(residual, k::matvec_residual<R, BK>(), s.x.partition<R>(), w.o, s.attn);
      if (c.intermediate_size < k::kSmallModelIntermediate) {
        constexpr int SR = k::kSmallSwigluTileRows, SBK = k::kSmallSwigluTileCols;
        s.run_product({.occupancy = norm_occupancy_}, k::rmsnorm_swiglu<SR, SBK>(), s.mlp.partition<SR>(), w.gate,
                      w.up, s.x, w.post_norm, eps);
      } else if (product_threads_ || stages) {
        constexpr int GR = k::kSwigluTileRows, GBK = k::kSwigluTileCols;
        s.run_product({.occupancy = norm_occupancy_, .stream_stages = stages, .threads = k::kSwigluThreads},
                      k::rmsnorm_swiglu<GR, GBK>(), s.mlp.partition<GR>(), w.gate, w.up, s.x, w.post_norm, eps);
      } else {
        s.run_product({.occupancy = norm_occupancy_}, k::rmsnorm_swiglu<R, BK>(), s.mlp.partition<R>(), w.gate, w.up,
                      s.x, w.post_norm, eps);
      }
      if (stages)
        s.run_product(streamed, k::matvec_residual<SR, BK>(), s.x.partition<SR>(), w.down, s.mlp);
      else
        s.run_product(residual, k::matvec_residual<R, BK>(), s.x.partition<R>(), w.down, s.mlp);
    }
  });
  // Every layer's new K and V into the caches, at the position (the attention of this step read
  // them from the staging rows; the next step reads them from the caches).
  const std::size_t append = s.launches;
  auto k_slot = s.k_all.slice(1, position, position + 1);
  auto v_slot = s.v_all.slice(1, position, position + 1);
  s.run(k::kv_append(), k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), s.k_new, s.v_new);
  if (logits) {
    s.run_product(norm, k::rmsnorm_matvec<R, BK>(), s.logits.partition<R>(), weights_.head(), s.x, weights_.final_norm,
                  eps);
  }
  return append;
}

void Model::launch_prefill_chunk(std::span<const std::int32_t> tokens, std::int64_t start, bool logits) {
  constexpr int BM = k::kPrefillGemmRows, BN = k::kPrefillGemmCols, BK = k::kPrefillGemmDepth;
  constexpr int NR = k::kPrefillNormRows, NC = k::kPrefillNormCols;
  constexpr int GT = k::kPrefillGatherTokens, GC = k::kPrefillGatherCols;
  const ModelConfig& c = config_;
  Scratch& s = *scratch_;
  PrefillScratch& ps = *prefill_scratch_;
  const std::int64_t t = static_cast<std::int64_t>(tokens.size()), end = start + t;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const float scale = static_cast<float>(1 / std::sqrt(static_cast<double>(kHeadDim)));
  // The chunk's rows of every activation.
  Tensor<bfloat16, 2> x = ps.x.slice(0, 0, t), x_mid = ps.x_mid.slice(0, 0, t), normed = ps.normed.slice(0, 0, t),
                      attn = ps.attn.slice(0, 0, t), mlp = ps.mlp.slice(0, 0, t), gate = ps.gate.slice(0, 0, t),
                      qkv = ps.qkv.slice(0, 0, t);
  Tensor<bfloat16, 3> q = ps.q.slice(1, 0, t);
  const Tensor<float, 2> cos_rows = s.rope_cos.slice(0, start, end), sin_rows = s.rope_sin.slice(0, start, end);
  const auto k_column = static_cast<std::int32_t>(c.q_width() / 64);
  const auto v_column = static_cast<std::int32_t>((c.q_width() + c.kv_width()) / kHeadDim);
  // o_proj and down: few output tiles for the SMs with a short chunk, their k-tiles shared by the
  // CTAs of a cluster.
  const int sms = tessera::gpu_multiprocessor_count();
  const tessera::CompilerHints o_proj_split{
      .split_k = prefill_split_k_.value_or(k::prefill_residual_split(t, c.hidden_size, c.q_width(), sms))};
  const tessera::CompilerHints down_split{
      .split_k = prefill_split_k_.value_or(k::prefill_residual_split(t, c.hidden_size, c.intermediate_size, sms))};

  // The embedding rows, GT token ids per launch (ids past the chunk's end are not read).
  for (std::int64_t first = 0; first < t; first += GT) {
    std::array<std::int32_t, GT> ids{};
    std::copy(tokens.begin() + first, tokens.begin() + std::min(first + GT, t), ids.begin());
    Tensor<bfloat16, 2> rows = x.slice(0, first, std::min(first + GT, t));
    std::apply(
        [&](auto... id) {
          s.run(k::prefill_embedding_gather<GC, GT>(), rows.partition<1, GC>(), weights_.embed, id...);
        },
        ids);
  }
  for (std::size_t l = 0; l < weights_.layers.size(); ++l) {
    const LayerWeights& w = weights_.layers[l];
    Tensor<bfloat16, 3> k_rows = s.k_cache[l].slice(1, start, end), v_rows = s.v_cache[l].slice(1, start, end);
    s.run(k::prefill_rmsnorm<NR, NC>(), normed.partition<NR, NC>(), x, w.input_norm, eps);
    s.run(k::prefill_matmul_bf16<BM, BN, BK>(), qkv.partition<BM, BN>(), normed, w.qkv.transposed());
    // Positions per program: kPrefillRopeRows, or fewer for a short chunk (prefill_tiles.h).
    auto norm_rope = [&]<int BT>() {
      s.run(k::prefill_q_norm_rope<BT>(), q.partition<1, BT, 128>(), qkv, w.q_norm, cos_rows, sin_rows, eps);
      s.run(k::prefill_kv_norm_rope_append<BT>(), k_rows.partition<1, BT, 128>(), v_rows.partition<1, BT, 128>(), qkv,
            w.k_norm, cos_rows, sin_rows, k_column, v_column, eps);
    };
    if (t < k::kPrefillRopeRows)
      norm_rope.template operator()<k::kPrefillRopeRowsShort>();
    else
      norm_rope.template operator()<k::kPrefillRopeRows>();
    s.run(k::prefill_attention<k::kPrefillQueryTile, k::kPrefillKeyTile>(), attn.partition<k::kPrefillQueryTile, 128>(),
          q, s.k_cache[l], s.v_cache[l], static_cast<std::int32_t>(start), static_cast<std::int32_t>(c.gqa_group()),
          scale);
    s.run_hinted(o_proj_split, k::prefill_matmul_residual<BM, BN, BK>(), x_mid.partition<BM, BN>(), attn,
                 w.o.transposed(), x);
    s.run(k::prefill_rmsnorm<NR, NC>(), normed.partition<NR, NC>(), x_mid, w.post_norm, eps);
    s.run(k::prefill_matmul_bf16<BM, BN, BK>(), gate.partition<BM, BN>(), normed, w.gate.transposed());
    s.run(k::prefill_matmul_swiglu<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w.up.transposed(), gate);
    s.run_hinted(down_split, k::prefill_matmul_residual<BM, BN, BK>(), x.partition<BM, BN>(), mlp,
                 w.down.transposed(), x_mid);
  }
  if (logits) {
    // The decode step's LM head reads an f32 vector: the last row, widened into the step's x (which
    // the next step's embedding gather overwrites).
    const Tensor<bfloat16, 1> last = x.slice(0, t - 1, t).reshape<1>({c.hidden_size});
    s.run(k::prefill_row_f32<k::kEmbeddingTile>(), s.x.partition<k::kEmbeddingTile>(), last);
    s.run(k::rmsnorm_matvec<k::kMatvecRows, k::kMatvecCols>(), s.logits.partition<k::kMatvecRows>(), weights_.head(),
          s.x, weights_.final_norm, eps);
  }
}

}  // namespace qwen3
