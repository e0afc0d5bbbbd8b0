// prefill_rmsnorm.h: RMSNorm of the rows of the prefill's residual stream, to a bf16 GEMM operand.
//
// prefill_rmsnorm<R, BC>: out[t, :] = bf16(x[t, :] * rsqrt(mean(x[t, :]^2) + eps) * g) for the
// rows x [T, H] (bf16 in the engine, or f32) and the bf16 weight g [H], eps an f32 scalar; out is
// bf16 [T, H] in tiles of [R, BC]. The norm is computed in f32; only the result is rounded, once,
// to bf16, because the tensor-core GEMM that reads it takes 16-bit operands (the decode step
// keeps it in f32).
//
// prefill_row_f32<BH>: out = f32(x) for one row x [H] (the last row of the residual stream, which
// the decode step's LM head reads as an f32 vector).
// Program (i, j) first sums the squares of its R rows over all of H (BC columns at a time), then
// normalizes its own [R, BC] tile: each row's sum is computed by the ceil(H / BC) programs of the
// row, which costs ceil(H / BC) reads of the row (5 at the engine's BC = 512 for H = 2560,
// mostly from L2) against a kernel that would need a second pass or a tile as wide as H. Columns
// past H read as zero and are not stored; a BC that divides H leaves no program a ragged tile.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int R, int BC>
auto prefill_rmsnorm() {
  static_assert(power_of_two(R) && power_of_two(BC), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_prefill_rmsnorm", R, BC), [](auto out, auto x, auto g, auto eps) {
    using namespace tessera;
    auto squares = for_range((dim<1>(x) + c<BC - 1>) / c<BC>,
                             [=](auto k, auto acc) {
                               auto v = cast<kF32>(load<R, BC>(x, program_id<0>(), k));
                               return acc + v * v;
                             },
                             full<kF32, R, BC>(c<0.0>));
    auto inv = rsqrt(sum<1>(squares) / cast<kF32>(dim<1>(x)) + eps);  // [R, 1]
    auto weight = reshape<1, BC>(cast<kF32>(load<BC>(g, program_id<1>())));
    return out.store(cast<kBF16>(cast<kF32>(load<R, BC>(x, program_id<0>(), program_id<1>())) * inv * weight));
  });
}

template <int BH>
auto prefill_row_f32() {
  static_assert(power_of_two(BH), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_prefill_row_f32", BH), [](auto out, auto x) {
    using namespace tessera;
    return out.store(cast<kF32>(load<BH>(x, program_id<0>())));
  });
}

}  // namespace qwen3::kernels
