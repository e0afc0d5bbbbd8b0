// attention.h: grouped-query decode attention with split-KV (flash-decoding), and its combine.
//
// decode_attention_split: one program per (KV head h, split s), grid [n_kv, S]. The split covers
// the KV chunks [s * chunks_per_split, (s + 1) * chunks_per_split) of CH positions each, those
// that hold positions < seq_len (so a grid of more splits than needed costs no loads); the
// program loads each chunk's K and V once ([CH, 128] bf16) and computes all G query heads of its
// KV head against them (q: bf16 [n_kv, G, 128], loaded as one [GP, 128] tile, GP = the power of
// two >= G; rows past G read as zero and are never stored). It keeps the usual online softmax in
// f32 -- running max m, running sum l, unnormalized output o -- and stores them as the split's
// partial result:
//   part_o [n_kv, S, G*128]   sum_t exp(s_t - m) v_t        (tile [1, 1, GP*128])
//   part_m [n_kv, S, G]       m = max_t s_t                  (tile [1, 1, GP])
//   part_l [n_kv, S, G]       l = sum_t exp(s_t - m)
// with s_t = scale * q . k_t over the positions t < seq_len of the split. Positions at or past
// seq_len (the last chunk's tail) are masked to -inf; a split with no position keeps m = -inf,
// l = 0, o = 0, which the combine weighs as nothing. The
// exponentials use 0 in place of an m that is still -inf, so no -inf - -inf is ever formed. The
// products q k^T and p V are mmas of bf16 operands with f32 accumulation, on the tensor cores of
// a GPU: the probabilities p (in [0, 1]) are rounded to bf16 for p V, as flash attention and
// transformers' bf16 attention do, a relative error of at most 2^-9 per probability; the
// running sums l and m stay in f32.
//
// decode_attention_combine: one program per KV head, grid [n_kv]; loops over the S splits
// carrying (M, L, O) and rescaling, then stores O / L into out [n_kv, G*128] (tile [1, GP*128]),
// which is the f32 attention output of all query heads in head order (a view of the [n_heads *
// 128] vector the output projection reads).
#pragma once

#include <algorithm>
#include <cstdint>

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
inline std::int64_t max_attention_splits(std::int64_t programs, std::int64_t kv_heads, std::int64_t context,
                                         std::int64_t chunk) {
  return std::min(std::max<std::int64_t>(1, programs / kv_heads), (context + chunk - 1) / chunk);
}

inline AttentionSplits attention_splits(std::int64_t seq_len, std::int64_t chunk, std::int64_t max_splits) {
  const std::int64_t chunks = (seq_len + chunk - 1) / chunk;
  const std::int64_t per_split = (chunks + max_splits - 1) / max_splits;
  return {per_split, (chunks + per_split - 1) / per_split};
}

template <int GP, int CH>
auto decode_attention_split() {
  static_assert(power_of_two(GP) && power_of_two(CH), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_attention_split", GP, CH), [](auto part_o, auto part_m, auto part_l, auto q, auto k_cache,
                                                      auto v_cache, auto seq_len, auto chunks_per_split, auto scale) {
        using namespace tessera;
        auto h = program_id<0>();
        auto split = program_id<1>();
        auto qt = reshape<GP, 128>(load<1, GP, 128>(q, h, c<0>, c<0>));
        // The chunks of this split that hold positions < seq_len (none for a split past the end).
        auto chunks = (seq_len + c<CH - 1>) / c<CH>;
        auto trips = maximum(minimum(chunks_per_split, chunks - split * chunks_per_split), c<0>);
        auto r = for_range(
            trips,
            [=](auto i, auto m, auto l, auto o) {
              auto chunk = split * chunks_per_split + i;
              auto kt = reshape<CH, 128>(load<1, CH, 128>(k_cache, h, chunk, c<0>));
              auto vt = reshape<CH, 128>(load<1, CH, 128>(v_cache, h, chunk, c<0>));
              auto positions = reshape<1, CH>(iota<CH>() + chunk * c<CH>);
              auto s = select(positions < seq_len, mma(qt, transpose(kt), c<0.0>) * scale, c<-inf>);  // [GP, CH]
              auto m_new = maximum(m, max<1>(s));
              auto m_use = select(m_new == c<-inf>, c<0.0>, m_new);
              auto alpha = exp(m - m_use);
              auto p = exp(s - m_use);
              return carry(m_new, l * alpha + sum<1>(p), mma(cast<kBF16>(p), vt, o * alpha));
            },
            full<kF32, GP, 1>(c<-inf>), full<kF32, GP, 1>(c<0.0>), full<kF32, GP, 128>(c<0.0>));
        return seq(part_o.store(reshape<1, 1, GP * 128>(get<2>(r))), part_m.store(reshape<1, 1, GP>(get<0>(r))),
                   part_l.store(reshape<1, 1, GP>(get<1>(r))));
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
