// sampling.h: choosing the next token from the f32 logits [V] on the device.
//
// Greedy (two stages, so that the work spreads over many programs):
//   argmax_blocks<B>     program b: the largest logit of block [bB, bB + B) and its first index,
//                        into block_value [nb] and block_index [nb] (tiles of 1); the block's
//                        tail past V reads as -inf.
//   argmax_final<BB>     one program: loops over the block results BB at a time, keeping per lane
//                        the first strictly larger value, then takes the smallest index among
//                        the lanes holding the maximum: the first index of the largest logit, as
//                        torch.argmax. Writes the token into token [1].
// Sampling with temperature, top-k and top-p works on the K most likely tokens (candidates):
//   topk_blocks<B, K>    program b: the K largest logits of block b with their indices, sorted
//                        descending (ties: the smaller index first), into cand_value [nb, K] and
//                        cand_index [nb, K]; K rounds of "take the maximum, then mask it to -inf".
//   topk_merge<M, K>     program j: the same over the M candidate lists [jM, jM + M) of the
//                        previous stage ([n, K] -> [ceil(n / M), K]); run until one list is left.
//   sample_topk<K>       one program: from the final list (the K most likely tokens, sorted),
//                        p_i = exp((v_i - v_0) / T) for ranks i < top_k (else 0); keeps the
//                        smallest prefix whose mass reaches top_p of the total (rank i is kept
//                        iff the mass before it is < top_p * total, so rank 0 always is), and
//                        draws by inverting the cumulative sum of the kept p_i at u * (their
//                        sum), u in [0, 1) an f32 scalar. Writes the token into token [1].
// Cumulative sums are sums over a lower-triangular mask of a [K, K] tile (the language has no
// scan). Sampling never looks past the K candidates: top_k may be at most K and top-p applies
// within them (sampler.h says what this means for top_k = 0). Ties in the logits go to the
// smaller token id everywhere, so top_k = 1 is exactly greedy.
#pragma once

#include <limits>

#include "kernels/tile_common.h"

namespace qwen3::kernels {
namespace sampling_detail {

using namespace tessera;

inline constexpr double kNoIndex = std::numeric_limits<std::int32_t>::max();

// K rounds of "take the largest remaining value, smallest index first, then remove it" over the
// f32 [N] values and their i32 [N] indices; returns (values [K], indices [K]) sorted descending.
template <int N, int K, class V, class I>
constexpr auto top_k_of(V values, I indices) {
  auto slot = iota<K>();
  auto r = for_range(
      c<K>,
      [=](auto round, auto rest, auto top_value, auto top_index) {
        auto m = max<0>(rest);                                      // [1]
        auto at = min<0>(select(rest == m, indices, c<kNoIndex>));  // [1]
        return carry(select(indices == at, c<-inf>, rest), select(slot == round, m, top_value),
                     select(slot == round, at, top_index));
      },
      values, full<kF32, K>(c<-inf>), full<kI32, K>(c<kNoIndex>));
  return r;
}

}  // namespace sampling_detail

template <int B>
auto argmax_blocks() {
  static_assert(power_of_two(B), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_argmax_blocks", B), [](auto block_value, auto block_index, auto logits) {
    using namespace tessera;
    auto x = load<B>(logits, program_id<0>()).padded(c<-inf>);
    auto m = max<0>(x);
    auto index = iota<B>() + program_id<0>() * c<B>;
    auto first = min<0>(select(x == m, index, c<sampling_detail::kNoIndex>));
    return seq(block_value.store(m), block_index.store(first));
  });
}

template <int BB>
auto argmax_final() {
  static_assert(power_of_two(BB), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_argmax_final", BB), [](auto token, auto block_value, auto block_index) {
    using namespace tessera;
    auto r = for_range((dim<0>(block_value) + c<BB - 1>) / c<BB>,
                       [=](auto j, auto best, auto at) {
                         auto v = load<BB>(block_value, j).padded(c<-inf>);
                         auto better = v > best;
                         return carry(select(better, v, best), select(better, load<BB>(block_index, j), at));
                       },
                       full<kF32, BB>(c<-inf>), full<kI32, BB>(c<sampling_detail::kNoIndex>));
    auto best = get<0>(r);
    return token.store(min<0>(select(best == max<0>(best), get<1>(r), c<sampling_detail::kNoIndex>)));
  });
}

template <int B, int K>
auto topk_blocks() {
  static_assert(power_of_two(B) && power_of_two(K) && K <= B, "tile sizes are powers of two, K <= B");
  return tessera::kernel(tiled_name("qwen3_topk_blocks", B, K), [](auto cand_value, auto cand_index, auto logits) {
    using namespace tessera;
    auto values = load<B>(logits, program_id<0>()).padded(c<-inf>);
    auto r = sampling_detail::top_k_of<B, K>(values, iota<B>() + program_id<0>() * c<B>);
    return seq(cand_value.store(reshape<1, K>(get<1>(r))), cand_index.store(reshape<1, K>(get<2>(r))));
  });
}

template <int M, int K>
auto topk_merge() {
  static_assert(power_of_two(M) && power_of_two(K), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_topk_merge", M, K), [](auto cand_value, auto cand_index, auto in_value, auto in_index) {
        using namespace tessera;
        auto values = reshape<M * K>(load<M, K>(in_value, program_id<0>(), c<0>).padded(c<-inf>));
        auto indices = reshape<M * K>(load<M, K>(in_index, program_id<0>(), c<0>));
        auto r = sampling_detail::top_k_of<M * K, K>(values, indices);
        return seq(cand_value.store(reshape<1, K>(get<1>(r))), cand_index.store(reshape<1, K>(get<2>(r))));
      });
}

template <int K>
auto sample_topk() {
  static_assert(power_of_two(K), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_sample_topk", K), [](auto token, auto cand_value, auto cand_index,
                                                                auto inv_temperature, auto top_k, auto top_p, auto u) {
    using namespace tessera;
    auto rank = iota<K>();
    auto v = reshape<K>(load<1, K>(cand_value, c<0>, c<0>).padded(c<-inf>));
    auto ids = reshape<K>(load<1, K>(cand_index, c<0>, c<0>));
    auto p = select(rank < top_k, exp((v - max<0>(v)) * inv_temperature), c<0.0>);
    // cumulative[i] = sum_{j <= i} x[j], through a lower-triangular [K, K] mask.
    auto lower = reshape<1, K>(rank) <= reshape<K, 1>(rank);  // [i, j]: j <= i
    auto cumulative = [=](auto x) { return reshape<K>(sum<1>(select(lower, reshape<1, K>(x), c<0.0>))); };
    auto mass = cumulative(p);
    auto kept = select(mass - p < top_p * sum<0>(p), p, c<0.0>);
    auto kept_mass = cumulative(kept);
    auto first = min<0>(select(kept_mass > u * sum<0>(kept) && kept > c<0.0>, rank, c<sampling_detail::kNoIndex>));
    auto last_kept = max<0>(select(kept > c<0.0>, rank, c<0>));  // if rounding put u * sum at the end
    auto chosen = select(first == c<sampling_detail::kNoIndex>, last_kept, first);
    return token.store(sum<0>(select(rank == chosen, ids, c<0>)));
  });
}

}  // namespace qwen3::kernels
