// gemm_products.h: the check the wgmma schedule tests share (test_tail_halves.cpp,
// test_ping_pong.cpp): bench_matmul's GEMMs (matmul_kernels.h) of bf16 inputs at tile BM x BN x 64,
// launched with the given options, equal the host reference (matmul_reference.h) with bf16 and
// f32 outputs, a row-major B and a K-major one (the transposed view of an N x K weight), and with
// a bias + GELU + bf16 epilogue. N and K must be multiples of 8 (rows 16-byte aligned, as TMA
// needs).
#pragma once

#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <cstdint>

#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"

namespace gemm_products {

// The products of an M x K and a K x N matrix of random values (seeds `seed` to `seed` + 2).
template <int BM, int BN>
void equal_the_reference(const tessera::LaunchOptions& o, int64_t m, int64_t n, int64_t k, unsigned seed) {
  using namespace tessera;
  using namespace matmul_reference;
  INFO("tile " << BM << " x " << BN << ", M " << m << ", N " << n << ", K " << k);
  auto a = exec_test::random_tensor<bfloat16, 2>({m, k}, -1, 1, seed);
  auto w = exec_test::random_tensor<bfloat16, 2>({n, k}, -1, 1, seed + 1);
  auto bias = exec_test::random_tensor<bfloat16, 1>({n}, -1, 1, seed + 2);
  const Tensor<bfloat16, 2> b = row_major_copy_of_transposed(w);
  const Reference r = reference_wt(a, w);
  const double bound = product_bound(DType::bf16, k), rel = std::ldexp(1.0, -8);
  Tensor<bfloat16, 2> out({m, n});
  Tensor<float, 2> wide({m, n});
  auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
  auto got_wide = [&](int64_t i, int64_t j) { return double(wide(i, j)); };
  auto want = [&](int64_t i, int64_t j) { return r.at(i, j); };
  auto mm = matmul_kernels::matmul<BM, BN, 64>();
  mm.launch(o, out.template partition<BM, BN>(), a, b);
  CHECK(mismatches(r, m, n, bound, rel, got, want) == 0);
  mm.launch(o, out.template partition<BM, BN>(), a, w.transposed());
  CHECK(mismatches(r, m, n, bound, rel, got, want) == 0);
  mm.launch(o, wide.template partition<BM, BN>(), a, b);
  CHECK(mismatches(r, m, n, bound, 0, got_wide, want) == 0);
  mm.launch(o, wide.template partition<BM, BN>(), a, w.transposed());
  CHECK(mismatches(r, m, n, bound, 0, got_wide, want) == 0);
  matmul_kernels::matmul_bias_gelu<BM, BN, 64>().launch(o, out.template partition<BM, BN>(), a, b, bias);
  CHECK(mismatches(r, m, n, 1.13 * bound, rel, got,
                   [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
}

}  // namespace gemm_products
