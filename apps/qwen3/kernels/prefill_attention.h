// prefill_attention.h: causal grouped-query attention of T prompt positions over the KV cache.
//
// prefill_attention<BQ, BKV>: one program per (query tile, query head), grid [ceil(T / BQ),
// n_heads]. Program (i, head) takes the BQ queries at positions start + i BQ + r (r < BQ) of
// head `head` from q [n_heads, T, 128] (bf16, from prefill_q_norm_rope.h) and attends to the
// cache rows of KV head head / group in k_cache, v_cache [n_kv, context, 128] (bf16; the rows
// < start written before, the chunk's own rows by prefill_kv_norm_rope_append). It walks the
// cache in tiles of BKV positions from 0 up to the causal limit of its last query (min(start +
// (i + 1) BQ, start + T), so no tile past it is read), with the usual online softmax in f32:
// running max m, sum l and unnormalized output o per query, rescaled by exp(m_old - m_new).
// Scores are s = scale q . k from an mma of the bf16 q and K tiles (exact products, f32
// accumulation); a key at a position past the query's is masked to -inf, so its exponential is
// exactly 0 and it contributes nothing. Every query sees position 0 in the first tile, so m is
// finite after it and no -inf - -inf is formed. p V is an mma of the probabilities rounded to
// bf16 and V, as in the decode step (attention.h). The kernel is of the class of the attention
// lowering (docs/compiler.md, "Attention on the tensor cores"): on a GPU both mmas run on the
// tensor cores with the scores, the softmax and o in registers. The output is stored as bf16(o / l) into
// out [T, q_width] at (query rows, head's 128 columns) (tile [BQ, 128]): the A operand of the
// o_proj GEMM, which takes bf16. Query rows past T compute on whatever the cache holds there
// and are not stored.
//
// GQA: each query head's program reads its KV head's tiles (the G programs of a group read the
// same tiles, from L2 on a GPU); a program per KV head would read them once but needs G BQ rows
// of queries per tile, a G that is not a power of two (5) padded.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int BQ, int BKV>
auto prefill_attention() {
  static_assert(power_of_two(BQ) && power_of_two(BKV), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_prefill_attention", BQ, BKV),
                         [](auto out, auto q, auto k_cache, auto v_cache, auto start, auto group, auto scale) {
                           using namespace tessera;
                           auto head = program_id<1>();
                           auto kv_head = head / group;
                           auto first = start + program_id<0>() * c<BQ>;  // the position of the tile's first query
                           auto limit = minimum(first + c<BQ>, start + dim<1>(q));
                           auto query_pos = reshape<BQ, 1>(iota<BQ>() + first);
                           auto qt = reshape<BQ, 128>(load<1, BQ, 128>(q, head, program_id<0>(), c<0>));
                           auto r = for_range(
                               (limit + c<BKV - 1>) / c<BKV>,
                               [=](auto i, auto m, auto l, auto o) {
                                 auto kt = reshape<BKV, 128>(load<1, BKV, 128>(k_cache, kv_head, i, c<0>));
                                 auto vt = reshape<BKV, 128>(load<1, BKV, 128>(v_cache, kv_head, i, c<0>));
                                 auto key_pos = reshape<1, BKV>(iota<BKV>() + i * c<BKV>);
                                 auto s = select(key_pos <= query_pos, mma(qt, transpose(kt), c<0.0>) * scale,
                                                 c<-inf>);  // [BQ, BKV]
                                 auto m_new = maximum(m, max<1>(s));
                                 auto alpha = exp(m - m_new);
                                 auto p = exp(s - m_new);
                                 return carry(m_new, l * alpha + sum<1>(p), mma(cast<kBF16>(p), vt, o * alpha));
                               },
                               full<kF32, BQ, 1>(c<-inf>), full<kF32, BQ, 1>(c<0.0>), full<kF32, BQ, 128>(c<0.0>));
                           return out.store(cast<kBF16>(get<2>(r) / get<1>(r)));
                         });
}

}  // namespace qwen3::kernels
