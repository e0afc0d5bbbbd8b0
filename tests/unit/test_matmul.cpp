// test_matmul.cpp: matrix products written as a user writes a GEMM kernel, on random data, on the
// CPU target and on the GPU, against a host reference accumulated in double (issue #22, item 6).
//
// Every kernel has the same shape: the output is partitioned into BM x BN tiles (one program per
// tile), a for_range K loop carries an f32 accumulator, and each iteration adds
//   mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc).
// Covered: f16, bf16 and f32 inputs; M, N and K that no tile divides, and K smaller than one
// tile; M = 1 (a row vector times a matrix); up to 16 rows in 16-row tiles; a fused epilogue (scale, bias row, relu or the tanh
// GELU, residual add, bf16 cast) before the store; transposed operands (through
// Tensor::transposed() views, and through transpose() of a loaded tile); batched products (3-D
// tensors, the batch as program_id<0>, tiles of 1 x BM x BK reshaped to BM x BK), also with one
// matrix shared by the whole batch; and a compile of the benchmark's and the example's kernels for
// every GPU target. The tolerances (product_bound below) hold for any summation order and for
// the tensor-core lowering, so these tests stay as they are when mma moves onto tensor cores.
#include "driver/cuda_driver.h"
#include "example_kernels.h"
#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"
#include "ptxas_log.h"
#include "scoped_env.h"
#include "text_count.h"

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

using text_count::occurrences;
using namespace tessera;

namespace {

using exec_test::random_tensor;
using namespace matmul_reference;
using ptxas_log::whole_program_log;

template <int BM, int BN, int BK>
auto gemm(const std::string& name) {
  return kernel(name, [](auto o, auto a, auto b) {
    auto acc = for_range(
        (dim<1>(a) + c<BK - 1>) / c<BK>,
        [=](auto k, auto acc) { return mma(load<BM, BK>(a, program_id<0>(), k), load<BK, BN>(b, k, program_id<1>()), acc); },
        full<DType::f32, BM, BN>(c<0.0>));
    return o.store(acc);
  });
}

// c = a b for random a: m x k, b: k x n of dtype T, with 32 x 32 x 16 tiles, f32 output.
template <class T>
void check_product(Target target, int64_t m, int64_t n, int64_t k, unsigned seed) {
  auto a = random_tensor<T, 2>({m, k}, -1, 1, seed);
  auto b = random_tensor<T, 2>({k, n}, -1, 1, seed + 1);
  Tensor<float, 2> out({m, n});
  gemm<32, 32, 16>("matmul_" + std::string(dtype_name(dtype_v<T>))).launch_on(target, out.partition<32, 32>(), a, b);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  INFO(dtype_name(dtype_v<T>) << " " << m << " x " << n << " x " << k);
  CHECK(mismatches(r, m, n, product_bound(dtype_v<T>, k), 0, [&](int64_t i, int64_t j) { return d(out(i, j)); },
                   [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
}

// Shapes (M x N x K) over 32 x 32 x 16 tiles: whole tiles; M, N and K all ragged; K smaller than
// one tile; a longer K loop; M and N smaller than one tile.
template <class T>
void ragged_products(Target target) {
  check_product<T>(target, 64, 64, 64, 1);
  check_product<T>(target, 100, 72, 50, 3);
  check_product<T>(target, 45, 37, 7, 5);
  check_product<T>(target, 33, 65, 300, 7);
  check_product<T>(target, 5, 3, 17, 9);
}
void ragged_bf16(Target target) { ragged_products<bfloat16>(target); }
void ragged_f16(Target target) { ragged_products<half>(target); }
void ragged_f32(Target target) { ragged_products<float>(target); }

// A row vector (and five of them) times a matrix, with 1 x 64 output tiles and K in 32-wide steps:
// the batch-1 projections of a decoder (one-row tiles run as multiply-adds: tile-vector-mma). B
// row-major and as the transposed view of an N x K weight (with K = 256 its columns are 16-byte
// aligned, and the pass reads it through the transposed argument); K ragged (100), below one step
// (20) and whole (256); and a loop that starts from a nonzero accumulator (0.5 + a b).
void row_vector_times_matrix(Target target) {
  const int64_t n = 200;
  auto vec = gemm<1, 64, 32>("matvec");
  auto half_plus = kernel("matvec_half_plus", [](auto o, auto a, auto b) {
    auto acc = for_range(
        (dim<1>(a) + c<31>) / c<32>,
        [=](auto k, auto acc) { return mma(load<1, 32>(a, program_id<0>(), k), load<32, 64>(b, k, program_id<1>()), acc); },
        full<DType::f32, 1, 64>(c<0.5>));
    return o.store(acc);
  });
  for (int64_t k : {100, 20, 256}) {
    auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 11);
    Tensor<bfloat16, 2> w({n, k});  // b's values, stored N x K
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t j = 0; j < n; ++j) w(j, kk) = std::as_const(b)(kk, j);
    for (int64_t m : {1, 5}) {
      auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 12);
      const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                               [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
      auto check = [&](const Tensor<float, 2>& out, double offset) {
        return mismatches(r, m, n, product_bound(DType::bf16, k), 0,
                          [&](int64_t i, int64_t j) { return d(out(i, j)) - offset; },
                          [&](int64_t i, int64_t j) { return r.at(i, j); });
      };
      INFO("m = " << m << ", k = " << k);
      Tensor<float, 2> out({m, n}), out_w({m, n}), out_half({m, n});
      vec.launch_on(target, out.partition<1, 64>(), a, b);
      CHECK(check(out, 0) == 0);
      vec.launch_on(target, out_w.partition<1, 64>(), a, w.transposed());
      CHECK(check(out_w, 0) == 0);
      half_plus.launch_on(target, out_half.partition<1, 64>(), a, b);
      CHECK(check(out_half, 0.5) == 0);
    }
  }
}

// out = cast<bf16>(act(alpha * (a b) + bias) + residual) in one kernel, bias a row of N loaded with
// the output tile's column index, residual loaded like the output tile. The tolerance is the
// product's bound times |alpha| times the activation's steepest slope (1 for relu, under 1.13 for
// GELU), plus 2^-8 of the result for the bf16 rounding of the output (round to nearest: 2^-9) and
// the few f32 roundings of the epilogue.
template <bool Gelu>
void fused_epilogue_case(Target target) {
  const int64_t m = 100, n = 72, k = 50;
  const float alpha = 0.75f;
  auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 21);
  auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 22);
  auto bias = random_tensor<bfloat16, 1>({n}, -1, 1, 23);
  auto res = random_tensor<bfloat16, 2>({m, n}, -1, 1, 24);
  Tensor<bfloat16, 2> out({m, n});
  auto fused = kernel(Gelu ? "matmul_gelu_epilogue" : "matmul_relu_epilogue",
                      [](auto o, auto x, auto y, auto scale, auto row, auto skip) {
                        constexpr int BM = 32, BN = 32, BK = 16;
                        auto acc = for_range(
                            (dim<1>(x) + c<BK - 1>) / c<BK>,
                            [=](auto kk, auto acc) {
                              return mma(load<BM, BK>(x, program_id<0>(), kk), load<BK, BN>(y, kk, program_id<1>()), acc);
                            },
                            full<DType::f32, BM, BN>(c<0.0>));
                        auto z = scale * acc + cast<DType::f32>(load<BN>(row, program_id<1>()));
                        if constexpr (Gelu) {
                          auto g = c<0.5> * z * (c<1.0> + tanh(c<0.7978845608028654> * (z + c<0.044715> * z * z * z)));
                          return o.store(cast<DType::bf16>(g + cast<DType::f32>(skip.load_like(o))));
                        } else {
                          return o.store(cast<DType::bf16>(maximum(z, c<0.0>) + cast<DType::f32>(skip.load_like(o))));
                        }
                      });
  fused.launch_on(target, out.partition<32, 32>(), a, b, alpha, bias, res);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  auto want = [&](int64_t i, int64_t j) {
    const double z = alpha * r.at(i, j) + d(bias(j));
    return (Gelu ? gelu_tanh(z) : std::max(z, 0.0)) + d(res(i, j));
  };
  const double slope = Gelu ? 1.13 : 1.0;
  // The f32 epilogue's roundings are relative to its operands, up to about |alpha| 2 sqrt(K) here,
  // not to the result: an absolute 1e-5 covers them.
  auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double w = want(i, j);
      const double tol = slope * alpha * product_bound(DType::bf16, k) * r.mag(i, j) + std::ldexp(1.0, -8) * std::abs(w) + 1e-5;
      if (!(std::abs(got(i, j) - w) <= tol)) {
        if (bad == 0) UNSCOPED_INFO("first mismatch at (" << i << ", " << j << "): got " << got(i, j) << ", want " << w);
        ++bad;
      }
    }
  CHECK(bad == 0);
}
void epilogue_relu(Target target) { fused_epilogue_case<false>(target); }
void epilogue_gelu(Target target) { fused_epilogue_case<true>(target); }

// A transposed operand: B kept as N x K (a weight matrix as nn.Linear stores it) and A as K x M,
// passed as Tensor::transposed() views (K x N and M x K, strided, no copy) to the plain GEMM
// kernel; and B read as N x K tiles, turned with transpose() inside the kernel.
void transposed_operands(Target target) {
  const int64_t m = 100, n = 72, k = 50;
  auto at = random_tensor<half, 2>({k, m}, -1, 1, 31);  // A^T
  auto bt = random_tensor<half, 2>({n, k}, -1, 1, 32);  // B^T
  auto a = random_tensor<half, 2>({m, k}, -1, 1, 33);
  const auto bound = product_bound(DType::f16, k);
  {
    Tensor<float, 2> out({m, n});
    gemm<32, 32, 16>("matmul_views").launch_on(target, out.partition<32, 32>(), at.transposed(), bt.transposed());
    const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(at(kk, i)); },
                             [&](int64_t kk, int64_t j) { return d(bt(j, kk)); });
    INFO("A and B through transposed() views");
    CHECK(mismatches(r, m, n, bound, 0, [&](int64_t i, int64_t j) { return d(out(i, j)); },
                     [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
  }
  {
    Tensor<float, 2> out({m, n});
    auto nt = kernel("matmul_nt", [](auto o, auto x, auto wt) {
      auto acc = for_range(
          (dim<1>(x) + c<15>) / c<16>,
          [=](auto kk, auto acc) {
            return mma(load<32, 16>(x, program_id<0>(), kk), transpose(load<32, 16>(wt, program_id<1>(), kk)), acc);
          },
          full<DType::f32, 32, 32>(c<0.0>));
      return o.store(acc);
    });
    nt.launch_on(target, out.partition<32, 32>(), a, bt);
    const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                             [&](int64_t kk, int64_t j) { return d(bt(j, kk)); });
    INFO("B as N x K tiles, transpose() in the kernel");
    CHECK(mismatches(r, m, n, bound, 0, [&](int64_t i, int64_t j) { return d(out(i, j)); },
                     [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
  }
}

// Batched products over 3-D tensors: the output [batch, M, N] in 1 x 32 x 32 tiles, so that
// program_id<0> is the batch and program_id<1>, <2> the tile's row and column; each iteration
// loads 1 x 32 x 16 and 1 x 16 x 32 tiles and reshapes them to matrices. Then the same with one
// 2-D B shared by every batch (a weight applied to a batch of activations).
void batched_products(Target target) {
  const int64_t batch = 3, m = 50, n = 40, k = 24;
  auto a = random_tensor<bfloat16, 3>({batch, m, k}, -1, 1, 41);
  auto b = random_tensor<bfloat16, 3>({batch, k, n}, -1, 1, 42);
  auto w = random_tensor<bfloat16, 2>({k, n}, -1, 1, 43);
  const auto bound = product_bound(DType::bf16, k);
  auto bmm = kernel("batched_matmul", [](auto o, auto x, auto y) {
    auto acc = for_range(
        (dim<2>(x) + c<15>) / c<16>,
        [=](auto kk, auto acc) {
          return mma(reshape<32, 16>(load<1, 32, 16>(x, program_id<0>(), program_id<1>(), kk)),
                     reshape<16, 32>(load<1, 16, 32>(y, program_id<0>(), kk, program_id<2>())), acc);
        },
        full<DType::f32, 32, 32>(c<0.0>));
    return o.store(reshape<1, 32, 32>(acc));
  });
  auto shared = kernel("batched_matmul_shared_b", [](auto o, auto x, auto y) {
    auto acc = for_range(
        (dim<2>(x) + c<15>) / c<16>,
        [=](auto kk, auto acc) {
          return mma(reshape<32, 16>(load<1, 32, 16>(x, program_id<0>(), program_id<1>(), kk)),
                     load<16, 32>(y, kk, program_id<2>()), acc);
        },
        full<DType::f32, 32, 32>(c<0.0>));
    return o.store(reshape<1, 32, 32>(acc));
  });
  Tensor<float, 3> out({batch, m, n}), out_shared({batch, m, n});
  bmm.launch_on(target, out.partition<1, 32, 32>(), a, b);
  shared.launch_on(target, out_shared.partition<1, 32, 32>(), a, w);
  for (int64_t s = 0; s < batch; ++s) {
    const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(s, i, kk)); },
                             [&](int64_t kk, int64_t j) { return d(b(s, kk, j)); });
    const auto rw = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(s, i, kk)); },
                              [&](int64_t kk, int64_t j) { return d(w(kk, j)); });
    INFO("batch " << s);
    CHECK(mismatches(r, m, n, bound, 0, [&](int64_t i, int64_t j) { return d(out(s, i, j)); },
                     [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
    CHECK(mismatches(rw, m, n, bound, 0, [&](int64_t i, int64_t j) { return d(out_shared(s, i, j)); },
                     [&](int64_t i, int64_t j) { return rw.at(i, j); }) == 0);
  }
}

// The example's kernel (examples/matmul.cpp) and a benchmark kernel at small sizes, so that the
// exact kernels bench_matmul times are checked on both targets too.
void example_and_benchmark_kernels(Target target) {
  const int64_t m = 70, n = 130, k = 90;
  auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 51);
  auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 52);
  auto bias = random_tensor<bfloat16, 1>({n}, -1, 1, 53);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  const double bound = product_bound(DType::bf16, k), rel = std::ldexp(1.0, -8);
  Tensor<bfloat16, 2> out({m, n});
  auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
  examples::matmul_bias_relu().launch_on(target, out.partition<128, 128>(), a, b, bias);
  CHECK(mismatches(r, m, n, bound, rel, got, [&](int64_t i, int64_t j) { return std::max(r.at(i, j) + d(bias(j)), 0.0); }) == 0);
  matmul_kernels::matmul<64, 64, 32>().launch_on(target, out.partition<64, 64>(), a, b);
  CHECK(mismatches(r, m, n, bound, rel, got, [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
  // GELU's slope is under 1.13; its own f32 roundings fall within the bf16 output's 2^-8.
  matmul_kernels::matmul_bias_gelu<64, 64, 32>().launch_on(target, out.partition<64, 64>(), a, b, bias);
  CHECK(mismatches(r, m, n, 1.13 * bound, rel, got, [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
}

// Tile shapes that the tensor-core lowering takes on sm_90 (warp-specialized TMA + wgmma code,
// docs/compiler.md), at ragged and whole sizes, with K below, at and above one tile and not a
// multiple of it, and an epilogue; on the CPU target the same kernels take the loop lowering.
void tensor_core_tiles(Target target) {
  struct Case {
    int64_t m, n, k;
  };
  for (Case c : {Case{300, 520, 200}, Case{256, 512, 128}, Case{129, 264, 40}, Case{1, 8, 8}}) {
    INFO("M " << c.m << ", N " << c.n << ", K " << c.k);
    auto a = random_tensor<bfloat16, 2>({c.m, c.k}, -1, 1, 61);
    auto b = random_tensor<bfloat16, 2>({c.k, c.n}, -1, 1, 62);
    auto bias = random_tensor<bfloat16, 1>({c.n}, -1, 1, 63);
    const auto r = reference(c.m, c.n, c.k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                             [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
    const double bound = product_bound(DType::bf16, c.k), rel = std::ldexp(1.0, -8);
    Tensor<bfloat16, 2> out({c.m, c.n});
    auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
    auto plain = [&](int64_t i, int64_t j) { return r.at(i, j); };
    matmul_kernels::matmul<128, 256, 64>().launch_on(target, out.partition<128, 256>(), a, b);
    CHECK(mismatches(r, c.m, c.n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul<64, 128, 128>().launch_on(target, out.partition<64, 128>(), a, b);
    CHECK(mismatches(r, c.m, c.n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul_bias_gelu<128, 128, 64>().launch_on(target, out.partition<128, 128>(), a, b, bias);
    CHECK(mismatches(r, c.m, c.n, 1.13 * bound, rel, got,
                     [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
    Tensor<float, 2> wide({c.m, c.n});
    matmul_kernels::matmul<128, 64, 64>().launch_on(target, wide.partition<128, 64>(), a, b);
    CHECK(mismatches(r, c.m, c.n, bound, 0, [&](int64_t i, int64_t j) { return static_cast<double>(wide(i, j)); },
                     plain) == 0);
    // B as the transposed view of an N x K row-major weight (how linear layers store theirs): on
    // sm_90 a K-major B operand of the same tensor-core code.
    Tensor<bfloat16, 2> w({c.n, c.k});
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t kk = 0; kk < c.k; ++kk) w(j, kk) = b(kk, j);
    matmul_kernels::matmul<128, 256, 64>().launch_on(target, out.partition<128, 256>(), a, w.transposed());
    CHECK(mismatches(r, c.m, c.n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul_bias_gelu<64, 128, 128>().launch_on(target, out.partition<64, 128>(), a, w.transposed(),
                                                               bias);
    CHECK(mismatches(r, c.m, c.n, 1.13 * bound, rel, got,
                     [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
    // f32 inputs with a K-major B: on sm_90 wgmma's tf32 (BK 32 or 64 f32: 128 or 256 bytes).
    auto af = random_tensor<float, 2>({c.m, c.k}, -1, 1, 64);
    auto wf = random_tensor<float, 2>({c.n, c.k}, -1, 1, 65);
    const auto rf = reference(c.m, c.n, c.k, [&](int64_t i, int64_t kk) { return static_cast<double>(af(i, kk)); },
                              [&](int64_t kk, int64_t j) { return static_cast<double>(wf(j, kk)); });
    const double bound_f32 = product_bound(DType::f32, c.k), rel_f32 = std::ldexp(1.0, -24);
    auto wide_got = [&](int64_t i, int64_t j) { return static_cast<double>(wide(i, j)); };
    auto plain_f32 = [&](int64_t i, int64_t j) { return rf.at(i, j); };
    matmul_kernels::matmul<128, 256, 32>().launch_on(target, wide.partition<128, 256>(), af, wf.transposed());
    CHECK(mismatches(rf, c.m, c.n, bound_f32, rel_f32, wide_got, plain_f32) == 0);
    matmul_kernels::matmul<64, 128, 64>().launch_on(target, wide.partition<64, 128>(), af, wf.transposed());
    CHECK(mismatches(rf, c.m, c.n, bound_f32, rel_f32, wide_got, plain_f32) == 0);
    // f32 inputs with a row-major B: on sm_90 the product computed transposed (B^T as wgmma's
    // register operand), each consumer owning 64 columns.
    Tensor<float, 2> bf({c.k, c.n});
    for (int64_t kk = 0; kk < c.k; ++kk)
      for (int64_t j = 0; j < c.n; ++j) bf(kk, j) = wf(j, kk);
    matmul_kernels::matmul<256, 128, 32>().launch_on(target, wide.partition<256, 128>(), af, bf);
    CHECK(mismatches(rf, c.m, c.n, bound_f32, rel_f32, wide_got, plain_f32) == 0);
    matmul_kernels::matmul<128, 64, 64>().launch_on(target, wide.partition<128, 64>(), af, bf);
    CHECK(mismatches(rf, c.m, c.n, bound_f32, rel_f32, wide_got, plain_f32) == 0);
  }
}

// Products of up to 16 rows (a decoder's projections of a few tokens) with B the transposed view
// of an N x K weight, in the benchmark's 16-row tiles: on sm_90 they take the mma.sync lowering
// (wgmma's tiles start at 64 rows). M below, at and (for the grid) above 16; N and K ragged.
void sixteen_row_tiles(Target target) {
  for (int64_t m : {16, 5, 1, 33}) {
    const int64_t n = 200, k = 300;
    INFO("m = " << m);
    auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 71);
    auto w = random_tensor<bfloat16, 2>({n, k}, -1, 1, 72);
    const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                             [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
    Tensor<bfloat16, 2> out({m, n});
    auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
    auto plain = [&](int64_t i, int64_t j) { return r.at(i, j); };
    const double bound = product_bound(DType::bf16, k), rel = std::ldexp(1.0, -8);
    matmul_kernels::matmul<16, 64, 128>().launch_on(target, out.partition<16, 64>(), a, w.transposed());
    CHECK(mismatches(r, m, n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul<16, 128, 64>().launch_on(target, out.partition<16, 128>(), a, w.transposed());
    CHECK(mismatches(r, m, n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul<16, 32, 128>().launch_on(target, out.partition<16, 32>(), a, w.transposed());
    CHECK(mismatches(r, m, n, bound, rel, got, plain) == 0);
    matmul_kernels::matmul<16, 16, 128>().launch_on(target, out.partition<16, 16>(), a, w.transposed());
    CHECK(mismatches(r, m, n, bound, rel, got, plain) == 0);
  }
}

}  // namespace

TESSERA_TARGET_TEST_CASE("matmul, bf16 inputs: whole and ragged M, N, K, K below one tile", "[mma][matmul]", ragged_bf16)
TESSERA_TARGET_TEST_CASE("matmul, f16 inputs: whole and ragged M, N, K, K below one tile", "[mma][matmul]", ragged_f16)
TESSERA_TARGET_TEST_CASE("matmul, f32 inputs: whole and ragged M, N, K, K below one tile", "[mma][matmul]", ragged_f32)
TESSERA_TARGET_TEST_CASE("matmul of one and of five rows by a matrix, 1 x 64 tiles", "[mma][matmul]", row_vector_times_matrix)
TESSERA_TARGET_TEST_CASE("matmul with a fused scale, bias, relu, residual and bf16 cast", "[mma][matmul]", epilogue_relu)
TESSERA_TARGET_TEST_CASE("matmul with a fused scale, bias, tanh GELU, residual and bf16 cast", "[mma][matmul]",
                         epilogue_gelu)
TESSERA_TARGET_TEST_CASE("matmul with transposed operands: views and transpose() of a tile", "[mma][matmul][views]",
                         transposed_operands)
TESSERA_TARGET_TEST_CASE("batched matmul over 3-D tensors, and with one B for the whole batch", "[mma][matmul]",
                         batched_products)
TESSERA_TARGET_TEST_CASE("the matmul example's and benchmark's kernels", "[mma][matmul]", example_and_benchmark_kernels)
TESSERA_TARGET_TEST_CASE("matmul in the tile shapes of the tensor-core lowering, ragged and whole", "[mma][matmul]",
                         tensor_core_tiles)
TESSERA_TARGET_TEST_CASE("matmul of up to 16 rows by a K-major B in 16-row tiles", "[mma][matmul]", sixteen_row_tiles)

TEST_CASE("a wgmma GEMM, loaded as PTX, gets a cubin only for an artifact; prepare compiles without one",
          "[mma][matmul][compile]") {
  if (!exec_test::toolchain_present()) return;
  // A kernel of its own name, so that no other test compiled it first in this process.
  auto gemm = kernel("prepare_then_compile_gemm", [](auto o, auto a, auto b) {
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto k, auto acc) { return mma(load<128, 64>(a, program_id<0>(), k), load<64, 128>(b, k, program_id<1>()), acc); },
        full<DType::f32, 128, 128>(c<0.0>));
    return o.store(cast<DType::bf16>(acc));
  });
  Tensor<bfloat16, 2> a({256, 256}), b({256, 256}), out({256, 256});
  LaunchOptions o;
  o.target = Target::sm_90;
  gemm.prepare(o, out.partition<128, 128>(), a, b);
  const CompiledArtifact first = gemm.compile(o, out.partition<128, 128>(), a, b);
  CHECK(first.ptx.find("wgmma.mma_async") != std::string::npos);
  REQUIRE(first.cubin.size() > 4);
  CHECK(std::string(first.cubin.data() + 1, 3) == "ELF");
  // The cubin is the artifact's, made once: the launch's compile had no cubin stage.
  int cubins = 0;
  for (const auto& [stage, ms] : first.stage_ms) cubins += stage == "cubin";
  CHECK(cubins == 1);
  CHECK(first.stage_ms.back().first == "cubin");
  CHECK(gemm.compile(o, out.partition<128, 128>(), a, b).cubin == first.cubin);
}

TEST_CASE("on sm_90 a matmul of the tensor-core class compiles to TMA and wgmma code, others do not",
          "[mma][matmul][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> a({512, 256}), b({256, 1024}), out({512, 1024}), odd({256, 1001}), out_odd({512, 1001});
  Tensor<bfloat16, 1> bias({1024});
  const CompiledArtifact tc = matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, b);
  CHECK(tc.ptx.find(".target sm_90a") != std::string::npos);
  CHECK(tc.ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") != std::string::npos);
  CHECK(tc.ptx.find("cp.async.bulk.tensor.2d") != std::string::npos);
  CHECK(tc.ptx.find("setmaxnreg.inc.sync.aligned.u32 232") != std::string::npos);
  CHECK(!tc.cubin.empty());
  const CompiledArtifact gelu =
      matmul_kernels::matmul_bias_gelu<128, 128, 64>().compile(Target::sm_90, out.partition<128, 128>(), a, b, bias);
  CHECK(gelu.ptx.find("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16") != std::string::npos);
  // Rows of B not 16-byte aligned (1001 bf16): TMA cannot read them; the loop lowering runs.
  const CompiledArtifact loops =
      matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, out_odd.partition<128, 256>(), a, odd);
  CHECK(loops.ptx.find("wgmma") == std::string::npos);
  CHECK(loops.ptx.find(".target sm_90a") == std::string::npos);
  // B as the transposed view of an N x K row-major matrix: K-major B (tnsp-b 0), its tensor map
  // over N x K. A transposed view whose columns are not 16-byte aligned takes the loop lowering.
  Tensor<bfloat16, 2> w({1024, 256}), w_odd({1024, 250});
  const CompiledArtifact kmajor =
      matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, w.transposed());
  CHECK(kmajor.ptx.find("wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16") != std::string::npos);
  CHECK(kmajor.ptx.find("p, 1, 1, 0, 0;") != std::string::npos);
  CHECK(tc.ptx.find("p, 1, 1, 0, 1;") != std::string::npos);
  Tensor<bfloat16, 2> a_odd({512, 250});
  CHECK(matmul_kernels::matmul<128, 256, 64>()
            .compile(Target::sm_90, out.partition<128, 256>(), a_odd, w_odd.transposed())
            .ptx.find("wgmma") == std::string::npos);
  // f32 inputs with a K-major B: wgmma of tf32 (k8, no transpose operands); with a row-major B
  // (which wgmma reads as tf32 only from registers) the product transposed, of N = BM, B^T from
  // registers, in BN 64 or 128 only: 128 x 256 takes the mma.sync lowering.
  Tensor<float, 2> wide({512, 1024}), af({512, 256}), bf({256, 1024}), wf({1024, 256});
  const CompiledArtifact tf32 =
      matmul_kernels::matmul<128, 256, 32>().compile(Target::sm_90, wide.partition<128, 256>(), af, wf.transposed());
  CHECK(tf32.ptx.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32") != std::string::npos);
  CHECK(tf32.ptx.find("p, 1, 1;") != std::string::npos);
  CHECK(matmul_kernels::matmul<128, 256, 32>()
            .compile(Target::sm_90, wide.partition<128, 256>(), af, bf)
            .ptx.find("wgmma") == std::string::npos);
  const CompiledArtifact tf32_transposed =
      matmul_kernels::matmul<256, 128, 32>().compile(Target::sm_90, wide.partition<256, 128>(), af, bf);
  CHECK(tf32_transposed.ptx.find("wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32") != std::string::npos);
  // What ptxas reports of every tensor-core kernel compiled as the driver compiles it, as a whole
  // program: no spills, wgmma not serialized, setmaxnreg taken (issue #22, item 6). nvJitLink
  // compiles PTX as relocatable code, where ptxas ignores setmaxnreg and every thread keeps the 168
  // registers of the entry, which is why the launcher loads these kernels' PTX; its log says
  // nothing of the code that runs. Checked with the CUDA toolkit's ptxas where there is one (and
  // by the driver's own compile on an sm_90 GPU, below).
  const std::string ptxas = ptxas_log::toolkit_ptxas_or_warn();
  // The Qwen3 prefill's up projection: an epilogue that loads a whole f32 tile and divides.
  auto gated = kernel("gemm_swiglu_128x128x64", [](auto o, auto a, auto b, auto gate) {
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto k, auto acc) { return mma(load<128, 64>(a, program_id<0>(), k), load<64, 128>(b, k, program_id<1>()), acc); },
        full<DType::f32, 128, 128>(c<0.0>));
    auto g = load<128, 128>(gate, program_id<0>(), program_id<1>());
    return o.store(cast<DType::bf16>(g / (c<1.0> + exp(-g)) * acc));
  });
  Tensor<half, 2> ah({512, 256}), bh({256, 1024}), outh({512, 1024});
  const std::vector<std::pair<std::string, CompiledArtifact>> kernels = {
      {"bf16 128x256x64", tc},
      {"f16 128x256x64", matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, outh.partition<128, 256>(), ah, bh)},
      {"bf16 128x128x64", matmul_kernels::matmul<128, 128, 64>().compile(Target::sm_90, out.partition<128, 128>(), a, b)},
      {"bf16 64x128x128", matmul_kernels::matmul<64, 128, 128>().compile(Target::sm_90, out.partition<64, 128>(), a, b)},
      {"bf16 -> f32 128x64x64", matmul_kernels::matmul<128, 64, 64>().compile(Target::sm_90, wide.partition<128, 64>(), a, b)},
      {"K-major B 128x256x64", kmajor},
      {"f32 (tf32), K-major B 128x256x32", tf32},
      {"f32 (tf32), K-major B 128x128x64",
       matmul_kernels::matmul<128, 128, 64>().compile(Target::sm_90, wide.partition<128, 128>(), af, wf.transposed())},
      {"f32 (tf32), row-major B 256x128x32", tf32_transposed},
      {"f32 (tf32), row-major B 128x128x64",
       matmul_kernels::matmul<128, 128, 64>().compile(Target::sm_90, wide.partition<128, 128>(), af, bf)},
      {"bias + GELU 128x128x64", gelu},
      {"bias + GELU 128x256x64",
       matmul_kernels::matmul_bias_gelu<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, b, bias)},
      {"SwiGLU reading an f32 tile, K-major B 128x128x64 (its loads issued in batches)",
       gated.compile(Target::sm_90, out.partition<128, 128>(), a, w.transposed(), wide)}};
  for (const auto& [name, artifact] : kernels) {
    INFO(name);
    REQUIRE(artifact.ptx.find("wgmma.mma_async") != std::string::npos);
    ptxas_log::check_gemm_log(ptxas, artifact.ptx);
  }
  // 16-row tiles (bench_matmul's M = 16 cases, also with the 8-stage pipelines its tuner tries):
  // mma.sync, not wgmma, with nothing spilled.
  Tensor<bfloat16, 2> a16({16, 256}), out16({16, 1024});
  LaunchOptions deep;
  deep.target = Target::sm_90;
  deep.hints.pipeline_stages = 8;
  for (const CompiledArtifact& skinny :
       {matmul_kernels::matmul<16, 64, 128>().compile(Target::sm_90, out16.partition<16, 64>(), a16, w.transposed()),
        matmul_kernels::matmul<16, 128, 64>().compile(Target::sm_90, out16.partition<16, 128>(), a16, w.transposed()),
        matmul_kernels::matmul<16, 64, 128>().compile(deep, out16.partition<16, 64>(), a16, w.transposed()),
        matmul_kernels::matmul<16, 16, 128>().compile(deep, out16.partition<16, 16>(), a16, w.transposed())}) {
    CHECK(skinny.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos);
    CHECK(skinny.ptx.find("wgmma") == std::string::npos);
    if (ptxas.empty()) continue;
    const std::string log = whole_program_log(ptxas, skinny.ptx);
    INFO(log);
    CHECK(log.find(" 0 bytes spill stores") != std::string::npos);
  }
  // Tiles the lowering does not take (BK 32), and other targets.
  CHECK(matmul_kernels::matmul<64, 64, 32>().compile(Target::sm_90, out.partition<64, 64>(), a, b).ptx.find("wgmma") ==
        std::string::npos);
  CHECK(matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_100a, out.partition<128, 256>(), a, b).ptx.find(
            "wgmma") == std::string::npos);
}

// LaunchOptions::hints fix what the compiler otherwise chooses: the stages of the load pipeline
// (sm_90: as many as fit, 4 for 128 x 256 x 64; mma.sync: 3) and the rows of programs a persistent
// CTA walks together. Each set of hints is a compile of its own; hints out of range are refused,
// naming the kernel, on every target.
TEST_CASE("compiler hints fix a GEMM's pipeline stages and grouped order; bad hints are refused",
          "[mma][matmul][compile]") {
  Tensor<bfloat16, 2> a({512, 256}), b({256, 1024}), out({512, 1024});
  auto mm = matmul_kernels::matmul<128, 256, 64>();
  auto with = [](Target t, CompilerHints h) {
    LaunchOptions o;
    o.target = t;
    o.hints = h;
    return o;
  };
  CHECK_THROWS_WITH(mm.launch(with(Target::cpu, {.pipeline_stages = 1}), out.partition<128, 256>(), a, b),
                    Catch::Matchers::Contains("kernel 'matmul_128x256x64'") &&
                        Catch::Matchers::Contains("hints.pipeline_stages is 1: expected 0 (the compiler's choice) or 2 to 8"));
  CHECK_THROWS_WITH(mm.launch(with(Target::cpu, {.group_rows = 65}), out.partition<128, 256>(), a, b),
                    Catch::Matchers::Contains("hints.group_rows is 65: expected 0 (the compiler's choice) or 1 to 64"));
  if (!exec_test::toolchain_present()) return;
  const std::string plain = mm.compile(Target::sm_90, out.partition<128, 256>(), a, b).ptx;
  const std::string two = mm.compile(with(Target::sm_90, {.pipeline_stages = 2}), out.partition<128, 256>(), a, b).ptx;
  const std::string grouped = mm.compile(with(Target::sm_90, {.group_rows = 16}), out.partition<128, 256>(), a, b).ptx;
  CHECK(occurrences(two, "mbarrier.init") < occurrences(plain, "mbarrier.init"));
  CHECK(occurrences(two, "wgmma.mma_async") > 0);
  CHECK(grouped != plain);
  CHECK(occurrences(grouped, "mbarrier.init") == occurrences(plain, "mbarrier.init"));
  const std::string warp = mm.compile(Target::sm_80, out.partition<128, 256>(), a, b).ptx;
  const std::string warp2 = mm.compile(with(Target::sm_80, {.pipeline_stages = 2}), out.partition<128, 256>(), a, b).ptx;
  CHECK(occurrences(warp, "mma.sync") > 0);
  CHECK(warp2 != warp);
}

TEST_CASE("the matmul example's and benchmark's kernels compile for every GPU target", "[mma][matmul][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> a({256, 256}), b({256, 256}), out({256, 256});
  Tensor<bfloat16, 1> bias({256});
  for (Target t : gpu_targets()) {
    INFO(to_string(t));
    CHECK(!examples::matmul_bias_relu().compile(t, out.partition<128, 128>(), a, b, bias).cubin.empty());
    CHECK(!matmul_kernels::matmul<64, 64, 32>().compile(t, out.partition<64, 64>(), a, b).cubin.empty());
  }
}

// The code the GPU runs: the driver compiles the tensor-core kernels' PTX as a whole program
// (KernelCode::loads_ptx). Its log must not report spills, serialized wgmma or an ignored
// setmaxnreg (issue #22, item 6).
TEST_CASE("the driver's compile of the tensor-core kernels: no spills, no serialized wgmma, setmaxnreg taken",
          "[mma][matmul][gpu]") {
  detail::CudaDriver* driver = detail::CudaDriver::get_if_available();
  if (!driver || driver->compute_capability() != 90) {
    WARN("skipped: needs an sm_90 GPU");
    return;
  }
  test_env::EnvGuard env;  // the NVVM backend's PTX, whatever the default back end
  env.set("TESSERA_BACKEND", "nvvm");
  Tensor<bfloat16, 2> a({512, 256}), b({256, 1024}), out({512, 1024}), w({1024, 256});
  Tensor<bfloat16, 1> bias({1024});
  Tensor<float, 2> wide({512, 1024}), af({512, 256}), bf({256, 1024}), wf({1024, 256});
  Tensor<float8_e4m3, 2> a8({512, 256}), w8({1024, 256});
  const std::vector<std::pair<std::string, std::string>> kernels = {
      {"128x256x64", matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, b).ptx},
      {"K-major B 128x256x64",
       matmul_kernels::matmul<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, w.transposed()).ptx},
      {"64x128x128", matmul_kernels::matmul<64, 128, 128>().compile(Target::sm_90, out.partition<64, 128>(), a, b).ptx},
      {"bias + GELU 128x256x64",
       matmul_kernels::matmul_bias_gelu<128, 256, 64>().compile(Target::sm_90, out.partition<128, 256>(), a, b, bias).ptx},
      {"f32 (tf32), K-major B 128x256x32",
       matmul_kernels::matmul<128, 256, 32>().compile(Target::sm_90, wide.partition<128, 256>(), af, wf.transposed()).ptx},
      {"f32 (tf32), row-major B 256x128x32",
       matmul_kernels::matmul<256, 128, 32>().compile(Target::sm_90, wide.partition<256, 128>(), af, bf).ptx},
      {"f8e4m3, K-major B 128x128x128, scaled",
       matmul_kernels::scaled_matmul<128, 128, 128>()
           .compile(Target::sm_90, out.partition<128, 128>(), a8, w8.transposed(), 0.5f, 0.25f)
           .ptx}};
  for (const auto& [name, kernel_ptx] : kernels) {
    INFO(name);
    // A comment of its own: the driver's compute cache, which the launches above filled, would
    // otherwise serve the compiled code without a log.
    const std::string ptx = kernel_ptx + "\n// tessera test: compile log " + std::to_string(std::random_device{}()) + "\n";
    std::vector<char> log(1 << 16, '\0');
    int keys[] = {detail::kJitInfoLogBuffer, detail::kJitInfoLogBufferSizeBytes, detail::kJitLogVerbose};
    void* values[] = {log.data(), reinterpret_cast<void*>(static_cast<std::uintptr_t>(log.size() - 1)),
                      reinterpret_cast<void*>(std::uintptr_t{1})};
    driver->make_current();
    detail::CUmodule module = nullptr;
    REQUIRE(driver->cuModuleLoadDataEx(&module, ptx.c_str(), 3, keys, values) == detail::kCudaSuccess);
    driver->cuModuleUnload(module);
    const std::string text(log.data());
    INFO(text);
    CHECK(text.find(" 0 bytes spill stores") != std::string::npos);
    CHECK(text.find("serialized") == std::string::npos);
    CHECK(text.find("setmaxnreg") == std::string::npos);
  }
}
