// attention_short.h: a short context's whole decode attention in one kernel and one pass: the
// per-head q/k RMSNorm and RoPE, the staging of the new K and V rows, and grouped-query attention
// over the first CH positions of the cache, one program per KV head, without a loop.
//
// decode_attention_short: grid [n_kv]. Program h loads the cache's first CH positions of KV head
// h ([CH, 128] bf16 K and V) at its start, beside the QKV projection's outputs, so every load of
// the program is in flight at once; it then computes what qk_norm_rope_append,
// decode_attention_split with one split of one chunk, and decode_attention_combine compute
// together (qk_norm_rope.h, attention.h), and stores
//   out[h, :]       = the f32 attention output of the G query heads of KV head h (tile [1, GP*128])
//   k_slot[h, 0, :] = bf16(rope(rmsnorm(k_head(h)) * k_norm))     the step's staging rows
//   v_slot[h, 0, :] = bf16(v_head(h))
// from the views q_in [n_kv, G, 2, 64], k_in [n_kv, 2, 64], v_in [n_kv, 128]; k_cache and
// v_cache are [n_kv, positions, 2, 64] views of the caches (the halves of a head loaded apart).
// q and the new k are rounded to bf16 as the three kernels store them. The scores are taken as
// two products over the halves of the head, q1 k1^T + q2 k2^T, so the rotated halves of q are
// never joined into one tile (a join moves values between threads, and here it would sit
// between the loads and the first product). Positions from n - 1 on (n = length[0, 0], written on
// the GPU) are masked; the newest position n - 1 is the k and v the program has just computed.
// The softmax is exact over the n positions: one max, one sum, p rounded to bf16 for p V as the
// split does, the output o / l.
//
// The kernel covers contexts of at most CH positions (n <= CH); the engine runs it only there
// (EngineOptions::short_attention_positions) and the three kernels beyond.
#pragma once

#include "kernels/qk_norm_rope.h"
#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int GP, int CH>
auto decode_attention_short() {
  static_assert(power_of_two(GP) && power_of_two(CH), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_attention_short", GP, CH),
      [](auto out, auto k_slot, auto v_slot, auto q_in, auto k_in, auto v_in, auto q_norm, auto k_norm, auto cos_row,
         auto sin_row, auto k_cache, auto v_cache, auto length, auto eps, auto scale) {
        using namespace tessera;
        using rope_detail::norm_rope_halves;
        auto h = program_id<0>();
        auto k1 = reshape<CH, 64>(load<1, CH, 1, 64>(k_cache, h, c<0>, c<0>, c<0>));
        auto k2 = reshape<CH, 64>(load<1, CH, 1, 64>(k_cache, h, c<0>, c<1>, c<0>));
        auto vt = reshape<CH, 128>(load<1, CH, 2, 64>(v_cache, h, c<0>, c<0>, c<0>));
        auto cs = load<1, 64>(cos_row, c<0>, c<0>);
        auto sn = load<1, 64>(sin_row, c<0>, c<0>);
        auto [q1, q2] =
            norm_rope_halves(reshape<GP, 64>(load<1, GP, 1, 64>(q_in, h, c<0>, c<0>, c<0>)),
                             reshape<GP, 64>(load<1, GP, 1, 64>(q_in, h, c<0>, c<1>, c<0>)), q_norm, cs, sn, eps);
        auto [n1, n2] = norm_rope_halves(reshape<1, 64>(load<1, 1, 64>(k_in, h, c<0>, c<0>)),
                                         reshape<1, 64>(load<1, 1, 64>(k_in, h, c<1>, c<0>)), k_norm, cs, sn, eps);
        auto q1b = cast<kBF16>(q1), q2b = cast<kBF16>(q2);  // [GP, 64]
        auto n1b = cast<kBF16>(n1), n2b = cast<kBF16>(n2);  // [1, 64]
        auto v_row = cast<kBF16>(load<1, 128>(v_in, h, c<0>));
        auto last = load<1, 1>(length, c<0>, c<0>) - c<1>;  // the new position, whose K and V are computed here
        auto positions = reshape<1, CH>(iota<CH>());
        auto s = select(positions < last, mma(q2b, transpose(k2), mma(q1b, transpose(k1), c<0.0>)) * scale,
                        c<-inf>);  // [GP, CH]
        auto s_last =
            (sum<1>(cast<kF32>(q1b) * cast<kF32>(n1b)) + sum<1>(cast<kF32>(q2b) * cast<kF32>(n2b))) * scale;  // [GP, 1]
        auto m = maximum(max<1>(s), s_last);
        auto p = exp(s - m);
        auto p_last = exp(s_last - m);
        auto l = sum<1>(p) + p_last;
        auto o = mma(cast<kBF16>(p), vt, p_last * cast<kF32>(v_row));  // [GP, 128]
        auto half = reshape<1, 2, 1>(iota<2>());
        auto k_row = select(half == c<0>, reshape<1, 1, 64>(n1b), reshape<1, 1, 64>(n2b));  // [1, 2, 64]
        return seq(out.store(reshape<1, GP * 128>(o / l)), k_slot.store(reshape<1, 1, 128>(k_row)),
                   v_slot.store(reshape<1, 1, 128>(v_row)));
      });
}

}  // namespace qwen3::kernels
