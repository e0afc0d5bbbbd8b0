// qk_norm_rope.h: Qwen3's per-head q/k RMSNorm and RoPE, fused with the KV-cache append.
//
// One program per KV head h (grid [n_kv]) reads the f32 output of the QKV projection and writes
//   q_out[h, g, :]     = bf16(rope(rmsnorm(q_head(h*G + g)) * q_norm))   g = 0 .. G-1
//   k_slot[h, 0, :]    = bf16(rope(rmsnorm(k_head(h)) * k_norm))
//   v_slot[h, 0, :]    = bf16(v_head(h))
// where G is the GQA group (query heads per KV head). k_slot and v_slot are [n_kv, 1, D] rows: the
// decode step's staging rows (kernels/decode_step.h), or views of the caches at the position, so
// that the append costs nothing beyond the store. The head size D is 128 for every Qwen3 model,
// and the kernel is written for it (its halves are 64 wide).
//
// The per-head RMSNorm is over the head's 128 values with one 128-wide weight shared by all heads,
// applied before RoPE, as transformers' Qwen3Attention does; it is computed in f32. RoPE is
// rotate-half: for i < 64, out[i] = y[i] cos[i] - y[i+64] sin[i] and out[i+64] = y[i+64] cos[i] +
// y[i] sin[i], with cos and sin the f32 rows cos_row, sin_row [1, 64] of the tables at the position
// (rope_table.h computes the tables, the tile language has no sin or cos; step_rows copies the
// decode step's rows on the GPU).
//
// Inputs are views of the projection output in the shapes the loads need: q_in [n_kv, G, 2, 64]
// (the query part), k_in [n_kv, 2, 64], v_in [n_kv, 128]. The query heads of one KV head are
// loaded as a [GP, 64] tile per half, GP = the power of two >= G; rows past G read as zero and
// their stores are dropped (q_out is [n_kv, G, 128], its tile [1, GP, 128]). The two halves are
// loaded separately and joined by a select on the half index, which is how a tile is
// concatenated in this language.
#pragma once

#include <utility>

#include "kernels/tile_common.h"

namespace qwen3::kernels {
namespace rope_detail {

using namespace tessera;

// rope(rmsnorm(y) * weight) of heads given as halves a, b (f32 [M, 64] each), as the two rotated
// halves {first, second} (f32 [M, 64] each); weight is the bf16 [128] norm weight, cs/sn the f32
// [1, 64] table rows.
template <class A, class B, class Wt, class Cos, class Sin, class Eps>
constexpr auto norm_rope_halves(A a, B b, Wt weight, Cos cs, Sin sn, Eps eps) {
  auto inv = rsqrt((sum<1>(a * a) + sum<1>(b * b)) * c<1.0 / 128> + eps);  // [M, 1]
  auto ya = a * inv * reshape<1, 64>(cast<kF32>(load<64>(weight, c<0>)));
  auto yb = b * inv * reshape<1, 64>(cast<kF32>(load<64>(weight, c<1>)));
  return std::pair(ya * cs - yb * sn, yb * cs + ya * sn);
}

// The same, joined into an f32 [M, 2, 64] tile.
template <int M, class A, class B, class Wt, class Cos, class Sin, class Eps>
constexpr auto norm_rope(A a, B b, Wt weight, Cos cs, Sin sn, Eps eps) {
  auto [first, second] = norm_rope_halves(a, b, weight, cs, sn, eps);
  auto half = reshape<1, 2, 1>(iota<2>());
  return select(half == c<0>, reshape<M, 1, 64>(first), reshape<M, 1, 64>(second));
}

// The G query heads of KV head h (rows past G zero) and its key head, each normed and rotated
// (norm_rope above): f32 [GP, 2, 64] and [1, 2, 64], from the views q_in [n_kv, G, 2, 64] and
// k_in [n_kv, 2, 64].
template <int GP, class QIn, class H, class Wt, class Cos, class Sin, class Eps>
constexpr auto query_heads(QIn q_in, H h, Wt q_norm, Cos cs, Sin sn, Eps eps) {
  return norm_rope<GP>(reshape<GP, 64>(load<1, GP, 1, 64>(q_in, h, c<0>, c<0>, c<0>)),
                       reshape<GP, 64>(load<1, GP, 1, 64>(q_in, h, c<0>, c<1>, c<0>)), q_norm, cs, sn, eps);
}
template <class KIn, class H, class Wt, class Cos, class Sin, class Eps>
constexpr auto key_head(KIn k_in, H h, Wt k_norm, Cos cs, Sin sn, Eps eps) {
  return norm_rope<1>(reshape<1, 64>(load<1, 1, 64>(k_in, h, c<0>, c<0>)),
                      reshape<1, 64>(load<1, 1, 64>(k_in, h, c<1>, c<0>)), k_norm, cs, sn, eps);
}

// The normed and rotated query heads and key head of this program's KV head (program id 0), with
// the RoPE rows at the position (cos_row, sin_row [1, 64]): {f32 [GP, 2, 64], f32 [1, 2, 64]}.
template <int GP, class QIn, class KIn, class QW, class KW, class CosRow, class SinRow, class Eps>
constexpr auto program_heads(QIn q_in, KIn k_in, QW q_norm, KW k_norm, CosRow cos_row, SinRow sin_row, Eps eps) {
  auto h = program_id<0>();
  auto cs = load<1, 64>(cos_row, c<0>, c<0>);
  auto sn = load<1, 64>(sin_row, c<0>, c<0>);
  return std::pair(query_heads<GP>(q_in, h, q_norm, cs, sn, eps), key_head(k_in, h, k_norm, cs, sn, eps));
}

}  // namespace rope_detail

template <int GP>
auto qk_norm_rope_append() {
  static_assert(power_of_two(GP), "tile sizes are powers of two");
  return tessera::kernel(
      tiled_name("qwen3_qk_norm_rope_append", GP),
      [](auto q_out, auto k_slot, auto v_slot, auto q_in, auto k_in, auto v_in, auto q_norm, auto k_norm, auto cos_row,
         auto sin_row, auto eps) {
        using namespace tessera;
        auto h = program_id<0>();
        auto [q, k] = rope_detail::program_heads<GP>(q_in, k_in, q_norm, k_norm, cos_row, sin_row, eps);
        return seq(q_out.store(cast<kBF16>(reshape<1, GP, 128>(q))), k_slot.store(cast<kBF16>(reshape<1, 1, 128>(k))),
                   v_slot.store(cast<kBF16>(reshape<1, 1, 128>(load<1, 128>(v_in, h, c<0>)))));
      });
}

}  // namespace qwen3::kernels
