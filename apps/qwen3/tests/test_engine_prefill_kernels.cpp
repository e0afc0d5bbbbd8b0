// test_engine_prefill_kernels.cpp: each prefill kernel (kernels/prefill_*.h) alone, against a
// host reference in double, on the CPU target and (tagged [gpu]) on the GPU, with the tile sizes
// the engine uses (kernels/prefill_tiles.h) and sizes that no tile divides: T = 1, T past one
// tile, widths past a column tile, and positions starting past 0 after earlier cache rows.
//
// Tolerances (u = 2^-24, the f32 unit roundoff), as in test_engine_kernels.cpp:
//  - the gather is exact;
//  - an f32-accumulated dot product of K terms errs by at most about K u sum|terms|; the tests
//    allow 2 K u sum|terms| (bf16 operands: the products are exact in f32, only the sums round);
//  - a bf16 output may round to either neighbour of its exact value: 2^-7 |value| (one bf16 ulp is
//    at most 2^-7 relative), on top of the f32 error of what is rounded;
//  - attention: (score error + (2 n + 16) u) sum_t p_t |v_t| / sum_t p_t for n visible positions,
//    the score error being 2 * 128 u scale sum_i |q_i k_i|, then the bf16 rounding of the output.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "attention_reference.h"
#include "engine_test_support.h"
#include "kernels/prefill_attention.h"
#include "kernels/prefill_embedding.h"
#include "kernels/prefill_matmul.h"
#include "kernels/prefill_qk_norm_rope.h"
#include "kernels/prefill_rmsnorm.h"
#include "kernels/prefill_tiles.h"

using namespace qwen3::kernels;
using qwen3::test::as_double;
using qwen3::attention_reference;
using qwen3::AttentionReference;
using qwen3::test::on;
using qwen3::test::random_bf16;
using qwen3::test::random_f32;
using tessera::bfloat16;
using tessera::Target;
using tessera::Tensor;

namespace {

constexpr double kU = 0x1p-24;
constexpr double kBf16 = 0x1p-7;  // one bf16 ulp, relative, at most

double f(bfloat16 v) { return static_cast<float>(v); }
double f(float v) { return v; }

// Counts the elements outside |got - want| <= bound[i], and reports the first.
int64_t mismatches(const std::vector<double>& got, const std::vector<double>& want, const std::vector<double>& bound) {
  REQUIRE(got.size() == want.size());
  int64_t bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) <= bound[i]) continue;
    if (bad++ == 0) UNSCOPED_INFO("element " << i << ": got " << got[i] << ", want " << want[i] << " +- " << bound[i]);
  }
  return bad;
}

// Rows of the embedding table gathered by token ids, n rows per launch (n <= N; the ids past n are
// padding and must not be read).
void embedding_gather_rows(Target target) {
  constexpr int N = kPrefillGatherTokens;
  const int64_t vocab = 1000, hidden = 1500;  // hidden: one full column tile and a ragged one
  auto table = random_bf16<2>({vocab, hidden}, -1, 1, 1);
  for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{N}}) {
    std::array<int32_t, N> ids{};
    for (int64_t r = 0; r < n; ++r) ids[r] = static_cast<int32_t>((r * 613 + 999) % vocab);
    // Into the engine's bf16 residual stream, and into f32 rows (the values are exact in both).
    auto gather = [&]<class T>(Tensor<T, 2> out) {
      std::apply(
          [&](auto... id) {
            prefill_embedding_gather<kPrefillGatherCols, N>().launch(on(target), out.template partition<1, kPrefillGatherCols>(),
                                                                     table, id...);
          },
          ids);
      int64_t bad = 0;
      for (int64_t r = 0; r < n; ++r)
        for (int64_t j = 0; j < hidden; ++j) bad += f(out(r, j)) != f(table(ids[r], j));
      return bad;
    };
    INFO(n << " rows");
    CHECK(gather(Tensor<bfloat16, 2>({n, hidden})) == 0);
    CHECK(gather(Tensor<float, 2>({n, hidden})) == 0);
  }
}

// The last row of the residual stream widened to f32 (exact), a full and a ragged tile.
void row_f32(Target target) {
  auto x = random_bf16<1>({1500}, -3, 3, 12);
  Tensor<float, 1> out({1500});
  prefill_row_f32<kEmbeddingTile>().launch(on(target), out.partition<kEmbeddingTile>(), x);
  int64_t bad = 0;
  for (int64_t j = 0; j < 1500; ++j) bad += out(j) != f(x(j));
  CHECK(bad == 0);
}

// bf16(rmsnorm(x) * g) of T rows of width 1500 (a full and a ragged column tile), x the engine's
// bf16 residual stream or f32 rows.
void rmsnorm_rows(Target target) {
  const int64_t hidden = 1500;
  const float eps = 1e-6f;
  auto g = random_bf16<1>({hidden}, 0.5f, 1.5f, 2);
  auto check = [&]<class T>(const Tensor<T, 2>& x) {
    const int64_t t = x.shape(0);
    Tensor<bfloat16, 2> out({t, hidden});
    prefill_rmsnorm<kPrefillNormRows, kPrefillNormCols>().launch(
        on(target), out.partition<kPrefillNormRows, kPrefillNormCols>(), x, g, eps);
    std::vector<double> want, bound;
    for (int64_t r = 0; r < t; ++r) {
      double ss = 0;
      for (int64_t j = 0; j < hidden; ++j) ss += f(x(r, j)) * f(x(r, j));
      const double inv = 1 / std::sqrt(ss / hidden + eps);
      for (int64_t j = 0; j < hidden; ++j) {
        want.push_back(f(x(r, j)) * inv * f(g(j)));
        // The f32 sum of squares and rsqrt: (hidden + 8) u relative; then the bf16 rounding.
        bound.push_back((kBf16 + (hidden + 8) * kU) * std::abs(want.back()) + 1e-30);
      }
    }
    INFO(t << " rows");
    CHECK(mismatches(as_double(out), want, bound) == 0);
  };
  check(random_bf16<2>({1, hidden}, -3, 3, 3));
  check(random_bf16<2>({37, hidden}, -3, 3, 3));  // 37: not a multiple of the row tile
  check(random_f32<2>({37, hidden}, -3, 3, 3));
}

// The three GEMMs for T = 1, 37 and 130 rows (past one row tile), K = 300 (past four K steps,
// ragged) and N = 200 (past one column tile), the weight [N, K] given as its transposed view.
void gemm_family(Target target) {
  constexpr int BM = kPrefillGemmRows, BN = kPrefillGemmCols, BK = kPrefillGemmDepth;
  const int64_t k = 300, n = 200;
  auto w = random_bf16<2>({n, k}, -0.1f, 0.1f, 4);
  auto w_up = random_bf16<2>({n, k}, -0.1f, 0.1f, 5);
  for (int64_t t : {int64_t{1}, int64_t{37}, int64_t{130}}) {
    INFO(t << " rows");
    auto a = random_bf16<2>({t, k}, -2, 2, 6);
    // The product and the sum of |terms| of row i, column j, in double.
    auto product = [&](const Tensor<bfloat16, 2>& weight) {
      std::vector<double> value(t * n), magnitude(t * n);
      for (int64_t i = 0; i < t; ++i)
        for (int64_t j = 0; j < n; ++j)
          for (int64_t q = 0; q < k; ++q) {
            const double p = f(a(i, q)) * f(weight(j, q));
            value[i * n + j] += p;
            magnitude[i * n + j] += std::abs(p);
          }
      return std::pair(value, magnitude);
    };
    const auto [y, y_mag] = product(w);

    Tensor<float, 2> out({t, n});
    prefill_matmul<BM, BN, BK>().launch(on(target), out.partition<BM, BN>(), a, w.transposed());
    std::vector<double> bound(t * n);
    for (std::size_t i = 0; i < bound.size(); ++i) bound[i] = 2 * k * kU * y_mag[i] + 1e-30;
    CHECK(mismatches(as_double(out), y, bound) == 0);

    // The gate's form: the same product rounded to bf16.
    Tensor<bfloat16, 2> rounded({t, n});
    prefill_matmul_bf16<BM, BN, BK>().launch(on(target), rounded.partition<BM, BN>(), a, w.transposed());
    std::vector<double> rounded_bound(t * n);
    for (std::size_t i = 0; i < bound.size(); ++i) rounded_bound[i] = bound[i] + kBf16 * std::abs(y[i]);
    CHECK(mismatches(as_double(rounded), y, rounded_bound) == 0);

    auto residual = random_f32<2>({t, n}, -1, 1, 7);
    const std::vector<double> r = as_double(residual);
    prefill_matmul_residual<BM, BN, BK>().launch(on(target), out.partition<BM, BN>(), a, w.transposed(), residual);
    std::vector<double> want(t * n);
    for (std::size_t i = 0; i < want.size(); ++i) {
      want[i] = r[i] + y[i];
      bound[i] = 2 * k * kU * y_mag[i] + 2 * kU * std::abs(want[i]) + 1e-30;
    }
    CHECK(mismatches(as_double(out), want, bound) == 0);

    // The engine's bf16 residual stream: bf16(residual + a @ b).
    auto residual16 = random_bf16<2>({t, n}, -1, 1, 7);
    const std::vector<double> r16 = as_double(residual16);
    Tensor<bfloat16, 2> out16({t, n});
    prefill_matmul_residual<BM, BN, BK>().launch(on(target), out16.partition<BM, BN>(), a, w.transposed(), residual16);
    for (std::size_t i = 0; i < want.size(); ++i) {
      want[i] = r16[i] + y[i];
      bound[i] = 2 * k * kU * y_mag[i] + (kBf16 + 2 * kU) * std::abs(want[i]) + 1e-30;
    }
    CHECK(mismatches(as_double(out16), want, bound) == 0);

    // bf16(silu(gate) * up), gate a bf16 input (the gate GEMM's output).
    auto gate = random_bf16<2>({t, n}, -4, 4, 8);
    const std::vector<double> gd = as_double(gate);
    const auto [up, up_mag] = product(w_up);
    Tensor<bfloat16, 2> m({t, n});
    prefill_matmul_swiglu<BM, BN, BK>().launch(on(target), m.partition<BM, BN>(), a, w_up.transposed(), gate);
    for (std::size_t i = 0; i < want.size(); ++i) {
      const double silu = gd[i] / (1 + std::exp(-gd[i]));
      want[i] = silu * up[i];
      // up's f32 error times |silu|, 16 u for the approximate exp and division (ex2.approx and
      // rcp.approx, a few ulps each, the exp's argument scaled by log2 e) and the products, and the
      // bf16 rounding.
      bound[i] = std::abs(silu) * 2 * k * kU * up_mag[i] + (kBf16 + 16 * kU) * std::abs(want[i]) + 1e-30;
    }
    CHECK(mismatches(as_double(m), want, bound) == 0);
  }
}

// RoPE tables [context, 64] as rope_table.h makes them (f32 values of cos and sin).
std::pair<Tensor<float, 2>, Tensor<float, 2>> rope_tables(int64_t context) {
  Tensor<float, 2> cos_table({context, 64}), sin_table({context, 64});
  for (int64_t p = 0; p < context; ++p)
    for (int64_t i = 0; i < 64; ++i) {
      const double angle = static_cast<double>(p) * std::pow(1e6, -2.0 * static_cast<double>(i) / 128.0);
      cos_table(p, i) = static_cast<float>(std::cos(angle));
      sin_table(p, i) = static_cast<float>(std::sin(angle));
    }
  return {std::move(cos_table), std::move(sin_table)};
}

// The q/k norm and RoPE of T positions starting at `start`, 6 query heads on 2 KV heads, the K and
// V rows appended to a 160-position cache; the other cache rows stay untouched. At both position
// tiles of the engine (BT), whole and ragged.
template <int BT>
void qk_norm_rope_rows_at(Target target) {
  const int64_t n_heads = 6, n_kv = 2, d = 128, context = 160, qw = n_heads * d, kvw = n_kv * d;
  const float eps = 1e-6f;
  auto q_norm = random_bf16<1>({d}, 0.9f, 1.1f, 9);
  auto k_norm = random_bf16<1>({d}, 0.9f, 1.1f, 10);
  auto [cos_table, sin_table] = rope_tables(context);
  for (auto [t, start] : {std::pair<int64_t, int64_t>(1, 0), std::pair<int64_t, int64_t>(70, 0),
                          std::pair<int64_t, int64_t>(1, 131), std::pair<int64_t, int64_t>(70, 77),
                          std::pair<int64_t, int64_t>(2 * BT, 5), std::pair<int64_t, int64_t>(BT, 160 - BT)}) {
    INFO(t << " positions from " << start << ", tiles of " << BT);
    auto qkv = random_bf16<2>({t, qw + 2 * kvw}, -3, 3, 11);  // the QKV GEMM's bf16 output
    Tensor<bfloat16, 3> q_out({n_heads, t, d}), k_cache({n_kv, context, d}), v_cache({n_kv, context, d});
    {
      auto cos_rows = cos_table.slice(0, start, start + t), sin_rows = sin_table.slice(0, start, start + t);
      auto k_rows = k_cache.slice(1, start, start + t), v_rows = v_cache.slice(1, start, start + t);
      prefill_q_norm_rope<BT>().launch(on(target), q_out.template partition<1, BT, 128>(), qkv, q_norm, cos_rows, sin_rows, eps);
      prefill_kv_norm_rope_append<BT>().launch(
          on(target), k_rows.template partition<1, BT, 128>(), v_rows.template partition<1, BT, 128>(), qkv, k_norm, cos_rows, sin_rows,
          static_cast<int32_t>(qw / 64), static_cast<int32_t>((qw + kvw) / d), eps);
    }
    const std::vector<double> in = as_double(qkv);
    const int64_t width = qw + 2 * kvw;
    // The reference of the head at column `at` of row r, position start + r, norm weight w.
    auto head = [&](int64_t r, int64_t at, const Tensor<bfloat16, 1>& w) {
      const double* x = in.data() + r * width + at;
      double ss = 0;
      for (int64_t i = 0; i < d; ++i) ss += x[i] * x[i];
      const double inv = 1 / std::sqrt(ss / d + eps);
      std::vector<double> y(d), out(d);
      for (int64_t i = 0; i < d; ++i) y[i] = x[i] * inv * f(w(i));
      for (int64_t i = 0; i < 64; ++i) {
        const double c = cos_table(start + r, i), s = sin_table(start + r, i);
        out[i] = y[i] * c - y[i + 64] * s;
        out[i + 64] = y[i + 64] * c + y[i] * s;
      }
      return out;
    };
    std::vector<double> got, want;
    for (int64_t r = 0; r < t; ++r) {
      for (int64_t h = 0; h < n_heads; ++h) {
        const std::vector<double> ref = head(r, h * d, q_norm);
        for (int64_t i = 0; i < d; ++i) got.push_back(f(q_out(h, r, i))), want.push_back(ref[i]);
      }
      for (int64_t h = 0; h < n_kv; ++h) {
        const std::vector<double> ref = head(r, qw + h * d, k_norm);
        for (int64_t i = 0; i < d; ++i) got.push_back(f(k_cache(h, start + r, i))), want.push_back(ref[i]);
        for (int64_t i = 0; i < d; ++i)
          got.push_back(f(v_cache(h, start + r, i))), want.push_back(in[r * width + qw + kvw + h * d + i]);
      }
    }
    std::vector<double> bound;
    for (double w : want) bound.push_back(kBf16 * std::abs(w) + 1e-6);
    CHECK(mismatches(got, want, bound) == 0);
    int64_t touched = 0;
    for (int64_t h = 0; h < n_kv; ++h)
      for (int64_t p = 0; p < context; ++p)
        for (int64_t i = 0; i < d && (p < start || p >= start + t); ++i)
          touched += f(k_cache(h, p, i)) != 0 || f(v_cache(h, p, i)) != 0;
    CHECK(touched == 0);
  }
}
void qk_norm_rope_rows(Target target) {
  qk_norm_rope_rows_at<kPrefillRopeRows>(target);
  qk_norm_rope_rows_at<kPrefillRopeRowsShort>(target);
}

// Causal attention of T queries at positions start .. start + T - 1 over a 256-position cache,
// 6 query heads on 2 KV heads (G = 3). The cache rows past start + T hold large values: a key
// there that were not masked would dominate its row.
void causal_attention(Target target) {
  constexpr int BQ = kPrefillQueryTile, BKV = kPrefillKeyTile;
  const int64_t n_heads = 6, n_kv = 2, group = 3, d = 128, context = 256;
  const float scale = 1 / std::sqrt(128.0f);
  for (auto [t, start] :
       {std::pair<int64_t, int64_t>(1, 0), std::pair<int64_t, int64_t>(1, 150), std::pair<int64_t, int64_t>(70, 0),
        std::pair<int64_t, int64_t>(70, 100), std::pair<int64_t, int64_t>(130, 3)}) {
    INFO(t << " queries from position " << start);
    auto q = random_bf16<3>({n_heads, t, d}, -2, 2, 12);
    auto k_cache = random_bf16<3>({n_kv, context, d}, -2, 2, 13);
    auto v_cache = random_bf16<3>({n_kv, context, d}, -1, 1, 14);
    for (int64_t h = 0; h < n_kv; ++h)
      for (int64_t p = start + t; p < context; ++p)
        for (int64_t i = 0; i < d; ++i) k_cache(h, p, i) = bfloat16(40.0f), v_cache(h, p, i) = bfloat16(1000.0f);
    Tensor<bfloat16, 2> out({t, n_heads * d});
    prefill_attention<BQ, BKV>().launch(on(target), out.partition<BQ, 128>(), q, k_cache, v_cache,
                                        static_cast<int32_t>(start), static_cast<int32_t>(group), scale);
    std::vector<double> want, bound;
    for (int64_t r = 0; r < t; ++r)
      for (int64_t head = 0; head < n_heads; ++head) {
        const int64_t kvh = head / group, n = start + r + 1;  // positions 0 .. start + r
        AttentionReference ref = attention_reference([&](int64_t i) { return f(q(head, r, i)); },
                                                     [&](int64_t p, int64_t i) { return f(k_cache(kvh, p, i)); },
                                                     [&](int64_t p, int64_t i) { return f(v_cache(kvh, p, i)); }, n,
                                                     d, scale);
        for (int64_t i = 0; i < d; ++i) {
          want.push_back(ref.out[i]);
          bound.push_back((ref.score_error + kBf16 + (2.0 * n + 16) * kU) * ref.magnitude[i] +
                          kBf16 * std::abs(ref.out[i]) + 1e-30);
        }
      }
    CHECK(mismatches(as_double(out), want, bound) == 0);
  }
}

}  // namespace

QWEN3_TARGET_TEST_CASE("prefill kernel: embedding gather", "[engine][prefill][kernels]", embedding_gather_rows)
QWEN3_TARGET_TEST_CASE("prefill kernel: rmsnorm rows to bf16", "[engine][prefill][kernels]", rmsnorm_rows)
QWEN3_TARGET_TEST_CASE("prefill kernel: last row to f32", "[engine][prefill][kernels]", row_f32)
QWEN3_TARGET_TEST_CASE("prefill kernel: GEMM, residual, swiglu epilogues", "[engine][prefill][kernels]", gemm_family)
QWEN3_TARGET_TEST_CASE("prefill kernel: q/k norm + rope + kv append", "[engine][prefill][kernels]", qk_norm_rope_rows)
QWEN3_TARGET_TEST_CASE("prefill kernel: causal attention", "[engine][prefill][kernels]", causal_attention)

// Every prefill kernel compiles to a cubin for sm_90 (no GPU needed), with the engine's tile
// sizes.
TEST_CASE("prefill kernels compile for sm_90", "[engine][prefill][kernels][compile]") {
  constexpr int BM = kPrefillGemmRows, BN = kPrefillGemmCols, BK = kPrefillGemmDepth, BT = kPrefillRopeRows;
  const Target sm90 = Target::sm_90;
  auto ok = [](const tessera::CompiledArtifact& a) { return !a.cubin.empty(); };
  Tensor<bfloat16, 2> table({100, 256}), w({512, 256}), wo({256, 512}), a({200, 256}), m({200, 512});
  Tensor<bfloat16, 1> g({256}), qn({128}), kn({128});
  Tensor<float, 2> x({200, 256}), x2({200, 256}), y({200, 512}), rope({300, 64}), rope2({300, 64});
  Tensor<bfloat16, 2> gate({200, 512}), qkv({200, 4 * 128});
  std::array<int32_t, kPrefillGatherTokens> ids{};
  CHECK(ok(std::apply(
      [&](auto... id) {
        return prefill_embedding_gather<kPrefillGatherCols, kPrefillGatherTokens>().compile(
            sm90, x.partition<1, kPrefillGatherCols>(), table, id...);
      },
      ids)));
  CHECK(ok(prefill_rmsnorm<kPrefillNormRows, kPrefillNormCols>().compile(
      sm90, a.partition<kPrefillNormRows, kPrefillNormCols>(), x, g, 1e-6f)));
  CHECK(ok(prefill_matmul<BM, BN, BK>().compile(sm90, y.partition<BM, BN>(), a, w.transposed())));
  CHECK(ok(prefill_matmul_residual<BM, BN, BK>().compile(sm90, x.partition<BM, BN>(), m, wo.transposed(), x2)));
  CHECK(ok(prefill_matmul_bf16<BM, BN, BK>().compile(sm90, m.partition<BM, BN>(), a, w.transposed())));
  CHECK(ok(prefill_matmul_swiglu<BM, BN, BK>().compile(sm90, m.partition<BM, BN>(), a, w.transposed(), gate)));
  Tensor<bfloat16, 3> q({2, 200, 128}), kc({1, 300, 128}), vc({1, 300, 128});
  auto k_rows = kc.slice(1, 50, 250), v_rows = vc.slice(1, 50, 250);
  CHECK(ok(prefill_q_norm_rope<BT>().compile(sm90, q.partition<1, BT, 128>(), qkv, qn, rope, rope2, 1e-6f)));
  CHECK(
      ok(prefill_kv_norm_rope_append<BT>().compile(sm90, k_rows.partition<1, BT, 128>(), v_rows.partition<1, BT, 128>(),
                                                   qkv, kn, rope, rope2, int32_t{4}, int32_t{3}, 1e-6f)));
  constexpr int BS = kPrefillRopeRowsShort;
  CHECK(ok(prefill_q_norm_rope<BS>().compile(sm90, q.partition<1, BS, 128>(), qkv, qn, rope, rope2, 1e-6f)));
  CHECK(
      ok(prefill_kv_norm_rope_append<BS>().compile(sm90, k_rows.partition<1, BS, 128>(), v_rows.partition<1, BS, 128>(),
                                                   qkv, kn, rope, rope2, int32_t{4}, int32_t{3}, 1e-6f)));
  Tensor<bfloat16, 2> attn({200, 256});
  CHECK(ok(prefill_attention<kPrefillQueryTile, kPrefillKeyTile>().compile(
      sm90, attn.partition<kPrefillQueryTile, 128>(), q, kc, vc, int32_t{50}, int32_t{2}, 0.1f)));
}

// The residual GEMMs at each split the engine's rule chooses (prefill_residual_split: by a chunk's
// output tiles) compile for sm_90 as clusters of that many CTAs, whole and ragged, through
// Kernel::prepare, the compile that Model::warm_up describes for them (no GPU needed to compile).
TEST_CASE("prefill residual GEMMs compile at every split the engine chooses", "[engine][prefill][kernels][compile]") {
  constexpr int BM = kPrefillGemmRows, BN = kPrefillGemmCols, BK = kPrefillGemmDepth;
  // 4B (hidden 2560: 20 column tiles; o_proj over 4096 inputs, down over 9728) at 32, 256, 512,
  // 1024 and 2048 tokens on 132 SMs: at 1024 (160 tiles) down splits its last round and o_proj
  // runs it in halves.
  for (const long long depth : {4096, 9728}) {
    INFO("depth " << depth);
    CHECK(prefill_residual_split(32, 2560, depth, 132) == 4);
    CHECK(prefill_residual_split(256, 2560, depth, 132) == 2);
    CHECK(prefill_residual_split(512, 2560, depth, 132) == 0);
    CHECK(prefill_residual_split(2048, 2560, depth, 132) == 0);
  }
  CHECK(prefill_residual_split(1024, 2560, 4096, 132) == 0);
  CHECK(prefill_residual_split(1024, 2560, 9728, 132) == 2);
  // The bands follow the SMs: on 114 (an H100 PCIe) 1024 tokens leave 46 of 160 tiles for the last
  // round; on 78 the 40 tiles of 256 tokens are more than half the SMs, and 20 (128 tokens) more
  // than a quarter; without a GPU, no split.
  CHECK(prefill_residual_split(1024, 2560, 9728, 114) == 2);
  CHECK(prefill_residual_split(1024, 2560, 4096, 114) == 0);
  CHECK(prefill_residual_split(256, 2560, 9728, 78) == 0);
  CHECK(prefill_residual_split(128, 2560, 9728, 78) == 2);
  CHECK(prefill_residual_split(256, 2560, 9728, 0) == 0);
  Tensor<bfloat16, 2> wo({256, 512}), x({1024, 256}), x2({1024, 256}), attn({1024, 512});
  for (const int64_t t : {int64_t{1024}, int64_t{1}})
    for (const int split : kPrefillResidualSplits) {
      INFO(t << " rows, split " << split);
      tessera::LaunchOptions o;
      o.target = Target::sm_90;
      o.hints.split_k = split;
      auto out = x.slice(0, 0, t), in = x2.slice(0, 0, t), a = attn.slice(0, 0, t);
      const auto c = prefill_matmul_residual<BM, BN, BK>().compile(o, out.partition<BM, BN>(), a, wo.transposed(), in);
      CHECK(c.ptx.find("wgmma.mma_async") != std::string::npos);
      CHECK((c.ptx.find(".reqnctapercluster " + std::to_string(split)) != std::string::npos) == (split > 1));
      CHECK_NOTHROW(prefill_matmul_residual<BM, BN, BK>().prepare(o, out.partition<BM, BN>(), a, wo.transposed(), in));
    }
}

// The GEMMs are in the class of the sm_90 tensor-core lowering (wgmma in their PTX): their loops,
// epilogues and tiles are, with a row-major B and with the transposed weight view (a K-major B)
// that the engine passes.
TEST_CASE("prefill GEMMs take the sm_90 tensor-core lowering", "[engine][prefill][kernels][compile]") {
  constexpr int BM = kPrefillGemmRows, BN = kPrefillGemmCols, BK = kPrefillGemmDepth;
  const Target sm90 = Target::sm_90;
  auto wgmma = [](const tessera::CompiledArtifact& a) { return a.ptx.find("wgmma.mma_async") != std::string::npos; };
  Tensor<bfloat16, 2> a({300, 256}), b({256, 512}), w({512, 256}), m({300, 512});
  Tensor<float, 2> y({300, 512}), residual({300, 512});
  Tensor<bfloat16, 2> gate({300, 512});
  CHECK(wgmma(prefill_matmul<BM, BN, BK>().compile(sm90, y.partition<BM, BN>(), a, b)));
  CHECK(wgmma(prefill_matmul_residual<BM, BN, BK>().compile(sm90, y.partition<BM, BN>(), a, b, residual)));
  CHECK(wgmma(prefill_matmul_swiglu<BM, BN, BK>().compile(sm90, m.partition<BM, BN>(), a, b, gate)));
  CHECK(wgmma(prefill_matmul<BM, BN, BK>().compile(sm90, y.partition<BM, BN>(), a, w.transposed())));
  CHECK(wgmma(prefill_matmul_bf16<BM, BN, BK>().compile(sm90, m.partition<BM, BN>(), a, w.transposed())));
  CHECK(wgmma(prefill_matmul_residual<BM, BN, BK>().compile(sm90, y.partition<BM, BN>(), a, w.transposed(), residual)));
  CHECK(wgmma(prefill_matmul_swiglu<BM, BN, BK>().compile(sm90, m.partition<BM, BN>(), a, w.transposed(), gate)));
}
