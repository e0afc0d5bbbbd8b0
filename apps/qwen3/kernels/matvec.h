// matvec.h: matrix-vector products for batch-1 projections, with the fusions a decoder layer needs.
//
// Every kernel computes y = W v for a bf16 weight W [N, K] stored row-major as Hugging Face
// stores linear weights ([out, in]) and an f32 vector v [K], accumulating in f32. The output is
// partitioned into tiles of R rows, one program per tile; a program walks its R rows in steps of
// BK columns, so each weight element is read exactly once per product (the kernels are bound by
// the weight bytes; the vector is re-read by every program, from cache). The accumulator is an
// f32 [R, BK] tile reduced along its columns at the end. K need not be a multiple of BK nor N of
// R: columns past K read as zero in both W and v, rows past N are not stored.
//
//   matvec               y = W v                                 (the LM head without a norm)
//   matvec_residual      x = x + W v   (x read back from the output: its own tile)  o_proj, down_proj
//   rmsnorm_matvec       y = W rmsnorm(x)                        the QKV projection, the LM head
//   rmsnorm_swiglu       y = silu(Wg n) * (Wu n), n = rmsnorm(x)  gate and up projections + SwiGLU
//
// rmsnorm(x) = x * inv * g, with g the bf16 norm weight [K] and inv = rsqrt(mean(x^2) + eps) a
// scalar, so W rmsnorm(x) = inv * (W (x * g)): each program multiplies its chunks of x by g as it
// uses them, sums the squares of the same chunks in a [BK] tile beside its products, and scales
// its reduced rows by inv at the end, all in f32. The norm thus costs no pass over x before the K
// loop (a prologue computing inv before the loop cost the LM head 40% of its time on the H200)
// and no kernel of its own (a one-program kernel per norm was 2 of a layer's 9 launches). The
// residual add is fused into the epilogue of the product that feeds the residual stream, which
// (with the next layer's norm in the next product) is the "residual add fused with the next
// RMSNorm".
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {
namespace matvec_detail {

using namespace tessera;

// The f32 [R] product of R rows (row tile `row_tile`) of the bf16 matrix w with the vector given
// by chunk(k) (an f32 [BK] tile for column tile k), over `steps` column tiles.
template <int R, int BK, class W, class RowTile, class Steps, class Chunk>
constexpr auto rows_times(W w, RowTile row_tile, Steps steps, Chunk chunk) {
  auto acc = for_range(
      steps, [=](auto k, auto acc) { return acc + cast<kF32>(load<R, BK>(w, row_tile, k)) * reshape<1, BK>(chunk(k)); },
      full<kF32, R, BK>(c<0.0>));
  return reshape<R>(sum<1>(acc));
}

// The number of BK-wide column tiles of the vector x (rank 1).
template <int BK, class X>
constexpr auto column_steps(X x) {
  return (dim<0>(x) + c<BK - 1>) / c<BK>;
}

// rsqrt(sum / K + eps) for the sum of squares `squares` (an f32 [BK] tile summed here) of the
// f32 vector x, as an f32 [1] tile.
template <class Squares, class X, class Eps>
constexpr auto inverse_rms(Squares squares, X x, Eps eps) {
  return rsqrt(sum<0>(squares) / cast<kF32>(dim<0>(x)) + eps);
}

}  // namespace matvec_detail

template <int R, int BK>
auto matvec() {
  static_assert(power_of_two(R) && power_of_two(BK), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_matvec", R, BK), [](auto out, auto w, auto v) {
    using namespace tessera;
    return out.store(matvec_detail::rows_times<R, BK>(w, program_id<0>(), matvec_detail::column_steps<BK>(v),
                                                      [=](auto k) { return load<BK>(v, k); }));
  });
}

template <int R, int BK>
auto matvec_residual() {
  static_assert(power_of_two(R) && power_of_two(BK), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_matvec_residual", R, BK), [](auto x, auto w, auto v) {
    using namespace tessera;
    auto y = matvec_detail::rows_times<R, BK>(w, program_id<0>(), matvec_detail::column_steps<BK>(v),
                                              [=](auto k) { return load<BK>(v, k); });
    return x.store(x.load() + y);
  });
}

template <int R, int BK>
auto rmsnorm_matvec() {
  static_assert(power_of_two(R) && power_of_two(BK), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_rmsnorm_matvec", R, BK), [](auto out, auto w, auto x, auto g, auto eps) {
    using namespace tessera;
    auto r = for_range(
        matvec_detail::column_steps<BK>(x),
        [=](auto k, auto acc, auto squares) {
          auto v = load<BK>(x, k);
          auto n = reshape<1, BK>(load<BK>(x, k) * cast<kF32>(load<BK>(g, k)));
          return carry(acc + cast<kF32>(load<R, BK>(w, program_id<0>(), k)) * n, squares + v * v);
        },
        full<kF32, R, BK>(c<0.0>), full<kF32, BK>(c<0.0>));
    auto inv = matvec_detail::inverse_rms(get<1>(r), x, eps);
    return out.store(reshape<R>(sum<1>(get<0>(r))) * inv);
  });
}

template <int R, int BK>
auto rmsnorm_swiglu() {
  static_assert(power_of_two(R) && power_of_two(BK), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_rmsnorm_swiglu", R, BK),
                         [](auto out, auto w_gate, auto w_up, auto x, auto g, auto eps) {
                           using namespace tessera;
                           auto r = for_range(
                               matvec_detail::column_steps<BK>(x),
                               [=](auto k, auto acc_gate, auto acc_up, auto squares) {
                                 auto v = load<BK>(x, k);
                                 auto n = reshape<1, BK>(load<BK>(x, k) * cast<kF32>(load<BK>(g, k)));
                                 return carry(acc_gate + cast<kF32>(load<R, BK>(w_gate, program_id<0>(), k)) * n,
                                              acc_up + cast<kF32>(load<R, BK>(w_up, program_id<0>(), k)) * n,
                                              squares + v * v);
                               },
                               full<kF32, R, BK>(c<0.0>), full<kF32, R, BK>(c<0.0>), full<kF32, BK>(c<0.0>));
                           auto inv = matvec_detail::inverse_rms(get<2>(r), x, eps);
                           auto gate = reshape<R>(sum<1>(get<0>(r))) * inv;
                           auto up = reshape<R>(sum<1>(get<1>(r))) * inv;
                           return out.store(silu(gate) * up);
                         });
}

}  // namespace qwen3::kernels
