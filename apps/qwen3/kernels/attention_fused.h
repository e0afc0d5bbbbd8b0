// attention_fused.h: a short context's whole decode attention in one kernel: the per-head q/k
// RMSNorm and RoPE, the staging of the new K and V rows, and grouped-query attention over the
// cache, one program per KV head.
//
// decode_attention_fused: grid [n_kv]. Program h computes what qk_norm_rope_append,
// decode_attention_split with one split and decode_attention_combine compute together
// (qk_norm_rope.h, attention.h), and stores
//   out[h, :]       = the f32 attention output of the G query heads of KV head h (tile [1, GP*128])
//   k_slot[h, 0, :] = bf16(rope(rmsnorm(k_head(h)) * k_norm))     the step's staging rows
//   v_slot[h, 0, :] = bf16(v_head(h))
// from the QKV projection's views q_in [n_kv, G, 2, 64], k_in [n_kv, 2, 64], v_in [n_kv, 128]. q
// and the new k are rounded to bf16 as the three kernels store them, so the scores are the same
// products. The loop runs `chunks` iterations over the cache's chunks of CH positions from
// position 0, masking positions from n - 1 on (n = length[0, 0], written on the GPU); the newest
// position n - 1 is one more online-softmax step after the loop, from the k and v the program has
// just computed. The online softmax is the split's: f32 running max, sum and unnormalized output,
// the exponentials with 0 in place of a max still -inf, p rounded to bf16 for p V. The output is
// o / l, what the combine of one split stores.
//
// One program per KV head reads the whole context, so the engine runs this kernel only while the
// context is short (EngineOptions::fused_attention_positions): it saves two kernel boundaries per
// layer and gives up the split's parallelism; longer contexts run the three kernels.
// `chunks` must cover the n positions (chunks * CH >= n) within the cache's positions.
#pragma once

#include "kernels/attention.h"
#include "kernels/qk_norm_rope.h"
#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int GP, int CH>
auto decode_attention_fused() {
  static_assert(power_of_two(GP) && power_of_two(CH), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_attention_fused", GP, CH),
      [](auto out, auto k_slot, auto v_slot, auto q_in, auto k_in, auto v_in, auto q_norm, auto k_norm, auto cos_row,
         auto sin_row, auto k_cache, auto v_cache, auto length, auto chunks, auto eps, auto scale) {
        using namespace tessera;
        auto h = program_id<0>();
        auto [q, k] = rope_detail::program_heads<GP>(q_in, k_in, q_norm, k_norm, cos_row, sin_row, eps);
        auto qt = cast<kBF16>(reshape<GP, 128>(q));
        auto k_row = cast<kBF16>(reshape<1, 128>(k));
        auto v_row = cast<kBF16>(load<1, 128>(v_in, h, c<0>));
        auto n = load<1, 1>(length, c<0>, c<0>);  // [1, 1]: positions < n are attended
        auto last = n - c<1>;                     // the new position, whose K and V are k_row, v_row
        auto r = for_range(
            chunks,
            [=](auto chunk, auto m, auto l, auto o) {
              return attention_detail::chunk_step<GP, CH>(qt, k_cache, v_cache, h, chunk, last, scale, m, l, o);
            },
            full<kF32, GP, 1>(c<-inf>), full<kF32, GP, 1>(c<0.0>), full<kF32, GP, 128>(c<0.0>));
        auto s_last = sum<1>(cast<kF32>(qt) * cast<kF32>(k_row)) * scale;  // [GP, 1]
        auto m_end = maximum(get<0>(r), s_last);
        auto alpha = exp(get<0>(r) - m_end);
        auto p_last = exp(s_last - m_end);
        auto l_end = get<1>(r) * alpha + p_last;
        auto o_end = get<2>(r) * alpha + p_last * cast<kF32>(v_row);
        return seq(out.store(reshape<1, GP * 128>(o_end / l_end)), k_slot.store(reshape<1, 1, 128>(k_row)),
                   v_slot.store(reshape<1, 1, 128>(v_row)));
      });
}

}  // namespace qwen3::kernels
