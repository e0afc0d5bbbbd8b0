// prefill_matmul.h: the prefill's projections, GEMMs with fused epilogues.
//
// Every kernel computes the f32 product a @ b of the bf16 activations a [T, K] (row-major) and a
// bf16 weight seen as b [K, N]: the caller passes Hugging Face's [N, K] row-major weight as the
// view w.transposed() (no copy), so b is column-contiguous. The output [T, N] is cut into [BM, BN]
// tiles, one program per tile at (program_id<0>, program_id<1>) = (row tile, column tile); a K
// loop carries an f32 [BM, BN] accumulator through mma(a tile [BM, BK], b tile [BK, BN], acc),
// and an elementwise epilogue makes the stored value. Tiles past T, N or K read as zero and are
// not stored, so no size needs to be a multiple of a tile.
//
//   prefill_matmul            out = a @ b                       f32 out
//   prefill_matmul_bf16       out = bf16(a @ b)                 bf16 out: QKV (to the q/k norm), gate
//   prefill_matmul_residual   out = residual + a @ b            o_proj and down_proj: the residual
//                                                               stream's dtype (bf16 in the engine)
//   prefill_matmul_swiglu     out = bf16(silu(gate) * (a @ b))  bf16 out: up_proj, SwiGLU fused
//
// Each is written in the class that the sm_90 tensor-core lowering takes (README's language
// table; docs/compiler.md, "Tensor cores"): one K loop from 0 whose only update is the mma of
// a[pid0, k] and b[k, pid1], then elementwise ops and loads of other arguments at (pid0, pid1)
// (the residual tile, the gate tile), then one store; BM 64 or 128, BN 64, 128 or 256, BK 64 or
// 128. The residual is a separate input and never the output itself (the class does not read the
// output back), so the residual stream alternates between two buffers. SwiGLU: gate and up are
// two GEMMs, since stacking them into one weight would copy the weights; the gate GEMM stores
// bf16 (as a bf16 nn.Linear does, and as the QKV GEMM does: an f32 output's stores and the
// epilogue that reads it back are on the critical path of the consumers, so its bytes count), and
// the up GEMM applies silu(gate) * up in its
// epilogue, reading the gate tile, with the approximate exp and division (not tessera::silu,
// whose exp is the accurate one, as the decode's product uses it): their error (a few f32
// ulps) is far below the bf16 rounding of the result, and the accurate forms made the epilogue
// a third of the up GEMM's time on the H100 (docs/performance.md).
// On other targets, and for B operands the tensor-core lowering does not take, the same kernels
// run through the loop lowering, which handles any strides.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {
namespace matmul_detail {

using namespace tessera;

// The f32 [BM, BN] tile (pid0, pid1) of a @ b, accumulated over K = dim<1>(a) in steps of BK.
template <int BM, int BN, int BK, class A, class B>
constexpr auto product_tile(A a, B b) {
  return for_range((dim<1>(a) + c<BK - 1>) / c<BK>,
                   [=](auto k, auto acc) {
                     return mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc);
                   },
                   full<kF32, BM, BN>(c<0.0>));
}

template <int BM, int BN, int BK>
constexpr void check_tiles() {
  static_assert(power_of_two(BM) && power_of_two(BN) && power_of_two(BK), "tile sizes are powers of two");
}

}  // namespace matmul_detail

template <int BM, int BN, int BK>
auto prefill_matmul() {
  matmul_detail::check_tiles<BM, BN, BK>();
  return tessera::kernel(tiled_name("qwen3_prefill_matmul", BM, BN, BK), [](auto out, auto a, auto b) {
    return out.store(matmul_detail::product_tile<BM, BN, BK>(a, b));
  });
}

template <int BM, int BN, int BK>
auto prefill_matmul_bf16() {
  matmul_detail::check_tiles<BM, BN, BK>();
  return tessera::kernel(tiled_name("qwen3_prefill_matmul_bf16", BM, BN, BK), [](auto out, auto a, auto b) {
    return out.store(tessera::cast<kBF16>(matmul_detail::product_tile<BM, BN, BK>(a, b)));
  });
}

template <int BM, int BN, int BK>
auto prefill_matmul_residual() {
  matmul_detail::check_tiles<BM, BN, BK>();
  return tessera::kernel(tiled_name("qwen3_prefill_matmul_residual", BM, BN, BK),
                         [](auto out, auto a, auto b, auto residual) {
                           using namespace tessera;
                           auto r = cast<kF32>(load<BM, BN>(residual, program_id<0>(), program_id<1>()));
                           return out.store(cast<std::remove_cvref_t<decltype(out)>::dtype>(
                               r + matmul_detail::product_tile<BM, BN, BK>(a, b)));
                         });
}

template <int BM, int BN, int BK>
auto prefill_matmul_swiglu() {
  matmul_detail::check_tiles<BM, BN, BK>();
  return tessera::kernel(tiled_name("qwen3_prefill_matmul_swiglu", BM, BN, BK),
                         [](auto out, auto a, auto b, auto gate) {
                           using namespace tessera;
                           auto up = matmul_detail::product_tile<BM, BN, BK>(a, b);
                           auto g = cast<kF32>(load<BM, BN>(gate, program_id<0>(), program_id<1>()));
                           return out.store(cast<kBF16>(fast_div(g, c<1.0> + fast_exp(-g)) * up));
                         });
}

}  // namespace qwen3::kernels
