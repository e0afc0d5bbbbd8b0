// prefill_tiles.h: the tile sizes of the prefill kernels (prefill_*.h), shared by the model and
// the tests so that the tests run the code the engine runs.
//
// Prefill moves a chunk of T prompt tokens through each layer together: its projections are GEMMs
// of the [T, in] activations with the [out, in] weights, which on sm_90 take the tensor-core
// lowering when they fall in its class (docs/compiler.md, "Tensor cores": bf16 operands, BM 64 or
// 128, BN 64, 128 or 256, BK 64 or 128, an elementwise epilogue, one store). The other kernels
// are bandwidth-bound row kernels and attention.
#pragma once

namespace qwen3::kernels {

inline constexpr int kPrefillGemmRows = 128;  // prefill_matmul*<BM, BN, BK>: BM, rows of the activations
inline constexpr int kPrefillGemmCols = 128;  //   BN, output features
inline constexpr int kPrefillGemmDepth = 64;  //   BK, input features per step of the K loop
// o_proj and down have few output tiles (hidden / 128 columns: 20 for 4B) for short prompts; the
// split shares the k-tiles of programs among a cluster of S CTAs (CompilerHints::split_k): all of
// them where they are fewer than the clusters, so that more SMs work, and otherwise those of the
// last round of the persistent CTAs, which then ends in a fraction of a program's time. For a
// chunk of `tokens` rows, `hidden` columns and a product over `depth` inputs on a GPU of `sms`
// SMs: 4 where the output tiles are no more than a quarter of the SMs, 2 up to half, none
// elsewhere, where clusters only cost (the H100, 132 SMs, 4B prefill of 32 / 128 / 256 tokens:
// 10.1 -> 8.1, 7.1 -> 6.5, 8.0 -> 7.3 ms at 4, 4, 2; docs/performance.md). For a little more than
// one round (at most half the SMs left for the last round) the lowering runs the last round
// unsplit as halves of 64 columns on two CTAs each (docs/compiler.md, "The last round in
// halves"); a half reads all of A for half of B, so its time grows with the depth faster than a
// split program's, whose fixed cost is the sum of its partial tiles. At 1024 tokens of 4B (160
// tiles, H100): o_proj (depth 4096) 48.2 us in halves against 53.2 at S = 2, down (depth 9728)
// 114.1 against 107.8; so 2 there from kPrefillSplitTailDepth on, between the two. 0: no split
// (the hint's default, so that the unsplit kernel is the one other launches compile);
// kPrefillResidualSplits lists every value the rule returns.
inline constexpr long long kPrefillSplitTailDepth = 6144;
constexpr int prefill_residual_split(long long tokens, long long hidden, long long depth, long long sms) {
  const long long tiles = (tokens + kPrefillGemmRows - 1) / kPrefillGemmRows *
                          ((hidden + kPrefillGemmCols - 1) / kPrefillGemmCols);
  if (4 * tiles <= sms) return 4;
  if (2 * tiles <= sms) return 2;
  return tiles > sms && 2 * (tiles - sms) <= sms && depth >= kPrefillSplitTailDepth ? 2 : 0;
}
inline constexpr int kPrefillResidualSplits[] = {0, 2, 4};
// prefill_rmsnorm<R, BC>: 512 columns divide every Qwen3 hidden size (1024 to 5120), so no program
// has a ragged tile; 4 x 512 took 13.8 us on 4B's 1024 x 2560 against 18.5 for 4 x 1024 (H100,
// bench_prefill_layers), although each program reads its rows five times for their sums.
inline constexpr int kPrefillNormRows = 4;
inline constexpr int kPrefillNormCols = 512;
// prefill_{q,kv}_norm_rope*<BT>: positions per program, 64; a chunk of fewer positions takes 16
// (kPrefillRopeRowsShort), since with 64 each of its programs is ragged and runs the
// bounds-checked copy (2x the 128-token time at 32 tokens on the H100; docs/performance.md).
inline constexpr int kPrefillRopeRows = 64;
inline constexpr int kPrefillRopeRowsShort = 16;
// prefill_attention<BQ, BKV> takes the attention lowering on GPUs (docs/compiler.md, "Attention on
// the tensor cores"): BQ / 16 warps, 255 registers a thread at head dimension 128. In
// bench_prefill_layers 64 x 64 and 128 x 64 are within 2.5% (64 x 32, 128 x 32, 3 stages slower,
// 32 x 64 by 44%, 64 x 128 spills; docs/performance.md).
inline constexpr int kPrefillQueryTile = 64;  // queries per program
inline constexpr int kPrefillKeyTile = 64;    // cache positions per step of the online softmax
inline constexpr int kPrefillGatherTokens = 64;  // prefill_embedding_gather<BH, N>: token ids per launch
inline constexpr int kPrefillGatherCols = 1024;  //   BH, hidden elements per program

}  // namespace qwen3::kernels
