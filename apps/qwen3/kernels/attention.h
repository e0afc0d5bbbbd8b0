// attention.h: grouped-query decode attention with split-KV (flash-decoding), and its combine.
//
// decode_attention_split: one program per (KV head h, split s), grid [n_kv, S]. The split covers
// the KV chunks [s * chunks_per_split, (s + 1) * chunks_per_split) of CH positions each; the
// program loads each chunk's K and V once ([CH, 128] bf16) and computes all G query heads of its
// KV head against them (q: bf16 [n_kv, G, 128], loaded as one [GP, 128] tile, GP = the power of
// two >= G; rows past G read as zero and are never stored). It keeps the usual online softmax in
// f32 -- running max m, running sum l, unnormalized output o -- and stores them as the split's
// partial result:
//   part_o [n_kv, S, G*128]   sum_t exp(s_t - m) v_t        (tile [1, 1, GP*128])
//   part_m [n_kv, S, G]       m = max_t s_t                  (tile [1, 1, GP])
//   part_l [n_kv, S, G]       l = sum_t exp(s_t - m)
// with s_t = scale * q . k_t over the positions t < n of the split, n = length[0, 0] (an i32 [1, 1]
// tensor written on the GPU, kernels/decode_step.h). The newest position n - 1 is not in the
// cache yet: its K and V rows are k_new, v_new [n_kv, 128] (the step's staging rows), taken in
// by the split whose chunks hold it as one more online-softmax step after its loop (score
// q . k_new and term p v_new in f32); the cache's row there is not used. In the loop, positions
// from n - 1 on (the last chunks' tails) are masked to -inf: their probabilities in p V are
// zero, so the cache's rows there must hold finite values (zeros, or what an earlier sequence
// wrote: the engine's caches start as zeros). A split with no position keeps m = -inf, l = 0,
// o = 0, which the combine weighs as nothing. Every program runs chunks_per_split iterations, so
// that nothing but the tensors depends on n: a captured step's nodes stay as they are from one
// token to the next. Chunks past the cache's end read as zero, but a program that reaches them
// runs the bounds-checked copy of its loop: the engine's caches hold
// attention_cache_positions(context) positions so that none does. The exponentials use 0 in
// place of an m that is still -inf, so no -inf - -inf is ever formed. The products q k^T and
// p V are mmas of bf16 operands with f32 accumulation, on the tensor cores of a GPU: the
// probabilities p (in [0, 1]) are rounded to bf16 for p V, as flash attention and
// transformers' bf16 attention do, a relative error of at most 2^-9 per probability; the
// running sums l and m stay in f32.
//
// decode_attention_split<GP, CH, true> computes the same, but loads each chunk's K and V in the
// iteration before (the first before the loop; the last iteration loads its own chunk again), so
// that a chunk's loads are in flight while the chunk before is computed: the loop otherwise waits
// a memory latency per chunk, with few programs per SM to hide it.
//
// decode_attention_combine: one program per KV head, grid [n_kv]; loops over the S splits
// carrying (M, L, O) and rescaling, then stores O / L into out [n_kv, G*128] (tile [1, GP*128]),
// which is the f32 attention output of all query heads in head order (a view of the [n_heads *
// 128] vector the output projection reads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>

#include "kernels/tile_common.h"

namespace qwen3::kernels {

// How a decode step splits the KV positions: at most `max_splits` splits of whole chunks of
// `chunk` positions, as few chunks per split as that allows (so a short context runs fewer
// splits). The engine and bench_attention both plan with these.
struct AttentionSplits {
  std::int64_t chunks_per_split, splits;
};

// The splits the part tensors hold: about `programs` (KV head, split) programs, and no more
// splits than a context of `context` positions has chunks.
constexpr std::int64_t max_attention_splits(std::int64_t programs, std::int64_t kv_heads, std::int64_t context,
                                            std::int64_t chunk) {
  return std::min(std::max<std::int64_t>(1, programs / kv_heads), (context + chunk - 1) / chunk);
}

constexpr AttentionSplits attention_splits(std::int64_t seq_len, std::int64_t chunk, std::int64_t max_splits) {
  const std::int64_t chunks = (seq_len + chunk - 1) / chunk;
  const std::int64_t per_split = (chunks + max_splits - 1) / max_splits;
  return {per_split, (chunks + per_split - 1) / per_split};
}

// The positions a KV cache holds for a context of `context` positions: enough that every split of
// every step (attention_splits for 1..context positions) has all its chunks inside the cache.
// decode_attention_split runs chunks_per_split iterations in every program, so the last split
// may reach up to chunks_per_split - 1 chunks past the step's length; a program whose chunks
// leave the cache runs the bounds-checked copy of the loop (per-element loads: on the H200 it
// made the whole 4B step about 11% slower at 16k positions, where the last split's program is the
// kernel's slowest).
constexpr std::int64_t attention_cache_positions(std::int64_t context, std::int64_t chunk, std::int64_t max_splits) {
  const std::int64_t context_chunks = (context + chunk - 1) / chunk;
  std::int64_t chunks = context_chunks;
  for (std::int64_t c = 1; c <= context_chunks; ++c) {
    const AttentionSplits a = attention_splits(c * chunk, chunk, max_splits);
    chunks = std::max(chunks, a.chunks_per_split * a.splits);
  }
  return chunks * chunk;
}

namespace attention_detail {

using namespace tessera;

// One online-softmax step over chunk `chunk` of KV head h's cache ([CH, 128] bf16 K and V): the
// G query heads qt (bf16 [GP, 128]) against its positions below `last`, carrying the running max
// m and sum l ([GP, 1]) and the unnormalized output o ([GP, 128]).
template <int GP, int CH, class Q, class KT, class VT, class Chunk, class Last, class Scale, class M, class L, class O>
constexpr auto chunk_update(Q qt, KT kt, VT vt, Chunk chunk, Last last, Scale scale, M m, L l, O o) {
  auto positions = reshape<1, CH>(iota<CH>() + chunk * c<CH>);
  auto s = select(positions < last, mma(qt, transpose(kt), c<0.0>) * scale, c<-inf>);  // [GP, CH]
  auto m_new = maximum(m, max<1>(s));
  auto m_use = select(m_new == c<-inf>, c<0.0>, m_new);
  auto alpha = exp(m - m_use);
  auto p = exp(s - m_use);
  return std::tuple{m_new, l * alpha + sum<1>(p), mma(cast<kBF16>(p), vt, o * alpha)};
}

// Chunk `chunk`'s K or V rows of KV head h, [CH, 128] bf16.
template <int CH, class C, class H, class Chunk>
constexpr auto chunk_rows(C cache, H h, Chunk chunk) {
  return reshape<CH, 128>(load<1, CH, 128>(cache, h, chunk, c<0>));
}

template <int GP, int CH, class Q, class KC, class VC, class H, class Chunk, class Last, class Scale, class M, class L,
          class O>
constexpr auto chunk_step(Q qt, KC k_cache, VC v_cache, H h, Chunk chunk, Last last, Scale scale, M m, L l, O o) {
  auto [m_new, l_new, o_new] = chunk_update<GP, CH>(qt, chunk_rows<CH>(k_cache, h, chunk),
                                                    chunk_rows<CH>(v_cache, h, chunk), chunk, last, scale, m, l, o);
  return carry(m_new, l_new, o_new);
}

// The same step on the chunk's rows kt, vt loaded by the iteration before, loading the next
// chunk's (`next`) for the iteration after: its loads are in flight during this chunk's math.
// The rows come first among the carried values: the body's ops are emitted in the order of the
// values it yields, so the next chunk's index and loads then come before this chunk's math
// (tile-hoist-loads moves a load up only to the op that computes its index).
template <int GP, int CH, class Q, class KC, class VC, class H, class Chunk, class Next, class Last, class Scale,
          class KT, class VT, class M, class L, class O>
constexpr auto chunk_step_prefetched(Q qt, KC k_cache, VC v_cache, H h, Chunk chunk, Next next, Last last, Scale scale,
                                     KT kt, VT vt, M m, L l, O o) {
  auto k_next = chunk_rows<CH>(k_cache, h, next);
  auto v_next = chunk_rows<CH>(v_cache, h, next);
  auto [m_new, l_new, o_new] = chunk_update<GP, CH>(qt, kt, vt, chunk, last, scale, m, l, o);
  return carry(k_next, v_next, m_new, l_new, o_new);
}

}  // namespace attention_detail

template <int GP, int CH, bool Prefetch = false>
auto decode_attention_split() {
  static_assert(power_of_two(GP) && power_of_two(CH), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name(Prefetch ? "qwen3_attention_split_prefetch" : "qwen3_attention_split", GP, CH),
      [](auto part_o, auto part_m, auto part_l, auto q, auto k_cache, auto v_cache, auto k_new, auto v_new, auto length,
         auto chunks_per_split, auto scale) {
        using namespace tessera;
        auto h = program_id<0>();
        auto split = program_id<1>();
        auto qt = reshape<GP, 128>(load<1, GP, 128>(q, h, c<0>, c<0>));
        auto n = load<1, 1>(length, c<0>, c<0>);  // [1, 1]: positions < n are attended
        auto last = n - c<1>;                     // the new position, whose K and V are k_new, v_new
        auto base = split * chunks_per_split;
        auto m0 = full<kF32, GP, 1>(c<-inf>);
        auto l0 = full<kF32, GP, 1>(c<0.0>);
        auto o0 = full<kF32, GP, 128>(c<0.0>);
        auto r = [=] {
          if constexpr (Prefetch) {
            // The last iteration loads its own chunk again (from L2) as the next: no load leaves
            // the split's chunks.
            auto loop = for_range(
                chunks_per_split,
                [=](auto i, auto kt, auto vt, auto m, auto l, auto o) {
                  return attention_detail::chunk_step_prefetched<GP, CH>(
                      qt, k_cache, v_cache, h, base + i, base + minimum(i + c<1>, chunks_per_split - c<1>), last, scale,
                      kt, vt, m, l, o);
                },
                attention_detail::chunk_rows<CH>(k_cache, h, base), attention_detail::chunk_rows<CH>(v_cache, h, base), m0,
                l0, o0);
            return std::tuple{get<2>(loop), get<3>(loop), get<4>(loop)};
          } else {
            auto loop = for_range(
                chunks_per_split,
                [=](auto i, auto m, auto l, auto o) {
                  return attention_detail::chunk_step<GP, CH>(qt, k_cache, v_cache, h, base + i, last, scale, m, l, o);
                },
                m0, l0, o0);
            return std::tuple{get<0>(loop), get<1>(loop), get<2>(loop)};
          }
        }();
        auto [m_loop, l_loop, o_loop] = r;
        // The new position, one more online-softmax step of the split whose chunks hold it.
        auto first = split * chunks_per_split * c<CH>;
        auto holds = (last >= first) && (last < first + chunks_per_split * c<CH>);                // [1, 1]
        auto s_last = sum<1>(cast<kF32>(qt) * cast<kF32>(load<1, 128>(k_new, h, c<0>))) * scale;  // [GP, 1]
        auto m_end = select(holds, maximum(m_loop, s_last), m_loop);
        auto m_use = select(m_end == c<-inf>, c<0.0>, m_end);
        auto alpha = exp(m_loop - m_use);
        auto p_last = select(holds, exp(s_last - m_use), c<0.0>);
        auto l_end = l_loop * alpha + p_last;
        auto o_end = o_loop * alpha + p_last * cast<kF32>(load<1, 128>(v_new, h, c<0>));
        return seq(part_o.store(reshape<1, 1, GP * 128>(o_end)), part_m.store(reshape<1, 1, GP>(m_end)),
                   part_l.store(reshape<1, 1, GP>(l_end)));
      });
}

template <int GP>
auto decode_attention_combine() {
  static_assert(power_of_two(GP), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_attention_combine", GP),
                         [](auto out, auto part_o, auto part_m, auto part_l) {
                           using namespace tessera;
                           auto h = program_id<0>();
                           auto r = for_range(
                               dim<1>(part_m),
                               [=](auto s, auto m, auto l, auto o) {
                                 auto m_s = reshape<GP, 1>(load<1, 1, GP>(part_m, h, s, c<0>));
                                 auto l_s = reshape<GP, 1>(load<1, 1, GP>(part_l, h, s, c<0>));
                                 auto o_s = reshape<GP, 128>(load<1, 1, GP * 128>(part_o, h, s, c<0>));
                                 auto m_new = maximum(m, m_s);
                                 auto m_use = select(m_new == c<-inf>, c<0.0>, m_new);
                                 auto a = exp(m - m_use);
                                 auto b = exp(m_s - m_use);
                                 return carry(m_new, l * a + l_s * b, o * a + o_s * b);
                               },
                               full<kF32, GP, 1>(c<-inf>), full<kF32, GP, 1>(c<0.0>), full<kF32, GP, 128>(c<0.0>));
                           return out.store(reshape<1, GP * 128>(get<2>(r) / get<1>(r)));
                         });
}

}  // namespace qwen3::kernels
