// model.h: a Qwen3 model on tessera: device-resident weights, the KV cache, and the decode step.
//
// decode_step(token, position) runs the whole forward pass for one token as tile kernels
// (kernels/*.h) and returns the f32 logits [vocab]. Per step and layer, seven kernels:
//   1. qkv = W_qkv rmsnorm(x)                     rmsnorm_matvec (the norm fused into the product)
//   2. q/k per-head norm + RoPE                   qk_norm_rope_append (K, V into the step's staging rows)
//   3. partial attention per (KV head, split)      decode_attention_split (flash-decoding; the new
//                                                  position's K and V from the staging rows)
//   4. combine of the splits                       decode_attention_combine
//   5. x += W_o attn                               matvec_residual (residual add in the epilogue)
//   6. m = silu(W_gate n) * (W_up n), n = rmsnorm(x)  rmsnorm_swiglu
//   7. x += W_down m                               matvec_residual
// (with EngineOptions::fused_attention_positions, steps at up to that many positions run 2-4 as
// one kernel, decode_attention_fused: one program per KV head over the whole context, five
// kernels per layer; with EngineOptions::short_attention_positions, steps at up to 128 or 256
// positions run them as decode_attention_short, one pass over the cache's first positions),
// plus the embedding gather and step_rows (the position's RoPE rows and the attended length, as
// tensors) before the layers, kv_append (every layer's new K and V into the caches) and
// logits = W_head rmsnorm(x) after them (rmsnorm_matvec; W_head is the embedding table when tied).
// The residual stream x and every activation are f32; q and the cache are bf16.
//
// The KV cache is preallocated for the context limit: K and V of [layers, n_kv, positions, 128]
// bf16 (a view per layer), positions = kernels::attention_cache_positions(context) (a few chunks
// more, so that no attention program reads past the cache). Position p's K and V are written by
// its step; a step at position p attends to positions 0..p, so a step may be re-run at any
// position up to the number of positions already cached (the cache then holds positions < p
// plus the new one). Split-KV: the chunks of 64 positions are
// grouped into splits so that about EngineOptions::attention_programs (KV head, split) programs
// run; longer contexts give a split more chunks, not more splits.
//
// Launches are asynchronous on the model's own stream, ordered by tessera's tensor tracking;
// reading the logits on the host waits for them. decode_step() replays a tessera::Graph of the
// step (one CUDA graph on a GPU): captured once per number of attention splits (which sets the
// partial-attention tensors' shapes) and once for each one-kernel attention, with the token,
// position and chunks per split as tessera::Scalars and kv_append's K and V slots moved to the
// position (Graph::move_view). Only three nodes change from one token to the next (the
// embedding, step_rows, kv_append): each changed node costs a driver call on the host before
// the replay, while the GPU waits. The
// chunks per split (every attention program's iterations) change once per 64 * max splits
// positions at most, and a graph patches its attention nodes only when they differ from its
// previous replay's.
//
// prefill() runs the prompt's tokens through each layer together, in chunks of up to
// EngineOptions::prefill_chunk tokens (so that its scratch memory stays bounded: a long prompt
// runs as several chunks, each attending to the cache written so far). Per chunk of T tokens:
// the embedding gather (kernels/prefill_embedding.h) into the bf16 residual stream X [T, hidden],
// then per layer ten kernels (kernels/prefill_*.h):
//   1. n = bf16(rmsnorm(X))                      prefill_rmsnorm
//   2. qkv = bf16(n W_qkv^T)                     prefill_matmul_bf16 (GEMM)
//   3. q = bf16(rope(rmsnorm_head(q)))           prefill_q_norm_rope
//   4. K, V of the T positions into the cache    prefill_kv_norm_rope_append
//   5. a = bf16(causal attention)                prefill_attention (online softmax over the cache)
//   6. X' = bf16(X + a W_o^T)                    prefill_matmul_residual
//   7. n = bf16(rmsnorm(X'))                     prefill_rmsnorm
//   8. gate = bf16(n W_gate^T)                   prefill_matmul_bf16
//   9. m = bf16(silu(gate) * (n W_up^T))         prefill_matmul_swiglu (SwiGLU in the epilogue)
//  10. X = bf16(X' + m W_down^T)                 prefill_matmul_residual
// and, after the last chunk only, the last token's row widened to f32 (prefill_row_f32) and the
// LM head on it (rmsnorm_matvec). The weights are read as views W.transposed() (no copies).
// Numerics: the GEMMs multiply in f32 and round their outputs to bf16, and the residual stream
// is bf16, as a bf16 transformers model keeps them (ReferenceNumerics::kPrefill);
// tests/test_engine_prefill.cpp states the tolerance this gives.
//
// Unsupported shapes are ModelError kUnsupported: head_dim other than 128 (every Qwen3 model; the
// kernels are written for it), query heads not a multiple of the KV heads, more than 16 query
// heads per KV head. Bad calls throw qwen3::Error: a token outside the vocabulary, a position past
// the cache (ContextLimitError at the context limit).
#pragma once

#include <tessera/tessera.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "device_weights.h"
#include "model_config.h"
#include "weight_source.h"

namespace qwen3 {

struct EngineOptions {
  std::optional<tessera::Target> target;  // default: tessera::default_target()
  std::int64_t context_limit = 0;         // positions of the KV cache; 0: min(max_position_embeddings, 4096)
  std::int64_t attention_programs = 256;  // split-KV: about this many (KV head, split) programs
  // Steps at up to this many positions run the attention as one kernel per layer
  // (decode_attention_fused: one program per KV head over the whole context) instead of three
  // (q/k norm and RoPE, split-KV, combine); 0: always three. Opt-in: on the H200 level with the
  // three at 160 positions, slower from 512 on (one program per KV head; docs/performance.md).
  std::int64_t fused_attention_positions = 0;
  // Steps at up to this many positions (0, 128 or 256) run the attention as one kernel per layer
  // without a loop (decode_attention_short: one program per KV head loads the cache's first 128
  // positions at once, or its first 256 for steps past 128); they take precedence over
  // fused_attention_positions. 0: never. The KV cache then has at least this many positions,
  // so that the kernel's loads are whole tiles. 128 made 4B's decode 5-7% faster than the three
  // kernels on the H200 (docs/performance.md, session 60).
  std::int64_t short_attention_positions = 128;
  // The split-KV attention loads each chunk of K and V during the chunk before
  // (decode_attention_split<GP, CH, true>), so that its loads overlap the math; only in steps
  // with the most splits (attention_programs), where a split may have several chunks.
  bool split_prefetch = false;
  unsigned threads = 0;                   // host threads that produce weights while loading (0: all)
  std::int64_t prefill_chunk = 1024;      // prompt tokens per prefill pass (its scratch is sized for it)
  // Decode products with the engine's thread counts (CompilerHints::threads, chosen from
  // bench_matvec: kernels/tile_common.h); false: the compiler's choice for every product.
  bool product_threads = true;
  // Decode products whose weight tiles stream through bulk rings of this many slots in shared
  // memory (CompilerHints::stream_stages, sm_90 and newer; the weights are frozen, so each
  // product's first tiles are copied while the kernel before it ends), 2 to 8; 0: registers.
  int stream_stages = 0;
  // The output and down projections (2560 rows for 4B: 160 programs of 16 rows) with each
  // program's K loop shared by the CTAs of a cluster (CompilerHints::split_k, sm_90 and newer),
  // 2, 4 or 8; 0: one CTA per program.
  int split_k = 0;
  // Decode kernels load the weight tiles of their K loop's first iterations before they wait for
  // the kernel before them (CompilerHints::early_frozen_steps, sm_90 and newer; the weights are
  // frozen), 1 to 4; 0: after the wait.
  int early_weight_steps = 0;
  // Decode products' programs per SM (CompilerHints::occupancy: registers capped to fit them): the
  // products with a folded RMSNorm (QKV, gate/up, LM head) and the residual ones (o_proj, down),
  // 1 to 32; 0: the compiler's choice; for the norm products, nullopt: the engine's
  // (kernels::kNormProductOccupancy from 4B up, the compiler's for smaller models). And the
  // residual products' threads per program (a power of two, 32 to 1024; 0: the compiler's choice).
  std::optional<int> norm_product_occupancy;
  int residual_product_occupancy = 0;
  int residual_product_threads = 0;
  // The prefill's o_proj and down GEMMs with each program's k-tiles shared by the CTAs of a
  // cluster (CompilerHints::split_k; sm_90a's wgmma GEMMs and mma.sync ones from sm_90): 0 or 1
  // none, 2, 4 or 8; nullopt: the engine's, by the chunk's output tiles
  // (kernels::prefill_residual_split).
  std::optional<int> prefill_split_k;
  // Host threads that compile the kernels in warm_up (tessera::compile_all): 0 one per hardware
  // thread, 1 one after another.
  unsigned compile_jobs = 0;
};

// Throws ModelError kUnsupported for a config the engine cannot run (see the file comment).
void check_engine_config(const ModelConfig& config);

class Model {
 public:
  Model(const ModelConfig& config, const WeightSource& source, const EngineOptions& options = {});
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;
  ~Model();

  const ModelConfig& config() const { return config_; }
  tessera::Target target() const { return target_; }
  std::int64_t context_limit() const { return context_; }
  std::int64_t cached_positions() const { return cached_; }
  // The token ids whose K and V the cache holds: what prefill and decode_step ran at positions
  // 0 .. cached_positions() - 1 (a later call at an earlier position forgets the ones after it).
  std::span<const std::int32_t> cached_tokens() const { return cached_tokens_; }
  const DeviceWeights& weights() const { return weights_; }
  // Layer `layer`'s K or V cache, [n_kv, context, 128] bf16 (for tests and tools).
  const tessera::Tensor<tessera::bfloat16, 3>& k_cache(std::size_t layer) const;
  const tessera::Tensor<tessera::bfloat16, 3>& v_cache(std::size_t layer) const;

  // The logits [vocab] of `token` at `position` (0 <= position <= cached_positions(), position <
  // context_limit()). The tensor is the model's own, overwritten by the next step.
  const tessera::Tensor<float, 1>& decode_step(std::int32_t token, std::int64_t position);
  // Runs tokens at positions start, start + 1, ... (start <= cached_positions()) and returns the
  // logits of the last one; the LM head runs only for it. Throws for an empty prompt.
  const tessera::Tensor<float, 1>& prefill(std::span<const std::int32_t> tokens, std::int64_t start = 0);
  // Compiles every kernel the engine launches, on EngineOptions::compile_jobs threads: those of
  // prefills of token 0 (of up to 128 tokens and of one), of one step, of a step of each other
  // attention form that longer contexts run (short, fused, split-KV), and the prefill kernels of
  // other chunk lengths (prefill_variants). Then runs those prefills and the first step and waits,
  // so that nothing is compiled or loaded when anything is timed (the other forms' kernels are
  // loaded at their first step); leaves the cache empty. `extra` are compiled with them (a
  // Sampler's pending_compiles). Returns the step's logits (for Sampler::warm_up).
  const tessera::Tensor<float, 1>& warm_up(std::vector<tessera::PendingCompile> extra = {});
  // The tensor decode_step and prefill return, [vocab] (what a Sampler's pending_compiles
  // describes its launches on before the warm-up).
  const tessera::Tensor<float, 1>& logits() const;

 private:
  struct Scratch;
  struct PrefillScratch;
  struct DecodeGraph;
  void check_step(std::int32_t token, std::int64_t position) const;
  // The cache holds positions 0 .. position - 1 only (before launches that overwrite the rest).
  void forget_from(std::int64_t position);
  // Runs the step: as launches, or with `graph` through the decode graph of its attention splits.
  void step(std::int32_t token, std::int64_t position, bool logits, bool graph = false);
  // The launches of a step with the fused attention or `splits` attention splits, whose K and V go
  // to `position`'s slot (the Scalars hold the rest); returns the launch index of the K/V append
  // (kv_append).
  // How a step's attention runs: three kernels (q/k norm + RoPE, split-KV, combine), or one
  // (decode_attention_fused, decode_attention_short).
  // short_128 and short_256: decode_attention_short over the cache's first 128 or 256 positions.
  enum class StepAttention { split, fused, short_128, short_256 };
  StepAttention step_attention(std::int64_t positions) const;
  // Whether a split-KV step of `splits` splits runs the prefetching split: with
  // EngineOptions::split_prefetch, in the steps with every split the part tensors hold (below
  // that each split has one chunk, which the prefetching loop would load twice).
  bool prefetched_split(std::int64_t splits) const;
  std::size_t launch_step(StepAttention form, std::int64_t splits, std::int64_t position, bool logits);
  // The launches of one prefill chunk: tokens at positions start, start + 1, ... (at most
  // prefill_chunk_ of them), with the LM head on the last one if `logits`.
  void launch_prefill_chunk(std::span<const std::int32_t> tokens, std::int64_t start, bool logits);
  // The compiles of the prefill kernels that vary with a chunk's length and that the warm-up's
  // prefills do not run: the q/k norm + RoPE at both position tiles (kPrefillRopeRows and
  // kPrefillRopeRowsShort), whole and ragged, and on GPUs the o_proj and down GEMMs at each split
  // the engine's rule chooses (kernels::prefill_residual_split: by the chunk's tiles), whole and
  // ragged, so that no prompt's chunk compiles anything (warm_up).
  std::vector<tessera::PendingCompile> prefill_variants();

  ModelConfig config_;
  tessera::Target target_;
  std::int64_t context_ = 0;
  std::int64_t attention_programs_ = 0;
  std::int64_t fused_attention_positions_ = 0;
  std::int64_t short_attention_positions_ = 0;
  bool split_prefetch_ = false;
  bool product_threads_ = true;
  unsigned compile_jobs_ = 0;
  int stream_stages_ = 0;
  int split_k_ = 0;
  int norm_occupancy_ = 0;
  int residual_occupancy_ = 0;
  int residual_threads_ = 0;
  std::optional<int> prefill_split_k_;
  std::int64_t prefill_chunk_ = 0;
  std::int64_t cached_ = 0;
  std::vector<std::int32_t> cached_tokens_;  // cached_ ids: cached_tokens()
  DeviceWeights weights_;
  std::unique_ptr<Scratch> scratch_;                  // the KV cache, RoPE tables and activations
  std::unique_ptr<PrefillScratch> prefill_scratch_;   // a chunk's activations, made at the first prefill
  std::vector<std::unique_ptr<DecodeGraph>> graphs_;  // per number of splits, captured on first use
  std::unique_ptr<DecodeGraph> fused_graph_;          // the step with the fused attention
  std::unique_ptr<DecodeGraph> short_graphs_[2];      // the steps with the short attention of 128, 256
};

}  // namespace qwen3
