// matmul_kernels.h: the GEMM kernels of bench_matmul, written as a user writes them, shared with
// tests/unit/test_matmul.cpp (which runs them at small sizes on both targets).
//
// The output is partitioned into BM x BN tiles, one program per tile; a for_range K loop carries
// an f32 accumulator and each iteration adds the product of A's BM x BK tile (row tile
// program_id<0>, column tile k) and B's BK x BN tile (row tile k, column tile program_id<1>).
// A is M x K and B is K x N, row-major; the tile shape is the caller's choice (powers of two).
#pragma once

#include <tessera/tessera.h>

#include <string>

namespace matmul_kernels {

inline std::string tile_name(int bm, int bn, int bk) {
  return std::to_string(bm) + "x" + std::to_string(bn) + "x" + std::to_string(bk);
}

// out = a @ b, accumulated in f32 and stored in out's dtype (bf16 or f16 for the benchmark).
template <int BM, int BN, int BK>
auto matmul() {
  return tessera::kernel("matmul_" + tile_name(BM, BN, BK), [](auto o, auto a, auto b) {
    using namespace tessera;
    auto acc = for_range(
        (dim<1>(a) + c<BK - 1>) / c<BK>,
        [=](auto k, auto acc) { return mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc); },
        full<DType::f32, BM, BN>(c<0.0>));
    return o.store(cast<decltype(o)::dtype>(acc));
  });
}

// out = bf16(gelu(a @ b + bias)), bias a bf16 row of N loaded with the output tile's column index,
// GELU in its tanh approximation 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) as tessera's
// gelu_tanh computes it (one exponential and one reciprocal), all fused before the store.
template <int BM, int BN, int BK>
auto matmul_bias_gelu() {
  return tessera::kernel("matmul_bias_gelu_" + tile_name(BM, BN, BK), [](auto o, auto a, auto b, auto bias) {
    using namespace tessera;
    auto acc = for_range(
        (dim<1>(a) + c<BK - 1>) / c<BK>,
        [=](auto k, auto acc) { return mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc); },
        full<DType::f32, BM, BN>(c<0.0>));
    return o.store(cast<DType::bf16>(gelu_tanh(acc + cast<DType::f32>(load<BN>(bias, program_id<1>())))));
  });
}

// out = (a @ b) * (scale_a * scale_b), stored in out's dtype: the product torch._scaled_mm computes
// with per-tensor f32 scales, for 8-bit float a and b (the scales are f32 scalar parameters).
template <int BM, int BN, int BK>
auto scaled_matmul() {
  return tessera::kernel("scaled_matmul_" + tile_name(BM, BN, BK), [](auto o, auto a, auto b, auto scale_a, auto scale_b) {
    using namespace tessera;
    auto acc = for_range(
        (dim<1>(a) + c<BK - 1>) / c<BK>,
        [=](auto k, auto acc) { return mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc); },
        full<DType::f32, BM, BN>(c<0.0>));
    return o.store(cast<decltype(o)::dtype>(acc * (scale_a * scale_b)));
  });
}

}  // namespace matmul_kernels
