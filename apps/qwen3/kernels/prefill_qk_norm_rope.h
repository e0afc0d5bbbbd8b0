// prefill_qk_norm_rope.h: the per-head q/k RMSNorm and RoPE of T prompt positions, with the
// KV-cache append.
//
// Both kernels read the bf16 output of the QKV GEMM, qkv [T, q_width + 2 kv_width] (the query
// heads, then the K heads, then the V heads, 128 columns each), and the RoPE tables' rows of the
// chunk's positions, cos_rows and sin_rows [T, 64] (views of rope_table.h's tables at rows
// start .. start + T - 1). The per-head norm and RoPE are those of the decode step
// (qk_norm_rope.h, rope_detail::norm_rope), computed in f32 and rounded to bf16 once. (qkv is
// bf16 as a bf16 nn.Linear's output is; any float dtype works: the loads are cast to f32.)
//
//   prefill_q_norm_rope<BT>          grid [n_heads, ceil(T / BT)]: program (head, j) writes
//       q_out[head, t, :] = bf16(rope(rmsnorm(q_head(t)) * q_norm)) for its BT positions t;
//       q_out is bf16 [n_heads, T, 128] (tile [1, BT, 128]), the layout attention reads.
//   prefill_kv_norm_rope_append<BT>  grid [n_kv, ceil(T / BT)]: program (h, j) writes
//       k_out[h, t, :] = bf16(rope(rmsnorm(k_head(t)) * k_norm)), v_out[h, t, :] = bf16(v_head(t));
//       k_out and v_out are the cache rows of the chunk (views [n_kv, T, 128] of the caches
//       [n_kv, context, 128] at start), so the append is the store.
// Heads are addressed as 64-wide column tiles of qkv: query head h's halves are column tiles 2h
// and 2h + 1; K head h's are k_column + 2h and + 1 (k_column = q_width / 64, an i32 scalar); V
// head h is the 128-wide column tile v_column + h (v_column = (q_width + kv_width) / 128).
// Two kernels rather than one because the outputs of one launch share one grid, and the query
// heads are G times as many as the KV heads.
#pragma once

#include "kernels/qk_norm_rope.h"
#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int BT>
auto prefill_q_norm_rope() {
  static_assert(power_of_two(BT), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_prefill_q_norm_rope", BT), [](auto q_out, auto qkv, auto q_norm,
                                                                         auto cos_rows, auto sin_rows, auto eps) {
    using namespace tessera;
    auto head = program_id<0>();
    auto j = program_id<1>();
    auto q = rope_detail::norm_rope<BT>(cast<kF32>(load<BT, 64>(qkv, j, head * c<2>)),
                                        cast<kF32>(load<BT, 64>(qkv, j, head * c<2> + c<1>)), q_norm,
                                        load<BT, 64>(cos_rows, j, c<0>), load<BT, 64>(sin_rows, j, c<0>), eps);
    return q_out.store(cast<kBF16>(reshape<1, BT, 128>(q)));
  });
}

template <int BT>
auto prefill_kv_norm_rope_append() {
  static_assert(power_of_two(BT), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_prefill_kv_norm_rope_append", BT),
      [](auto k_out, auto v_out, auto qkv, auto k_norm, auto cos_rows, auto sin_rows, auto k_column, auto v_column,
         auto eps) {
        using namespace tessera;
        auto h = program_id<0>();
        auto j = program_id<1>();
        auto k = rope_detail::norm_rope<BT>(cast<kF32>(load<BT, 64>(qkv, j, k_column + h * c<2>)),
                                            cast<kF32>(load<BT, 64>(qkv, j, k_column + h * c<2> + c<1>)), k_norm,
                                            load<BT, 64>(cos_rows, j, c<0>), load<BT, 64>(sin_rows, j, c<0>), eps);
        auto v = load<BT, 128>(qkv, j, v_column + h);
        return seq(k_out.store(cast<kBF16>(reshape<1, BT, 128>(k))), v_out.store(cast<kBF16>(reshape<1, BT, 128>(v))));
      });
}

}  // namespace qwen3::kernels
