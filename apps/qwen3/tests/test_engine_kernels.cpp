// test_engine_kernels.cpp: each tile kernel of the engine alone, against a host reference in
// double, on the CPU target and (tagged [gpu]) on the GPU.
//
// Tolerances, per kernel family (u = 2^-24, the f32 unit roundoff):
//  - gathers and copies are exact;
//  - an f32-accumulated dot product of K terms (bf16 weights and f32 vectors, whose products are
//    exact in double but not in f32) errs by at most about K u times the sum of |terms| in any
//    summation order; the tests allow 2 K u (and 4 K u where an RMSNorm's sum of K squares and
//    its rsqrt come first, which add (K + a few) u relative to every normalized element);
//  - bf16 outputs computed in f32 may round to the other neighbour of a value near the midpoint
//    of two bf16 numbers: 2^-7 of the value (one ulp at most is 2^-7 relative);
//  - attention: a score s = scale q.k of 128 exact bf16 products errs by at most 2 * 128 u
//    scale sum_i |q_i k_i| (f32 accumulation), which moves its exponential by that much relative;
//    the sums over positions add 2 n u (n positions) and the exps, divisions and rescalings a few
//    u, and p V takes the probabilities rounded to bf16 (2^-8 relative each), so an output element
//    errs by at most (max score error + 2^-8 + 2 n u + 16 u) sum_t p_t |v_t| / sum_t p_t.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numeric>
#include <vector>

#include "attention_reference.h"
#include "engine_test_support.h"
#include "kernels/attention.h"
#include "kernels/attention_fused.h"
#include "kernels/attention_short.h"
#include "kernels/decode_step.h"
#include "kernels/embedding.h"
#include "kernels/matvec.h"
#include "kernels/qk_norm_rope.h"
#include "kernels/sampling.h"
#include "kernels/weight_copy.h"
#include "reference.h"

using namespace qwen3::kernels;
using qwen3::attention_reference;
using qwen3::AttentionReference;
using qwen3::test::as_double;
using qwen3::test::on;
using qwen3::test::random_bf16;
using qwen3::test::random_f32;
using tessera::bfloat16;
using tessera::Target;
using tessera::Tensor;

namespace {

constexpr double kU = 0x1p-24;

double f(bfloat16 v) { return static_cast<float>(v); }
double round_bf16(double v) { return static_cast<float>(bfloat16(static_cast<float>(v))); }

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

void embedding_gather_exact(Target target) {
  const int64_t vocab = 1000, hidden = 1500;  // hidden: one full tile and a ragged one
  auto table = random_bf16<2>({vocab, hidden}, -1, 1, 1);
  Tensor<float, 1> out({hidden});
  for (int32_t token : {0, 517, 999}) {
    embedding_gather<kEmbeddingTile>().launch(on(target), out.partition<kEmbeddingTile>(), table, token);
    int64_t bad = 0;
    for (int64_t j = 0; j < hidden; ++j) bad += out(j) != static_cast<float>(table(token, j));
    CHECK(bad == 0);
  }
}

// y = W v with K = 300 (not a multiple of the column tile) and N = 37 (nor of the row tile).
struct Product {
  std::vector<double> value, magnitude;
};
Product product(const Tensor<bfloat16, 2>& w, const std::vector<double>& v) {
  const int64_t n = w.shape(0), k = w.shape(1);
  Product p{std::vector<double>(n), std::vector<double>(n)};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      p.value[i] += f(w(i, j)) * v[j];
      p.magnitude[i] += std::abs(f(w(i, j)) * v[j]);
    }
  return p;
}
std::vector<double> rmsnorm_ref(const std::vector<double>& x, const Tensor<bfloat16, 1>& g, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double inv = 1 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  std::vector<double> n(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) n[j] = x[j] * inv * f(g(static_cast<int64_t>(j)));
  return n;
}

void matvec_family(Target target) {
  const int64_t n = 37, k = 300;
  const float eps = 1e-6f;
  auto w = random_bf16<2>({n, k}, -0.1f, 0.1f, 2);
  auto w2 = random_bf16<2>({n, k}, -0.1f, 0.1f, 3);
  auto g = random_bf16<1>({k}, 0.9f, 1.1f, 4);
  auto x = random_f32<1>({k}, -2, 2, 5);
  const std::vector<double> xd = as_double(x);
  auto bound = [&](const Product& p, double factor) {
    std::vector<double> b;
    for (double m : p.magnitude) b.push_back(factor * static_cast<double>(k) * kU * m + 1e-30);
    return b;
  };

  Tensor<float, 1> y({n});
  matvec<kMatvecRows, kMatvecCols>().launch(on(target), y.partition<kMatvecRows>(), w, x);
  Product plain = product(w, xd);
  CHECK(mismatches(as_double(y), plain.value, bound(plain, 2)) == 0);

  // x_out = x_in + W v: the output is read back as the residual.
  auto residual = random_f32<1>({n}, -1, 1, 6);
  const std::vector<double> before = as_double(residual);
  matvec_residual<kMatvecRows, kMatvecCols>().launch(on(target), residual.partition<kMatvecRows>(), w, x);
  std::vector<double> want(n), b = bound(plain, 2);
  for (int64_t i = 0; i < n; ++i) want[i] = before[i] + plain.value[i], b[i] += 2 * kU * std::abs(want[i]);
  CHECK(mismatches(as_double(residual), want, b) == 0);

  // W rmsnorm(x) with the norm fused into the product, at the compiler's threads and the engine's.
  const std::vector<double> normed = rmsnorm_ref(xd, g, eps);
  rmsnorm_matvec<kMatvecRows, kMatvecCols>().launch(on(target), y.partition<kMatvecRows>(), w, x, g, eps);
  Product np = product(w, normed);
  CHECK(mismatches(as_double(y), np.value, bound(np, 4)) == 0);
  Tensor<float, 1> y_threads({n});
  rmsnorm_matvec<kMatvecRows, kMatvecCols>().launch(on(target, kNormMatvecThreads), y_threads.partition<kMatvecRows>(),
                                                    w, x, g, eps);
  CHECK(mismatches(as_double(y_threads), np.value, bound(np, 4)) == 0);

  // silu(Wg n) * (Wu n), at each of the engine's tiles for it (model.cpp).
  Product up = product(w2, normed);
  std::vector<double> swiglu(n), sb(n);
  for (int64_t i = 0; i < n; ++i) {
    const double gate = np.value[i], s = 1 / (1 + std::exp(-gate));
    const double dgate = 4 * k * kU * np.magnitude[i], dup = 4 * k * kU * up.magnitude[i];
    swiglu[i] = gate * s * up.value[i];
    // silu' is within [-0.1, 1.1]; the exp and the division add a few u relative.
    sb[i] = 1.1 * dgate * std::abs(up.value[i]) + std::abs(gate * s) * dup + 8 * kU * std::abs(swiglu[i]) + 1e-30;
  }
  rmsnorm_swiglu<kMatvecRows, kMatvecCols>().launch(on(target), y.partition<kMatvecRows>(), w, w2, x, g, eps);
  CHECK(mismatches(as_double(y), swiglu, sb) == 0);
  Tensor<float, 1> y_small({n});
  rmsnorm_swiglu<kSmallSwigluTileRows, kSmallSwigluTileCols>().launch(
      on(target), y_small.partition<kSmallSwigluTileRows>(), w, w2, x, g, eps);
  CHECK(mismatches(as_double(y_small), swiglu, sb) == 0);
  Tensor<float, 1> y_large({n});
  rmsnorm_swiglu<kSwigluTileRows, kSwigluTileCols>().launch(on(target, kSwigluThreads),
                                                            y_large.partition<kSwigluTileRows>(), w, w2, x, g, eps);
  CHECK(mismatches(as_double(y_large), swiglu, sb) == 0);
}

// The per-head q/k norm and RoPE, with the KV append, for G = 3 query heads per KV head (GP = 4)
// and 2 KV heads, at position 5 of a 16-position cache.
template <int GP>
void qk_norm_rope_case(Target target, int64_t group) {
  const int64_t n_kv = 2, d = 128, context = 16, qw = n_kv * group * d, kvw = n_kv * d;
  const int32_t position = 5;
  const float eps = 1e-6f;
  auto qkv = random_f32<1>({qw + 2 * kvw}, -3, 3, 7);
  auto q_norm = random_bf16<1>({d}, 0.9f, 1.1f, 8);
  auto k_norm = random_bf16<1>({d}, 0.9f, 1.1f, 9);
  Tensor<float, 2> cos_table({context, 64}), sin_table({context, 64});
  for (int64_t p = 0; p < context; ++p)
    for (int64_t i = 0; i < 64; ++i) {
      const double angle = static_cast<double>(p) * std::pow(1e6, -2.0 * static_cast<double>(i) / 128.0);
      cos_table(p, i) = static_cast<float>(std::cos(angle));
      sin_table(p, i) = static_cast<float>(std::sin(angle));
    }
  Tensor<bfloat16, 3> q_out({n_kv, group, d}), k_cache({n_kv, context, d}), v_cache({n_kv, context, d});
  {
    auto q_in = qkv.slice(0, 0, qw).reshape<4>({n_kv, group, 2, 64});
    auto k_in = qkv.slice(0, qw, qw + kvw).reshape<3>({n_kv, 2, 64});
    auto v_in = qkv.slice(0, qw + kvw, qw + 2 * kvw).reshape<2>({n_kv, d});
    auto k_slot = k_cache.slice(1, position, position + 1);
    auto v_slot = v_cache.slice(1, position, position + 1);
    qk_norm_rope_append<GP>().launch(on(target), q_out.partition<1, GP, 128>(), k_slot.partition<1, 1, 128>(),
                                     v_slot.partition<1, 1, 128>(), q_in, k_in, v_in, q_norm, k_norm,
                                     cos_table.slice(0, position, position + 1),
                                     sin_table.slice(0, position, position + 1), eps);
  }
  const std::vector<double> in = as_double(qkv);
  // The reference of one head starting at element `at` of qkv with norm weight w.
  auto head = [&](int64_t at, const Tensor<bfloat16, 1>& w) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += in[at + i] * in[at + i];
    const double inv = 1 / std::sqrt(ss / d + eps);
    std::vector<double> y(d), out(d);
    for (int64_t i = 0; i < d; ++i) y[i] = in[at + i] * inv * f(w(i));
    for (int64_t i = 0; i < 64; ++i) {
      const double c = cos_table(position, i), s = sin_table(position, i);
      out[i] = y[i] * c - y[i + 64] * s;
      out[i + 64] = y[i + 64] * c + y[i] * s;
    }
    return out;
  };
  std::vector<double> got, want;
  for (int64_t h = 0; h < n_kv; ++h) {
    for (int64_t g = 0; g < group; ++g) {
      std::vector<double> r = head((h * group + g) * d, q_norm);
      for (int64_t i = 0; i < d; ++i) got.push_back(f(q_out(h, g, i))), want.push_back(r[i]);
    }
    std::vector<double> r = head(qw + h * d, k_norm);
    for (int64_t i = 0; i < d; ++i) got.push_back(f(k_cache(h, position, i))), want.push_back(r[i]);
    for (int64_t i = 0; i < d; ++i)
      got.push_back(f(v_cache(h, position, i))), want.push_back(round_bf16(in[qw + kvw + h * d + i]));
  }
  std::vector<double> bound;
  for (double w : want) bound.push_back(0x1p-7 * std::abs(w) + 1e-6);
  CHECK(mismatches(got, want, bound) == 0);
  // The other cache rows are untouched.
  int64_t touched = 0;
  for (int64_t h = 0; h < n_kv; ++h)
    for (int64_t p = 0; p < context; ++p)
      for (int64_t i = 0; i < d && p != position; ++i) touched += f(k_cache(h, p, i)) != 0 || f(v_cache(h, p, i)) != 0;
  CHECK(touched == 0);
}

void qk_norm_rope_append_group3(Target target) { qk_norm_rope_case<4>(target, 3); }
void qk_norm_rope_append_group1(Target target) { qk_norm_rope_case<1>(target, 1); }

// Copies of the caches [n_kv, positions, 128] holding large stale values from position `from`
// on (what an earlier sequence left there), which no attention may let reach its result.
std::pair<Tensor<bfloat16, 3>, Tensor<bfloat16, 3>> stale_from(const Tensor<bfloat16, 3>& k_cache,
                                                               const Tensor<bfloat16, 3>& v_cache, int64_t from) {
  const bfloat16 stale(1e30f);
  Tensor<bfloat16, 3> kc(k_cache.shape()), vc(v_cache.shape());
  for (int64_t h = 0; h < k_cache.shape(0); ++h)
    for (int64_t t = 0; t < k_cache.shape(1); ++t)
      for (int64_t i = 0; i < k_cache.shape(2); ++i) {
        kc(h, t, i) = t < from ? k_cache(h, t, i) : stale;
        vc(h, t, i) = t < from ? v_cache(h, t, i) : stale;
      }
  return {std::move(kc), std::move(vc)};
}

// Split-KV attention and its combine against a softmax in double, for G = 3 (GP = 4) query heads
// per KV head, 2 KV heads, a 300-position cache and lengths that are and are not multiples of
// the chunk, with one and with three chunks per split, and with two splits past the end (empty:
// they must weigh nothing). The newest position's K and V come from k_new, v_new; the cache from
// that position on holds large finite values (what an earlier sequence left there), which must
// not reach the result. With Prefetch, the split loads each chunk during the one before
// (decode_attention_split<GP, CH, true>), with the same bound.
template <bool Prefetch>
void split_kv_attention_with(Target target) {
  constexpr int GP = 4, CH = kAttentionChunk;
  const int64_t n_kv = 2, group = 3, d = 128, context = 300;
  const float scale = 1 / std::sqrt(128.0f);
  auto q = random_bf16<3>({n_kv, group, d}, -2, 2, 10);
  auto k_cache = random_bf16<3>({n_kv, context, d}, -2, 2, 11);
  auto v_cache = random_bf16<3>({n_kv, context, d}, -1, 1, 12);
  auto k_new = random_bf16<2>({n_kv, d}, -2, 2, 15);
  auto v_new = random_bf16<2>({n_kv, d}, -1, 1, 16);
  for (int32_t seq_len : {1, 63, 64, 65, 200, 300}) {
    auto [kc, vc] = stale_from(k_cache, v_cache, seq_len - 1);
    Tensor<int32_t, 2> seq({1, 1});
    seq(0, 0) = seq_len;
    auto key = [&](int64_t h, int64_t t, int64_t i) { return f(t == seq_len - 1 ? k_new(h, i) : k_cache(h, t, i)); };
    auto value = [&](int64_t h, int64_t t, int64_t i) { return f(t == seq_len - 1 ? v_new(h, i) : v_cache(h, t, i)); };
    for (auto [chunks_per_split, extra_splits] : {std::pair(1, 0), std::pair(3, 0), std::pair(1, 2)}) {
      const int64_t chunks = (seq_len + CH - 1) / CH;
      const int64_t splits = (chunks + chunks_per_split - 1) / chunks_per_split + extra_splits;
      Tensor<float, 3> part_o({n_kv, splits, group * d}), part_m({n_kv, splits, group}), part_l({n_kv, splits, group});
      Tensor<float, 2> out({n_kv, group * d});
      decode_attention_split<GP, CH, Prefetch>().launch(on(target), part_o.partition<1, 1, GP * 128>(),
                                                        part_m.partition<1, 1, GP>(), part_l.partition<1, 1, GP>(), q,
                                                        kc, vc, k_new, v_new, seq, chunks_per_split, scale);
      decode_attention_combine<GP>().launch(on(target), out.partition<1, GP * 128>(), part_o, part_m, part_l);
      std::vector<double> got = as_double(out), want, bound;
      for (int64_t h = 0; h < n_kv; ++h)
        for (int64_t g = 0; g < group; ++g) {
          AttentionReference r = attention_reference(
              [&](int64_t i) { return f(q(h, g, i)); }, [&](int64_t t, int64_t i) { return key(h, t, i); },
              [&](int64_t t, int64_t i) { return value(h, t, i); }, seq_len, d, scale);
          for (int64_t i = 0; i < d; ++i) {
            want.push_back(r.out[i]);
            bound.push_back((r.score_error + 0x1p-8 + (2.0 * seq_len + 16) * kU) * r.magnitude[i] + 1e-30);
          }
        }
      INFO("seq_len " << seq_len << ", chunks per split " << chunks_per_split << ", empty splits " << extra_splits
                      << ", prefetch " << Prefetch);
      CHECK(mismatches(got, want, bound) == 0);
    }
  }
}

void split_kv_attention(Target target) {
  split_kv_attention_with<false>(target);
  split_kv_attention_with<true>(target);
}

// What the three kernels (q/k norm + RoPE, the split with one split, the combine) compute for the
// one-kernel attention forms' tests below: the attention output [n_kv, G * 128] and the staging
// rows [n_kv, 1, 128]. The tests above hold the three to the references.
struct ThreeKernelAttention {
  Tensor<float, 2> out;
  Tensor<bfloat16, 3> k_row, v_row;
  Tensor<bfloat16, 3> q;  // the normed and rotated query heads [n_kv, G, 128]
};

// Random inputs of the one-kernel attention forms' tests: G = 3 (GP = 4), 2 KV heads, a 256-position
// cache, the QKV projection's views as the engine makes them.
struct OneKernelAttentionInputs {
  static constexpr int GP = 4;
  static constexpr int64_t n_kv = 2, group = 3, d = 128, context = 256, qw = n_kv * group * d, kvw = n_kv * d;
  static constexpr float eps = 1e-6f;
  const float scale = 1 / std::sqrt(128.0f);
  Tensor<float, 1> qkv = random_f32<1>({qw + 2 * kvw}, -3, 3, 21);
  Tensor<bfloat16, 1> q_norm = random_bf16<1>({d}, 0.9f, 1.1f, 22);
  Tensor<bfloat16, 1> k_norm = random_bf16<1>({d}, 0.9f, 1.1f, 23);
  Tensor<float, 2> cos_row = random_f32<2>({1, 64}, -1, 1, 24), sin_row = random_f32<2>({1, 64}, -1, 1, 25);
  Tensor<bfloat16, 3> k_cache = random_bf16<3>({n_kv, context, d}, -2, 2, 26);
  Tensor<bfloat16, 3> v_cache = random_bf16<3>({n_kv, context, d}, -1, 1, 27);
  Tensor<float, 4> q_in = qkv.slice(0, 0, qw).reshape<4>({n_kv, group, 2, 64});
  Tensor<float, 3> k_in = qkv.slice(0, qw, qw + kvw).reshape<3>({n_kv, 2, 64});
  Tensor<float, 2> v_in = qkv.slice(0, qw + kvw, qw + 2 * kvw).reshape<2>({n_kv, d});

  ThreeKernelAttention three_kernels(Target target, const Tensor<bfloat16, 3>& kc, const Tensor<bfloat16, 3>& vc,
                                     const Tensor<int32_t, 2>& seq) const {
    constexpr int CH = kAttentionChunk;
    const int32_t chunks = (seq(0, 0) + CH - 1) / CH;
    ThreeKernelAttention r{Tensor<float, 2>({n_kv, group * d}), Tensor<bfloat16, 3>({n_kv, 1, d}),
                           Tensor<bfloat16, 3>({n_kv, 1, d}), Tensor<bfloat16, 3>({n_kv, group, d})};
    Tensor<bfloat16, 3>& q = r.q;
    Tensor<float, 3> part_o({n_kv, 1, group * d}), part_m({n_kv, 1, group}), part_l({n_kv, 1, group});
    qk_norm_rope_append<GP>().launch(on(target), q.partition<1, GP, 128>(), r.k_row.partition<1, 1, 128>(),
                                     r.v_row.partition<1, 1, 128>(), q_in, k_in, v_in, q_norm, k_norm, cos_row,
                                     sin_row, eps);
    {
      auto k_row = r.k_row.slice(0, 0, n_kv).reshape<2>({n_kv, d});
      auto v_row = r.v_row.slice(0, 0, n_kv).reshape<2>({n_kv, d});
      decode_attention_split<GP, CH>().launch(on(target), part_o.partition<1, 1, GP * 128>(),
                                              part_m.partition<1, 1, GP>(), part_l.partition<1, 1, GP>(), q, kc, vc,
                                              k_row, v_row, seq, chunks, scale);
    }
    decode_attention_combine<GP>().launch(on(target), r.out.partition<1, GP * 128>(), part_o, part_m, part_l);
    return r;
  }
};

// A one-kernel form's staging rows against the three kernels': the same, bit for bit.
void check_rows_equal(const ThreeKernelAttention& want, const Tensor<bfloat16, 3>& k_row,
                      const Tensor<bfloat16, 3>& v_row) {
  int64_t rows_differ = 0;
  for (int64_t h = 0; h < k_row.shape(0); ++h)
    for (int64_t i = 0; i < k_row.shape(2); ++i)
      rows_differ += k_row(h, 0, i).bits != want.k_row(h, 0, i).bits || v_row(h, 0, i).bits != want.v_row(h, 0, i).bits;
  CHECK(rows_differ == 0);
}

// The fused attention against the three kernels it replaces, at lengths that are and are not
// multiples of the chunk, the cache from the new position on holding large stale values.
void fused_attention_equals_three_kernels(Target target) {
  constexpr int CH = kAttentionChunk;
  const OneKernelAttentionInputs in;
  constexpr int GP = OneKernelAttentionInputs::GP;
  const int64_t n_kv = in.n_kv, group = in.group, d = in.d;
  for (int32_t seq_len : {1, 63, 64, 65, 200}) {
    auto [kc, vc] = stale_from(in.k_cache, in.v_cache, seq_len - 1);
    Tensor<int32_t, 2> seq({1, 1});
    seq(0, 0) = seq_len;
    const int32_t chunks = (seq_len + CH - 1) / CH;
    const ThreeKernelAttention want = in.three_kernels(target, kc, vc, seq);
    Tensor<bfloat16, 3> k_fused({n_kv, 1, d}), v_fused({n_kv, 1, d});
    Tensor<float, 2> out({n_kv, group * d});
    decode_attention_fused<GP, CH>().launch(on(target), out.partition<1, GP * 128>(), k_fused.partition<1, 1, 128>(),
                                            v_fused.partition<1, 1, 128>(), in.q_in, in.k_in, in.v_in, in.q_norm,
                                            in.k_norm, in.cos_row, in.sin_row, kc, vc, seq, chunks, in.eps, in.scale);
    INFO("seq_len " << seq_len);
    check_rows_equal(want, k_fused, v_fused);
    // The same operations in the same order: the same output within a few f32 roundings (a
    // compiler may contract them differently).
    const std::vector<double> got = as_double(out), expected = as_double(want.out);
    double largest = 0;
    for (double w : expected) largest = std::max(largest, std::abs(w));
    CHECK(largest > 0);
    const std::vector<double> bound(expected.size(), 64 * kU * largest);
    CHECK(mismatches(got, expected, bound) == 0);
  }
}

// The short attention (one pass over the cache's first CH positions) at CH = 128 and 256, at
// lengths up to CH, the cache from the new position on holding large stale values, and over a
// cache shorter than CH (100 positions: the tile's rows past it read as zero). Its staging rows
// equal the three kernels', bit for bit; its output is held to a softmax in double over the three
// kernels' q and the same keys and values, as the split's is: its probabilities are rounded to
// bf16 against the softmax's one max, the split's against each chunk's running max, so the two
// differ by those roundings.
template <int CH>
void short_attention_equals_three_kernels_at(Target target) {
  const OneKernelAttentionInputs in;
  constexpr int GP = OneKernelAttentionInputs::GP;
  const int64_t n_kv = in.n_kv, group = in.group, d = in.d;
  for (int64_t cache_positions : {in.context, int64_t{100}})
    for (int32_t seq_len : {1, 2, 63, 64, 65, 100, 127, 128, 200, 256}) {
      if (seq_len > CH || seq_len > cache_positions) continue;
      auto [kc, vc] = stale_from(in.k_cache.slice(1, 0, cache_positions), in.v_cache.slice(1, 0, cache_positions),
                                 seq_len - 1);
      Tensor<int32_t, 2> seq({1, 1});
      seq(0, 0) = seq_len;
      const ThreeKernelAttention want = in.three_kernels(target, kc, vc, seq);
      Tensor<bfloat16, 3> k_short({n_kv, 1, d}), v_short({n_kv, 1, d});
      Tensor<float, 2> out({n_kv, group * d});
      auto k_halves = kc.slice(0, 0, kc.shape(0)).reshape<4>({n_kv, cache_positions, 2, 64});
      auto v_halves = vc.slice(0, 0, vc.shape(0)).reshape<4>({n_kv, cache_positions, 2, 64});
      decode_attention_short<GP, CH>().launch(on(target), out.partition<1, GP * 128>(), k_short.partition<1, 1, 128>(),
                                              v_short.partition<1, 1, 128>(), in.q_in, in.k_in, in.v_in, in.q_norm,
                                              in.k_norm, in.cos_row, in.sin_row, k_halves, v_halves, seq, in.eps,
                                              in.scale);
      INFO("CH " << CH << ", cache positions " << cache_positions << ", seq_len " << seq_len);
      check_rows_equal(want, k_short, v_short);
      auto key = [&](int64_t h, int64_t t, int64_t i) { return f(t == seq_len - 1 ? want.k_row(h, 0, i) : kc(h, t, i)); };
      auto value = [&](int64_t h, int64_t t, int64_t i) {
        return f(t == seq_len - 1 ? want.v_row(h, 0, i) : vc(h, t, i));
      };
      std::vector<double> expected, bound;
      for (int64_t h = 0; h < n_kv; ++h)
        for (int64_t g = 0; g < group; ++g) {
          AttentionReference r = attention_reference(
              [&](int64_t i) { return f(want.q(h, g, i)); }, [&](int64_t t, int64_t i) { return key(h, t, i); },
              [&](int64_t t, int64_t i) { return value(h, t, i); }, seq_len, d, in.scale);
          for (int64_t i = 0; i < d; ++i) {
            expected.push_back(r.out[i]);
            bound.push_back((r.score_error + 0x1p-8 + (2.0 * seq_len + 16) * kU) * r.magnitude[i] + 1e-30);
          }
        }
      CHECK(mismatches(as_double(out), expected, bound) == 0);
    }
}
void short_attention_equals_three_kernels(Target target) {
  short_attention_equals_three_kernels_at<128>(target);
  short_attention_equals_three_kernels_at<256>(target);
}

// step_rows: the tables' rows at the position and the attended length, exactly.
void step_rows_exact(Target target) {
  auto cos_table = random_f32<2>({40, 64}, -1, 1, 17), sin_table = random_f32<2>({40, 64}, -1, 1, 18);
  Tensor<float, 2> cos_now({1, 64}), sin_now({1, 64});
  Tensor<int32_t, 2> seq({1, 1});
  for (int32_t position : {0, 17, 39}) {
    step_rows().launch(on(target), cos_now.partition<1, 64>(), sin_now.partition<1, 64>(), seq.partition<1, 1>(),
                       cos_table, sin_table, position);
    int64_t bad = 0;
    for (int64_t i = 0; i < 64; ++i)
      bad += cos_now(0, i) != cos_table(position, i) || sin_now(0, i) != sin_table(position, i);
    CHECK(bad == 0);
    CHECK(seq(0, 0) == position + 1);
  }
}

// kv_append: every (layer, KV head) row's new K and V into the caches at one position, nothing
// else.
void kv_append_exact(Target target) {
  const int64_t rows = 6, context = 10, d = 128, position = 6;
  auto k_new = random_bf16<2>({rows, d}, -2, 2, 19), v_new = random_bf16<2>({rows, d}, -2, 2, 20);
  Tensor<bfloat16, 3> k_all({rows, context, d}), v_all({rows, context, d});
  {
    auto k_slot = k_all.slice(1, position, position + 1), v_slot = v_all.slice(1, position, position + 1);
    kv_append().launch(on(target), k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), k_new, v_new);
  }
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < context; ++t)
      for (int64_t i = 0; i < d; ++i)
        bad += t == position ? k_all(r, t, i).bits != k_new(r, i).bits || v_all(r, t, i).bits != v_new(r, i).bits
                             : f(k_all(r, t, i)) != 0 || f(v_all(r, t, i)) != 0;
  CHECK(bad == 0);
}

// Greedy: the first index of the largest logit, over 5000 logits (three ragged blocks), with a
// tie placed across blocks and one inside a block.
void argmax_first_index(Target target) {
  const int64_t vocab = 5000, blocks = (vocab + kArgmaxBlock - 1) / kArgmaxBlock;
  auto logits = random_f32<1>({vocab}, -5, 5, 13);
  Tensor<float, 1> block_value({blocks});
  Tensor<int32_t, 1> block_index({blocks}), token({1});
  auto run = [&] {
    argmax_blocks<kArgmaxBlock>().launch(on(target), block_value.partition<1>(), block_index.partition<1>(), logits);
    argmax_final<kArgmaxFinal>().launch(on(target), token.partition<1>(), block_value, block_index);
    return token(0);
  };
  const std::vector<float> v = logits.to_vector();
  CHECK(run() == std::max_element(v.begin(), v.end()) - v.begin());
  logits(4321) = 9;
  logits(2500) = 9;  // a tie: the first wins
  CHECK(run() == 2500);
  logits(1000) = 9;
  CHECK(run() == 1000);
  logits(1001) = 9;
  CHECK(run() == 1000);
}

// Top-K candidates over 5000 logits (blocks, then merges down to one list) equal the host's, and
// the sampling rule picks what the host rule picks; top_k = 1 is greedy, top-p keeps the smallest
// prefix.
void topk_and_sampling(Target target) {
  const int64_t vocab = 5000;
  auto logits = random_f32<1>({vocab}, -4, 4, 14);
  logits(77) = logits(3000);  // a tie
  const std::vector<float> lv = logits.to_vector();

  int64_t lists = (vocab + kTopKBlock - 1) / kTopKBlock;
  Tensor<float, 2> cand_value({lists, kTopK});
  Tensor<int32_t, 2> cand_index({lists, kTopK});
  topk_blocks<kTopKBlock, kTopK>().launch(on(target), cand_value.partition<1, kTopK>(),
                                          cand_index.partition<1, kTopK>(), logits);
  while (lists > 1) {
    lists = (lists + kTopKMerge - 1) / kTopKMerge;
    Tensor<float, 2> next_value({lists, kTopK});
    Tensor<int32_t, 2> next_index({lists, kTopK});
    topk_merge<kTopKMerge, kTopK>().launch(on(target), next_value.partition<1, kTopK>(),
                                           next_index.partition<1, kTopK>(), cand_value, cand_index);
    cand_value = std::move(next_value);
    cand_index = std::move(next_index);
  }
  std::vector<int64_t> order(vocab);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return lv[a] > lv[b]; });
  std::vector<double> sorted;
  int64_t wrong = 0;
  for (int64_t i = 0; i < kTopK; ++i) {
    wrong += cand_index(0, i) != order[i] || cand_value(0, i) != lv[order[i]];
    sorted.push_back(lv[order[i]]);
  }
  CHECK(wrong == 0);

  Tensor<int32_t, 1> token({1});
  auto sample = [&](float inv_t, int32_t top_k, float top_p, float u) {
    sample_topk<kTopK>().launch(on(target), token.partition<1>(), cand_value, cand_index, inv_t, top_k, top_p, u);
    return token(0);
  };
  int64_t differ = 0, not_greedy = 0;
  for (int i = 0; i < 40; ++i) {
    const float u = static_cast<float>(i) / 40;
    not_greedy += sample(1.0f, 1, 1.0f, u) != order[0];
    differ += sample(1.0f, 64, 1.0f, u) != order[qwen3::sample_rank(sorted, 1.0, 64, 1.0, u)];
    differ += sample(1.5f, 20, 0.8f, u) != order[qwen3::sample_rank(sorted, 1.5, 20, 0.8, u)];
    differ += sample(0.7f, 64, 0.5f, u) != order[qwen3::sample_rank(sorted, 0.7, 64, 0.5, u)];
  }
  CHECK(not_greedy == 0);
  CHECK(differ == 0);

  // Top-p on known probabilities: ranks with p proportional to 8, 4, 2, 1, 1 (of 16). top_p = 0.7
  // keeps ranks 0 and 1 (12/16 >= 0.7 after them; the mass before rank 1, 8/16, is < 0.7), so u
  // below 8/12 picks rank 0 and above it rank 1, never rank 2.
  Tensor<float, 2> known({1, kTopK});
  Tensor<int32_t, 2> ids({1, kTopK});
  for (int64_t i = 0; i < kTopK; ++i) known(0, i) = -1e30f, ids(0, i) = static_cast<int32_t>(100 + i);
  const double weights[] = {8, 4, 2, 1, 1};
  for (int i = 0; i < 5; ++i) known(0, i) = static_cast<float>(std::log(weights[i]));
  auto pick = [&](float top_p, float u) {
    sample_topk<kTopK>().launch(on(target), token.partition<1>(), known, ids, 1.0f, 64, top_p, u);
    return token(0) - 100;
  };
  CHECK(pick(0.7f, 0.0f) == 0);
  CHECK(pick(0.7f, 0.66f) == 0);
  CHECK(pick(0.7f, 0.67f) == 1);
  CHECK(pick(0.7f, 0.999f) == 1);
  CHECK(pick(0.5f, 0.999f) == 0);  // 8/16 reaches 0.5 with rank 0 alone
  CHECK(pick(1.0f, 0.999f) == 4);  // everything kept
  CHECK(pick(0.9f, 0.999f) == 3);  // the mass before rank 3, 14/16, is < 0.9: ranks 0-3 kept
}

void weight_copy_exact(Target target) {
  auto src = random_bf16<2>({10, 1500}, -1, 1, 15);
  Tensor<bfloat16, 2> dst({30, 1500});
  {
    auto rows = dst.slice(0, 10, 20);
    weight_copy<kCopyRows, kCopyCols>().launch(on(target), rows.partition<kCopyRows, kCopyCols>(), src);
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < 30; ++i)
    for (int64_t j = 0; j < 1500; ++j)
      bad += (i >= 10 && i < 20) ? dst(i, j).bits != src(i - 10, j).bits : f(dst(i, j)) != 0;
  CHECK(bad == 0);
}

}  // namespace

QWEN3_TARGET_TEST_CASE("kernel: embedding gather", "[engine][kernels]", embedding_gather_exact)
QWEN3_TARGET_TEST_CASE("kernel: matvec, residual, rmsnorm prologue, swiglu", "[engine][kernels]", matvec_family)
QWEN3_TARGET_TEST_CASE("kernel: q/k norm + rope + kv append, G=3", "[engine][kernels]", qk_norm_rope_append_group3)
QWEN3_TARGET_TEST_CASE("kernel: q/k norm + rope + kv append, G=1", "[engine][kernels]", qk_norm_rope_append_group1)
QWEN3_TARGET_TEST_CASE("kernel: split-kv attention and combine", "[engine][kernels]", split_kv_attention)
QWEN3_TARGET_TEST_CASE("kernel: fused attention equals q/k norm + rope, split and combine", "[engine][kernels]",
                       fused_attention_equals_three_kernels)
QWEN3_TARGET_TEST_CASE("kernel: short attention equals q/k norm + rope, split and combine", "[engine][kernels]",
                       short_attention_equals_three_kernels)
QWEN3_TARGET_TEST_CASE("kernel: step rows", "[engine][kernels]", step_rows_exact)
QWEN3_TARGET_TEST_CASE("kernel: kv append", "[engine][kernels]", kv_append_exact)
QWEN3_TARGET_TEST_CASE("kernel: argmax", "[engine][kernels]", argmax_first_index)
QWEN3_TARGET_TEST_CASE("kernel: top-k candidates and sampling", "[engine][kernels]", topk_and_sampling)
QWEN3_TARGET_TEST_CASE("kernel: weight copy", "[engine][kernels]", weight_copy_exact)

// The split plan of a decode step (model.cpp and bench_attention): whole chunks per split, as
// few per split as the part tensors allow, and no more splits than the context has chunks.
TEST_CASE("attention split plan", "[engine][kernels]") {
  CHECK(max_attention_splits(256, 8, 40960, 64) == 32);
  CHECK(max_attention_splits(256, 8, 100, 64) == 2);
  CHECK(max_attention_splits(4, 8, 40960, 64) == 1);
  auto plan = [](std::int64_t seq_len) {
    AttentionSplits a = attention_splits(seq_len, 64, 32);
    return std::pair(a.chunks_per_split, a.splits);
  };
  CHECK(plan(1) == std::pair<std::int64_t, std::int64_t>(1, 1));
  CHECK(plan(33) == std::pair<std::int64_t, std::int64_t>(1, 1));
  CHECK(plan(160) == std::pair<std::int64_t, std::int64_t>(1, 3));
  CHECK(plan(2048) == std::pair<std::int64_t, std::int64_t>(1, 32));
  CHECK(plan(2049) == std::pair<std::int64_t, std::int64_t>(2, 17));
  CHECK(plan(16384) == std::pair<std::int64_t, std::int64_t>(8, 32));
  CHECK(plan(16385) == std::pair<std::int64_t, std::int64_t>(9, 29));
}

// The cache holds every chunk a split of some step reads (a program past the cache's end would
// run the bounds-checked copy of its loop), and no more than that.
TEST_CASE("attention cache positions", "[engine][kernels]") {
  CHECK(attention_cache_positions(160, 64, 3) == 192);
  CHECK(attention_cache_positions(16640, 64, 32) == 261 * 64);  // 16385 positions: 29 splits of 9 chunks
  for (std::int64_t context : {1, 63, 64, 65, 2049, 16640, 40960}) {
    for (std::int64_t max_splits : {1, 2, 7, 32}) {
      const std::int64_t positions = attention_cache_positions(context, 64, max_splits);
      CAPTURE(context, max_splits, positions);
      CHECK(positions % 64 == 0);
      CHECK(positions >= context);
      std::int64_t reach = 0;
      for (std::int64_t seq_len = 1; seq_len <= context; ++seq_len) {
        const AttentionSplits a = attention_splits(seq_len, 64, max_splits);
        reach = std::max(reach, a.chunks_per_split * a.splits * 64);
      }
      CHECK(positions == std::max(reach, (context + 63) / 64 * 64));
    }
  }
}

// Every kernel of the engine compiles to a cubin for sm_90 (no GPU needed), with the tile sizes
// the engine uses; GP = 1, 2, 8 cover the GQA groups of the tests and of Qwen3-0.6B..32B (2, 4,
// 5 -> 8, 8).
TEST_CASE("kernels compile for sm_90", "[engine][kernels][compile]") {
  const Target sm90 = Target::sm_90;
  auto ok = [](const tessera::CompiledArtifact& a) { return !a.cubin.empty(); };
  Tensor<bfloat16, 2> w({64, 512}), table({100, 64});
  Tensor<bfloat16, 1> g({512});
  Tensor<float, 1> x({512}), y({64});
  CHECK(ok(embedding_gather<kEmbeddingTile>().compile(sm90, x.partition<kEmbeddingTile>(), table, int32_t{3})));
  CHECK(ok(matvec<kMatvecRows, kMatvecCols>().compile(sm90, y.partition<kMatvecRows>(), w, x)));
  CHECK(ok(matvec_residual<kMatvecRows, kMatvecCols>().compile(sm90, y.partition<kMatvecRows>(), w, x)));
  CHECK(ok(rmsnorm_matvec<kMatvecRows, kMatvecCols>().compile(sm90, y.partition<kMatvecRows>(), w, x, g, 1e-6f)));
  CHECK(ok(rmsnorm_swiglu<kMatvecRows, kMatvecCols>().compile(sm90, y.partition<kMatvecRows>(), w, w, x, g, 1e-6f)));
  CHECK(ok(rmsnorm_swiglu<kSmallSwigluTileRows, kSmallSwigluTileCols>().compile(
      sm90, y.partition<kSmallSwigluTileRows>(), w, w, x, g, 1e-6f)));
  tessera::LaunchOptions norm_threads, swiglu_threads;
  norm_threads.target = swiglu_threads.target = sm90;
  norm_threads.hints.threads = kNormMatvecThreads;
  swiglu_threads.hints.threads = kSwigluThreads;
  CHECK(
      ok(rmsnorm_matvec<kMatvecRows, kMatvecCols>().compile(norm_threads, y.partition<kMatvecRows>(), w, x, g, 1e-6f)));
  CHECK(ok(rmsnorm_swiglu<kSwigluTileRows, kSwigluTileCols>().compile(swiglu_threads, y.partition<kSwigluTileRows>(), w,
                                                                      w, x, g, 1e-6f)));
  Tensor<float, 1> qkv({4 * 128 * 3});
  Tensor<float, 2> rope({16, 64}), rope2({16, 64});
  Tensor<bfloat16, 1> qn({128}), kn({128});
  Tensor<bfloat16, 3> q({2, 2, 128}), kc({2, 16, 128}), vc({2, 16, 128});
  auto q_in = qkv.slice(0, 0, 512).reshape<4>({2, 2, 2, 64});
  auto k_in = qkv.slice(0, 512, 768).reshape<3>({2, 2, 64});
  auto v_in = qkv.slice(0, 768, 1024).reshape<2>({2, 128});
  auto k_slot = kc.slice(1, 3, 4);
  auto v_slot = vc.slice(1, 3, 4);
  Tensor<float, 2> row({1, 64}), row2({1, 64});
  CHECK(
      ok(qk_norm_rope_append<2>().compile(sm90, q.partition<1, 2, 128>(), k_slot.partition<1, 1, 128>(),
                                          v_slot.partition<1, 1, 128>(), q_in, k_in, v_in, qn, kn, row, row2, 1e-6f)));
  Tensor<float, 3> po({2, 4, 256}), pm({2, 4, 2}), pl({2, 4, 2});
  Tensor<float, 2> attn({2, 256});
  Tensor<bfloat16, 2> k_row({2, 128}), v_row({2, 128});
  Tensor<int32_t, 2> seq({1, 1});
  CHECK(ok(decode_attention_split<2, kAttentionChunk>().compile(sm90, po.partition<1, 1, 256>(),
                                                                pm.partition<1, 1, 2>(), pl.partition<1, 1, 2>(), q, kc,
                                                                vc, k_row, v_row, seq, int32_t{1}, 0.1f)));
  CHECK(ok(decode_attention_split<2, kAttentionChunk, true>().compile(
      sm90, po.partition<1, 1, 256>(), pm.partition<1, 1, 2>(), pl.partition<1, 1, 2>(), q, kc, vc, k_row, v_row, seq,
      int32_t{1}, 0.1f)));
  CHECK(ok(step_rows().compile(sm90, row.partition<1, 64>(), row2.partition<1, 64>(), seq.partition<1, 1>(), rope,
                               rope2, int32_t{3})));
  {
    auto ks = kc.slice(1, 3, 4), vs = vc.slice(1, 3, 4);
    CHECK(ok(kv_append().compile(sm90, ks.partition<1, 1, 128>(), vs.partition<1, 1, 128>(), k_row, v_row)));
  }
  CHECK(ok(decode_attention_combine<2>().compile(sm90, attn.partition<1, 256>(), po, pm, pl)));
  {
    Tensor<bfloat16, 3> ks({2, 1, 128}), vs({2, 1, 128});
    CHECK(ok(decode_attention_fused<2, kAttentionChunk>().compile(
        sm90, attn.partition<1, 256>(), ks.partition<1, 1, 128>(), vs.partition<1, 1, 128>(), q_in, k_in, v_in, qn, kn,
        row, row2, kc, vc, seq, int32_t{1}, 1e-6f, 0.1f)));
    // 4B's group tile (G = 4), here over a group of 2 (the tile's rows past G are dropped).
    CHECK(ok(decode_attention_fused<4, kAttentionChunk>().compile(
        sm90, attn.partition<1, 512>(), ks.partition<1, 1, 128>(), vs.partition<1, 1, 128>(), q_in, k_in, v_in, qn, kn,
        row, row2, kc, vc, seq, int32_t{1}, 1e-6f, 0.1f)));
    auto k_halves = kc.slice(0, 0, kc.shape(0)).reshape<4>({kc.shape(0), kc.shape(1), 2, 64});
    auto v_halves = vc.slice(0, 0, vc.shape(0)).reshape<4>({vc.shape(0), vc.shape(1), 2, 64});
    CHECK(ok(decode_attention_short<4, 256>().compile(sm90, attn.partition<1, 512>(), ks.partition<1, 1, 128>(),
                                                      vs.partition<1, 1, 128>(), q_in, k_in, v_in, qn, kn, row, row2,
                                                      k_halves, v_halves, seq, 1e-6f, 0.1f)));
  }
  Tensor<float, 1> logits({5000}), bv({3});
  Tensor<int32_t, 1> bi({3}), token({1});
  CHECK(ok(argmax_blocks<kArgmaxBlock>().compile(sm90, bv.partition<1>(), bi.partition<1>(), logits)));
  CHECK(ok(argmax_final<kArgmaxFinal>().compile(sm90, token.partition<1>(), bv, bi)));
  Tensor<float, 2> cv({5, kTopK}), cv2({1, kTopK});
  Tensor<int32_t, 2> ci({5, kTopK}), ci2({1, kTopK});
  CHECK(ok(topk_blocks<kTopKBlock, kTopK>().compile(sm90, cv.partition<1, kTopK>(), ci.partition<1, kTopK>(), logits)));
  CHECK(
      ok(topk_merge<kTopKMerge, kTopK>().compile(sm90, cv2.partition<1, kTopK>(), ci2.partition<1, kTopK>(), cv, ci)));
  CHECK(ok(sample_topk<kTopK>().compile(sm90, token.partition<1>(), cv2, ci2, 1.0f, int32_t{20}, 0.9f, 0.5f)));
  Tensor<bfloat16, 2> dst({64, 512});
  CHECK(ok(weight_copy<kCopyRows, kCopyCols>().compile(sm90, dst.partition<kCopyRows, kCopyCols>(), w)));
}
