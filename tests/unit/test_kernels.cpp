// test_kernels.cpp: kernels run on the CPU target and on the GPU, compared with host references.
//
// Covers every op of the tile language and every dtype, with ragged sizes (1-D lengths 1, 127,
// 128, 129, 1000, 1000001 over 128-wide tiles; 2-D 2000 x 1000 over 64 x 64 and over a tile that
// divides neither dimension). Tolerances: f32 exact for + - * and min/max, 1e-6 relative for
// transcendental math; f16 and bf16 results are compared after rounding the f32 reference to the
// same type (1 ulp).
#include "execution_helpers.h"
#include "row_kernels.h"
#include "two_rows_kernel.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <random>

using namespace tessera;

namespace {

using exec_test::random_tensor;

template <class T>
float f(T v) {
  return static_cast<float>(v);
}

bool close(float got, float want, float rel, float abs_tol = 1e-6f) {
  return std::abs(got - want) <= abs_tol + rel * std::abs(want);
}

}  // namespace

static void body_1(Target target) {
  auto add = kernel("add", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });
  for (int64_t n : {1, 127, 128, 129, 1000, 1000001}) {
    auto x = random_tensor<float, 1>({n}, -10, 10, 1);
    auto y = random_tensor<float, 1>({n}, -10, 10, 2);
    Tensor<float, 1> z({n});
    add.launch_on(target, z.partition<128>(), x, y);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += z(i) != x(i) + y(i);
    INFO("n = " << n);
    CHECK(bad == 0);
  }
}

template <class TestType>
static void body_2_t(Target target) {
  auto add = kernel("add_typed", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });
  for (int64_t n : {1, 129, 1000}) {
    auto x = random_tensor<TestType, 1>({n}, -50, 50, 3);
    auto y = random_tensor<TestType, 1>({n}, -50, 50, 4);
    Tensor<TestType, 1> z({n});
    add.launch_on(target, z.template partition<128>(), x, y);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += f(z(i)) != f(static_cast<TestType>(f(x(i)) + f(y(i))));
    INFO("n = " << n);
    CHECK(bad == 0);
  }
}

// The edge programs of a versioned elementwise kernel run one loop over each thread's elements
// (convert-tile-to-loops' fused edge copy): 4096-element bf16 tiles give 128 threads of 4 chunks
// of 8, so every ragged length below ends inside some thread's chunks; the kernel reads its
// output, a bf16 input and a scalar parameter.
static void body_fused_edge(Target target) {
  auto k = kernel("fused_edge", [](auto o, auto s, auto a) {
    auto t = cast<DType::f32>(o.load()) * c<0.5> + cast<DType::f32>(a.load_like(o)) * s;
    return o.store(cast<DType::bf16>(t));
  });
  for (int64_t n : {4095, 4097, 3 * 4096 + 1001, 5 * 4096}) {
    auto a = random_tensor<bfloat16, 1>({n}, -4, 4, 31);
    auto o = random_tensor<bfloat16, 1>({n}, -4, 4, 32);
    std::vector<float> expect(n);
    for (int64_t i = 0; i < n; ++i) expect[i] = f(bfloat16(f(o(i)) * 0.5f + f(a(i)) * 1.5f));
    k.launch_on(target, o.partition<4096>(), 1.5f, a);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += f(o(i)) != expect[i];
    INFO("n = " << n);
    CHECK(bad == 0);
  }
}

static void body_3(Target target) {
  auto add = kernel("add2d", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });
  auto x = random_tensor<float, 2>({2000, 1000}, -1, 1, 5);
  auto y = random_tensor<float, 2>({2000, 1000}, -1, 1, 6);
  Tensor<float, 2> z({2000, 1000}), w({2000, 1000});
  add.launch_on(target, z.partition<64, 64>(), x, y);
  add.launch_on(target, w.partition<128, 256>(), x, y);  // divides neither 2000 nor 1000... 1000/256, 2000/128
  int64_t bad = 0;
  for (int64_t i = 0; i < 2000; ++i)
    for (int64_t j = 0; j < 1000; ++j) {
      bad += z(i, j) != x(i, j) + y(i, j);
      bad += w(i, j) != x(i, j) + y(i, j);
    }
  CHECK(bad == 0);
}

static void body_4(Target target) {
  const int64_t n = 1000;
  auto x = random_tensor<float, 1>({n}, 0.1f, 4.0f, 7);
  Tensor<float, 1> z({n});
  auto check = [&](auto k, std::function<float(float)> ref, float rel) {
    k.launch_on(target, z.partition<128>(), x);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += !close(z(i), ref(x(i)), rel);
    INFO(k.name());
    CHECK(bad == 0);
  };
  check(kernel("exp", [](auto o, auto a) { return o.store(exp(a.load_like(o))); }), [](float v) { return std::exp(v); }, 1e-6f);
  check(kernel("exp2", [](auto o, auto a) { return o.store(exp2(a.load_like(o))); }), [](float v) { return std::exp2(v); }, 1e-6f);
  check(kernel("log", [](auto o, auto a) { return o.store(log(a.load_like(o))); }), [](float v) { return std::log(v); }, 1e-6f);
  check(kernel("sqrt", [](auto o, auto a) { return o.store(sqrt(a.load_like(o))); }), [](float v) { return std::sqrt(v); }, 1e-6f);
  check(kernel("rsqrt", [](auto o, auto a) { return o.store(rsqrt(a.load_like(o))); }), [](float v) { return 1 / std::sqrt(v); }, 1e-6f);
  check(kernel("tanh", [](auto o, auto a) { return o.store(tanh(a.load_like(o))); }), [](float v) { return std::tanh(v); }, 1e-6f);
  check(kernel("abs_neg", [](auto o, auto a) { return o.store(abs(-a.load_like(o))); }), [](float v) { return v; }, 0);
  // tanh over both signs, both branches of its lowering and its saturation.
  auto w = random_tensor<float, 1>({n}, -12.0f, 12.0f, 27);
  Tensor<float, 1> tw({n});
  kernel("tanh_wide", [](auto o, auto a) { return o.store(tanh(a.load_like(o))); }).launch_on(target, tw.partition<128>(), w);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !close(tw(i), std::tanh(w(i)), 1e-6f, 1e-7f);
  CHECK(bad == 0);
}

// exp over its whole range: threads whose elements all lie within +-80 take the GPU's fast path
// (tile.exp_in_range, no per-element range handling), the others the plain one; both must agree
// with the host to the accurate exp's bound (4e-7 relative within +-80; 2^(x log2 e) beyond 80:
// its rounding of x log2 e costs up to about 3e-6), down to subnormal results, infinities and NaN.
static void body_exp_range(Target target) {
  const int64_t n = 4096;
  auto x = random_tensor<float, 1>({n}, -70.0f, 70.0f, 41);
  const float specials[] = {80.0f, -80.0f, 85.0f, 88.5f, 88.8f, 95.0f, -88.0f, -95.0f, -103.0f, -104.5f,
                            -200.0f, 1e-40f, -1e-40f, 0.0f, -0.0f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  // Specials in the second half only, one per 53 elements: most threads there still see none.
  for (int64_t i = n / 2, s = 0; i < n; i += 53, ++s) x(i) = specials[s % std::size(specials)];
  Tensor<float, 1> z({n});
  kernel("exp_range", [](auto o, auto a) { return o.store(exp(a.load_like(o))); })
      .launch_on(target, z.partition<256>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    float v = x(i), got = z(i);
    float want = static_cast<float>(std::exp(static_cast<double>(v)));
    bool ok = std::isnan(want) ? std::isnan(got)
              : std::isinf(want) ? got == want
              : std::abs(got - want) <= (std::abs(v) < 80 ? 4e-7f : 5e-6f) * std::abs(want) + 4e-45f;
    if (!ok) {
      if (bad < 5) WARN("exp(" << v << ") = " << got << ", expected " << want);
      ++bad;
    }
  }
  CHECK(bad == 0);
}

// The approximate functions: within their documented bounds on the GPU (docs/ast-format.md), the
// accurate functions on the CPU. Also a bf16 softmax written with them.
static void body_fast_math(Target target) {
  const int64_t n = 1000;
  auto x = random_tensor<float, 1>({n}, -10.0f, 10.0f, 17);
  auto y = random_tensor<float, 1>({n}, 0.01f, 100.0f, 18);
  Tensor<float, 1> z({n});
  auto check = [&](auto k, std::function<float(float, float)> ref, float rel, float abs_tol) {
    k.launch_on(target, z.partition<128>(), x, y);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += !close(z(i), ref(x(i), y(i)), rel, abs_tol);
    INFO(k.name());
    CHECK(bad == 0);
  };
  // fast_exp: 2^-22 + |x| 2^-24 relative (|x| <= 10 here).
  check(kernel("fast_exp", [](auto o, auto a, auto) { return o.store(fast_exp(a.load_like(o))); }),
        [](float v, float) { return std::exp(v); }, 1e-6f, 0);
  check(kernel("fast_sqrt", [](auto o, auto, auto b) { return o.store(fast_sqrt(b.load_like(o))); }),
        [](float, float w) { return std::sqrt(w); }, 5e-7f, 0);
  check(kernel("fast_tanh", [](auto o, auto a, auto) { return o.store(fast_tanh(a.load_like(o))); }),
        [](float v, float) { return std::tanh(v); }, 1e-3f, 1e-6f);
  check(kernel("fast_div", [](auto o, auto a, auto b) { return o.store(fast_div(a.load_like(o), b.load_like(o))); }),
        [](float v, float w) { return v / w; }, 3e-7f, 0);
  // A softmax over bf16 rows with fast_exp and fast_div: each result within 1 bf16 ulp of the
  // f32 reference (after rounding).
  auto rows = random_tensor<bfloat16, 2>({37, 512}, -8, 8, 19);
  Tensor<bfloat16, 2> out({37, 512});
  kernel("fast_softmax", [](auto o, auto a) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto e = fast_exp(t - max<1>(t));
    return o.store(cast<DType::bf16>(fast_div(e, sum<1>(e))));
  }).launch_on(target, out.partition<1, 512>(), rows);
  int64_t bad = 0;
  for (int64_t r = 0; r < 37; ++r) {
    float m = -1e30f, s = 0;
    for (int64_t c = 0; c < 512; ++c) m = std::max(m, f(rows(r, c)));
    for (int64_t c = 0; c < 512; ++c) s += std::exp(f(rows(r, c)) - m);
    for (int64_t c = 0; c < 512; ++c) {
      float want = std::exp(f(rows(r, c)) - m) / s;
      bad += !close(f(out(r, c)), want, 1.0f / 128, 1e-7f);
    }
  }
  CHECK(bad == 0);
}

static void body_5(Target target) {
  const int64_t n = 777;
  auto x = random_tensor<float, 1>({n}, -4, 4, 8);
  auto y = random_tensor<float, 1>({n}, 0.5f, 4, 9);
  Tensor<float, 1> z({n});
  auto k2 = kernel("binops2", [](auto o, auto a, auto b) {
    auto p = a.load_like(o);
    auto q = b.load_like(o);
    auto big = (p > q) || (p <= -q);
    return o.store(select(big && !(p == q), maximum(p, q) - minimum(p, q) * p / q, p * q - p));
  });
  k2.launch_on(target, z.partition<128>(), x, y);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    float p = x(i), q = y(i);
    bool big = (p > q) || (p <= -q);
    float want = (big && !(p == q)) ? std::max(p, q) - std::min(p, q) * p / q : p * q - p;
    bad += !close(z(i), want, 1e-6f);
  }
  CHECK(bad == 0);
}

static void body_6(Target target) {
  const int64_t n = 300;
  auto x = random_tensor<float, 1>({n}, -100, 100, 10);
  // Subnormal bf16 results (kept, as the GPU's conversion keeps them; the CPU's AVX512-BF16
  // instructions would flush them) and ties to even.
  const float specials[] = {6.0546e-39f, -1e-40f, 1.4e-45f, -1.17e-38f, 1.0f + 1.0f / 256, 1.0f + 3.0f / 256};
  for (size_t s = 0; s < std::size(specials); ++s) x(200 + static_cast<int64_t>(s)) = specials[s];
  Tensor<bfloat16, 1> b({n});
  Tensor<half, 1> h({n});
  Tensor<int32_t, 1> i({n});
  Tensor<float, 1> back({n});
  kernel("to_bf16", [](auto o, auto a) { return o.store(cast<DType::bf16>(a.load_like(o))); })
      .launch_on(target, b.partition<128>(), x);
  kernel("to_f16", [](auto o, auto a) { return o.store(cast<DType::f16>(a.load_like(o))); })
      .launch_on(target, h.partition<128>(), x);
  kernel("to_i32", [](auto o, auto a) { return o.store(cast<DType::i32>(a.load_like(o))); })
      .launch_on(target, i.partition<128>(), x);
  kernel("i32_bool_to_f32", [](auto o, auto a) {
    auto v = a.load_like(o);
    return o.store(cast<DType::f32>(v) + cast<DType::f32>(v > c<0.0>));
  }).launch_on(target, back.partition<128>(), i);
  int64_t bad = 0;
  for (int64_t k = 0; k < n; ++k) {
    bad += f(b(k)) != f(bfloat16(x(k)));
    bad += f(h(k)) != f(half(x(k)));
    bad += i(k) != static_cast<int32_t>(x(k));
    bad += back(k) != static_cast<float>(i(k)) + (i(k) > 0 ? 1.f : 0.f);
  }
  CHECK(bad == 0);
}

// bf16 widened to f32 is exact: every bit pattern, in 16-byte vectors of pairs (the GPU takes each
// pair's halves from the 32-bit word, see tessera-widen-bf16-pairs) and in the ragged tail.
static void body_bf16_widening(Target target) {
  const int64_t n = 65536 + 100;
  Tensor<bfloat16, 1> x({n});
  for (int64_t i = 0; i < n; ++i) x(i) = bfloat16::from_bits(static_cast<std::uint16_t>(i * 40503));
  Tensor<float, 1> y({n});
  kernel("widen_bf16", [](auto o, auto a) { return o.store(cast<DType::f32>(a.load_like(o))); })
      .launch_on(target, y.partition<1024>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    const std::uint32_t want = std::uint32_t{x(i).bits} << 16;
    std::uint32_t got;
    std::memcpy(&got, &y(i), sizeof got);
    float want_f;
    std::memcpy(&want_f, &want, sizeof want_f);
    const bool same = got == want || (std::isnan(want_f) && std::isnan(y(i)));
    if (!same && bad++ < 5) WARN("bits " << x(i).bits << ": got " << got << ", want " << want);
  }
  CHECK(bad == 0);
}

static void body_7(Target target) {
  const int64_t m = 200, n = 100;
  auto x = random_tensor<float, 2>({m, n}, -1, 1, 11);
  Tensor<float, 2> z({m, n});
  // out = x * rowmax + colsum * s + 2
  auto k = kernel("bcast", [](auto o, auto a, auto s) {
    auto t = a.load_like(o);                      // [64 32]
    return o.store(t * max<1>(t) + sum<0>(t) * s + c<2.0>);
  });
  k.launch_on(target, z.partition<64, 32>(), x, 0.5f);
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      // reductions are over the tile (padding counts as 0), as the kernel says
      int64_t i0 = i / 64 * 64, j0 = j / 32 * 32;
      float rmax = -1e30f, csum = 0;
      for (int64_t jj = j0; jj < j0 + 32; ++jj) rmax = std::max(rmax, jj < n ? x(i, jj) : 0.f);
      for (int64_t ii = i0; ii < i0 + 64; ++ii) csum += ii < m ? x(ii, j) : 0.f;
      bad += !close(z(i, j), x(i, j) * rmax + csum * 0.5f + 2, 1e-5f, 1e-5f);
    }
  CHECK(bad == 0);
}

template <class TestType>
static void body_8_t(Target target) {
  const int64_t rows = 100, cols = 256;
  auto x = random_tensor<TestType, 2>({rows, cols}, -3, 3, 12);
  Tensor<float, 2> s({rows, 1}), mx({rows, 1}), mn({rows, 1});
  auto k = kernel("reductions", [](auto os, auto omax, auto omin, auto a) {
    auto t = cast<DType::f32>(load<4, 256>(a, program_id<0>(), program_id<1>()));
    return seq(os.store(sum<1>(t)), omax.store(max<1>(t)), omin.store(min<1>(t)));
  });
  k.launch_on(target, s.template partition<4, 1>(), mx.template partition<4, 1>(), mn.template partition<4, 1>(), x);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    float hi = -1e30f, lo = 1e30f;
    for (int64_t c = 0; c < cols; ++c) {
      sum += f(x(r, c));
      hi = std::max(hi, f(x(r, c)));
      lo = std::min(lo, f(x(r, c)));
    }
    bad += !close(s(r, 0), static_cast<float>(sum), 1e-5f, 1e-4f) + (mx(r, 0) != hi) + (mn(r, 0) != lo);
  }
  CHECK(bad == 0);
}

static void body_9(Target target) {
  Tensor<int32_t, 1> ids({1000});
  kernel("iota", [](auto o) {
    return o.store(iota<128>() + program_id<0>() * c<128.0> + num_programs<0>() * c<0.0>);
  }).launch_on(target, ids.partition<128>());
  int64_t bad = 0;
  for (int64_t i = 0; i < 1000; ++i) bad += ids(i) != i;
  CHECK(bad == 0);

  auto x = random_tensor<float, 2>({100, 60}, -1, 1, 13);
  Tensor<float, 2> t({60, 100});
  // Transpose a 100 x 60 matrix: the program owning output tile (i, j) loads input tile (j, i).
  kernel("transpose", [](auto o, auto a) {
    return o.store(transpose(load<32, 16>(a, program_id<1>(), program_id<0>())));
  }).launch_on(target, t.partition<16, 32>(), x);
  for (int64_t i = 0; i < 60; ++i)
    for (int64_t j = 0; j < 100; ++j) bad += t(i, j) != x(j, i);
  CHECK(bad == 0);

  Tensor<float, 1> flat({6000});
  kernel("flatten", [](auto o, auto a) {
    return o.store(reshape<512>(load<1, 512>(a, program_id<0>() * c<0.0>, program_id<0>())));
  }).launch_on(target, flat.partition<512>(), Tensor<float, 2>({1, 6000}, std::span<const float>(std::vector<float>(6000, 1.5f))));
  for (int64_t i = 0; i < 6000; ++i) bad += flat(i) != 1.5f;
  CHECK(bad == 0);
}

// Elements of c = a b (f16 inputs, f32 result) that differ from a double-precision host product.
static int64_t gemm_mismatches(Tensor<half, 2>& a, Tensor<half, 2>& b, Tensor<float, 2>& c) {
  int64_t bad = 0;
  for (int64_t i = 0; i < c.shape()[0]; ++i)
    for (int64_t j = 0; j < c.shape()[1]; ++j) {
      double want = 0;
      for (int64_t k = 0; k < a.shape()[1]; ++k) want += f(a(i, k)) * f(b(k, j));
      bad += !close(c(i, j), static_cast<float>(want), 1e-5f, 1e-5f);
    }
  return bad;
}

static void body_10(Target target) {
  const int64_t m = 100, n = 70, kk = 90;  // ragged in M, N and K: padding zeros keep it exact
  auto a = random_tensor<half, 2>({m, kk}, -1, 1, 14);
  auto b = random_tensor<half, 2>({kk, n}, -1, 1, 15);
  Tensor<float, 2> cmat({m, n});
  auto gemm = kernel("gemm", [](auto o, auto x, auto y) {
    auto ktiles = (dim<1>(x) + c<31.0>) / c<32.0>;
    auto acc = for_range(
        ktiles,
        [=](auto k, auto acc) {
          return mma(load<32, 32>(x, program_id<0>(), k), load<32, 32>(y, k, program_id<1>()), acc);
        },
        full<DType::f32, 32, 32>(c<0.0>));
    return o.store(acc);
  });
  gemm.launch_on(target, cmat.partition<32, 32>(), a, b);
  CHECK(gemm_mismatches(a, b, cmat) == 0);
}

// Loops whose tile indices grow with the loop variable: programs whose every iteration's tiles are
// in bounds run the versioned copy (no bounds checks in the loop), the others the checked one.
static void body_loop_versions(Target target) {
  // A row sum in 512-column chunks, as a loop: 4096 columns (every program interior) and 4000
  // (the last chunk of every row is ragged).
  for (int64_t cols : {4096, 4000}) {
    const int64_t rows = 37;
    auto x = random_tensor<bfloat16, 2>({rows, cols}, -1, 1, 31);
    Tensor<float, 2> s({rows, 1});
    auto k = kernel("row_sum_chunks", [](auto o, auto a) {
      auto acc = for_range(
          (dim<1>(a) + c<511>) / c<512>,
          [=](auto j, auto acc) { return acc + cast<DType::f32>(load<1, 512>(a, program_id<0>(), j)); },
          full<DType::f32, 1, 512>(c<0.0>));
      return o.store(sum<1>(acc));
    });
    k.launch_on(target, s.partition<1, 1>(), x);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (int64_t j = 0; j < cols; ++j) want += f(x(r, j));
      bad += !close(s(r, 0), static_cast<float>(want), 1e-5f, 1e-4f);
    }
    INFO("cols = " << cols);
    CHECK(bad == 0);
  }
  // A K loop two tiles at a time (index 2k and 2k + 1) with K a multiple of the tile: the
  // programs inside M and N run the versioned copy, those on the ragged edges the checked one.
  const int64_t m = 100, n = 70, kk = 128;
  auto a = random_tensor<half, 2>({m, kk}, -1, 1, 32);
  auto b = random_tensor<half, 2>({kk, n}, -1, 1, 33);
  Tensor<float, 2> cmat({m, n});
  auto gemm = kernel("gemm_pairs", [](auto o, auto x, auto y) {
    auto acc = for_range(
        dim<1>(x) / c<64>,
        [=](auto k, auto acc) {
          auto k0 = k * c<2>, k1 = k * c<2> + c<1>;
          auto part = mma(load<32, 32>(x, program_id<0>(), k0), load<32, 32>(y, k0, program_id<1>()), acc);
          return mma(load<32, 32>(x, program_id<0>(), k1), load<32, 32>(y, k1, program_id<1>()), part);
        },
        full<DType::f32, 32, 32>(c<0.0>));
    return o.store(acc);
  });
  gemm.launch_on(target, cmat.partition<32, 32>(), a, b);
  CHECK(gemm_mismatches(a, b, cmat) == 0);
}

static void body_11(Target target) {
  const int64_t rows = 64, cols = 1000;
  auto x = random_tensor<float, 2>({rows, cols}, -5, 5, 16);
  Tensor<float, 2> lse({rows, 1});
  // log-sum-exp of each row, 128 columns at a time, carrying (running max, running sum).
  auto k = kernel("logsumexp", [](auto o, auto a) {
    auto n = (dim<1>(a) + c<127.0>) / c<128.0>;
    auto r = for_range(
        n,
        [=](auto j, auto m, auto s) {
          auto cols = iota<128>() + j * c<128.0>;
          auto t = select(cols < dim<1>(a), load<1, 128>(a, program_id<0>(), j), full<DType::f32, 1, 128>(c<-1e30>));
          auto m2 = maximum(m, max<1>(t));
          return carry(m2, s * exp(m - m2) + sum<1>(exp(t - m2)));
        },
        full<DType::f32, 1, 1>(c<-1e30>), full<DType::f32, 1, 1>(c<0.0>));
    return o.store(get<0>(r) + log(get<1>(r)));
  });
  k.launch_on(target, lse.partition<1, 1>(), x);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e30, s = 0;
    for (int64_t c2 = 0; c2 < cols; ++c2) mx = std::max<double>(mx, x(r, c2));
    for (int64_t c2 = 0; c2 < cols; ++c2) s += std::exp(x(r, c2) - mx);
    bad += !close(lse(r, 0), static_cast<float>(mx + std::log(s)), 1e-5f);
  }
  CHECK(bad == 0);
}

static void body_12(Target target) {
  const int64_t n = 1029;
  auto x = random_tensor<float, 1>({n}, -1, 1, 17);
  auto y = random_tensor<float, 1>({n}, -1, 1, 18);
  Tensor<float, 1> z({n});
  auto axpy = kernel("axpy", [](auto o, auto alpha, auto a, auto b) {
    return o.store(alpha * a.load_like(o) + b.load_like(o));
  });
  axpy.launch_on(target, z.partition<256>(), 3.0f, x, y);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !close(z(i), 3.0f * x(i) + y(i), 1e-6f);
  CHECK(bad == 0);
}

static void body_ints_bools(Target target) {
  const int64_t n = 1000;
  auto xf = random_tensor<float, 1>({n}, -1000, 1000, 19);
  Tensor<int32_t, 1> x({n}), y({n}), z({n});
  for (int64_t i = 0; i < n; ++i) {
    x(i) = static_cast<int32_t>(xf(i));
    y(i) = static_cast<int32_t>(i % 13) + 1;  // never zero: a divisor
  }
  kernel("int_ops", [](auto o, auto a, auto b) {
    auto p = a.load_like(o);
    auto q = b.load_like(o);
    return o.store(maximum(p - q * q, -p) / q + minimum(p, q) * c<3> - abs(p));
  }).launch_on(target, z.partition<128>(), x, y);
  Tensor<bool, 1> flags({n});
  kernel("bool_out", [](auto o, auto a, auto b) {
    auto p = a.load_like(o);
    return o.store((p > b.load_like(o)) && !(p == c<0>));
  }).launch_on(target, flags.partition<256>(), x, y);
  Tensor<float, 1> from_bool({n});
  kernel("bool_in", [](auto o, auto f) { auto b = cast<DType::f32>(f.load_like(o));
    return o.store(select(f.load_like(o), b * c<0> + c<1.5>, b * c<0> - c<2.0>) + b); })
      .launch_on(target, from_bool.partition<128>(), flags);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    int32_t p = x(i), q = y(i);
    bad += z(i) != std::max(p - q * q, -p) / q + std::min(p, q) * 3 - std::abs(p);
    bool f = (p > q) && !(p == 0);
    bad += flags(i) != f;
    bad += from_bool(i) != (f ? 1.5f : -2.0f) + (f ? 1.f : 0.f);
  }
  CHECK(bad == 0);
}

template <class TestType>
static void body_half_math_t(Target target) {
  const int64_t n = 500;
  auto x = random_tensor<TestType, 1>({n}, 0.25f, 3.0f, 20);
  Tensor<TestType, 1> z({n});
  kernel("half_math", [](auto o, auto a) {
    auto p = a.load_like(o);
    return o.store(exp(p) * c<0.1> + sqrt(p) - tanh(p) + log(p) / (p + c<1>));
  }).launch_on(target, z.template partition<128>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    // 16-bit math is computed in f32 per op and rounded per op: compare with 1% + 1 ulp slack.
    float p = f(x(i));
    float want = std::exp(p) * 0.1f + std::sqrt(p) - std::tanh(p) + std::log(p) / (p + 1);
    bad += !close(f(z(i)), want, 2e-2f, 2e-2f);
  }
  CHECK(bad == 0);
}
static void body_half_math(Target target) {
  body_half_math_t<half>(target);
  body_half_math_t<bfloat16>(target);
}

// Every kernel test runs on the CPU target and, tagged [gpu], on the GPU when one is present.
// Booleans compare as in C++ (false < true): i1 compares are unsigned (signed, true is -1).
static void body_bool_compare(Target target) {
  const std::vector<bool> av{false, false, true, true}, bv{false, true, false, true};
  Tensor<bool, 1> a({4}), b({4}), lt({4}), ge({4});
  for (int64_t i = 0; i < 4; ++i) a(i) = av[i], b(i) = bv[i];
  kernel("bool_lt", [](auto o, auto x, auto y) { return o.store(x.load_like(o) < y.load_like(o)); })
      .launch_on(target, lt.partition<4>(), a, b);
  kernel("bool_ge", [](auto o, auto x, auto y) { return o.store(x.load_like(o) >= y.load_like(o)); })
      .launch_on(target, ge.partition<4>(), a, b);
  for (int64_t i = 0; i < 4; ++i) {
    INFO(av[i] << " vs " << bv[i]);
    CHECK(lt(i) == (av[i] < bv[i]));
    CHECK(ge(i) == (av[i] >= bv[i]));
  }
}

// A bf16 scalar parameter, held in a register: on x86 the CPU target truncates it with
// __truncsfbf2, which its module defines (older libgccs do not).
static void body_bf16_scalar(Target target) {
  Tensor<bfloat16, 2> z({58, 10});
  const bfloat16 s(-1.6015625f);
  kernel("bf16_scalar", [](auto o, auto v) { return o.store(v); }).launch_on(target, z.partition<64, 4>(), s);
  int64_t bad = 0;
  for (int64_t i = 0; i < 58; ++i)
    for (int64_t j = 0; j < 10; ++j) bad += z(i, j).bits != s.bits;
  CHECK(bad == 0);
}

TESSERA_TARGET_TEST_CASE("1-D add over ragged lengths, f32", "[elementwise]", body_1)
// On the GPU, a kernel whose threads never exchange data runs each program with large tiles as
// several CTAs (a bf16 add of 8192-element tiles: 4 CTAs of 128 threads; a 64 x 256 f32 tile: 16).
// Every element (r, c) of tile (i, j) of a rows x cols f32 tensor in TR x TC tiles becomes x * 2 +
// its index in the tile + 1000 i + 7 j + 100 * programs along dim 0 + programs along dim 1.
template <int TR, int TC>
static void check_program_ids(Target target, const char* name, int64_t rows, int64_t cols) {
  auto ids = kernel(name, [](auto out, auto x) {
    auto inside = cast<DType::f32>(reshape<TR, TC>(iota<TR * TC>()));
    auto program = cast<DType::f32>(program_id<0>() * c<1000> + program_id<1>() * c<7> +
                                    num_programs<0>() * c<100> + num_programs<1>());
    return out.store(x.load_like(out) * c<2.0> + inside + program);
  });
  auto x = random_tensor<float, 2>({rows, cols}, -1, 1, 43);
  Tensor<float, 2> z({rows, cols});
  ids.launch_on(target, z.template partition<TR, TC>(), x);
  const int64_t grid0 = (rows + TR - 1) / TR, grid1 = (cols + TC - 1) / TC;
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < cols; ++col) {
      float want = x(r, col) * 2.0f + static_cast<float>((r % TR) * TC + col % TC) +
                   static_cast<float>((r / TR) * 1000 + (col / TC) * 7 + grid0 * 100 + grid1);
      bad += z(r, col) != want;
    }
  INFO(name);
  CHECK(bad == 0);
}

// Each program must still see its own ids, its whole (ragged) tile and the grid's program count.
static void body_split(Target target) {
  auto add = kernel("split_add", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });
  for (int64_t n : {8191, 3 * 8192 + 5, 100003}) {
    auto x = random_tensor<bfloat16, 1>({n}, -50, 50, 41);
    auto y = random_tensor<bfloat16, 1>({n}, -50, 50, 42);
    Tensor<bfloat16, 1> z({n});
    add.launch_on(target, z.partition<8192>(), x, y);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += f(z(i)) != f(static_cast<bfloat16>(f(x(i)) + f(y(i))));
    INFO("n = " << n);
    CHECK(bad == 0);
  }
  // 64 x 256 f32 tiles over 150 x 300: a 3 x 2 grid, ragged in both dimensions.
  check_program_ids<64, 256>(target, "split_ids", 150, 300);
}
TESSERA_TARGET_TEST_CASE("programs split over several CTAs see their own ids and whole tiles", "[elementwise]",
                         body_split)
// Programs of fewer than 256 threads that exchange no data share a CTA on the GPU (up to G = 256 / T
// programs per CTA, fewer for a grid of fewer programs along x; ThreadMapping.h): each must still
// see its own ids and tile, and the programs past the end of the grid must store nothing.
static void body_shared_ctas(Target target) {
  // 1 x 1024 bf16 rows: one warp per program, up to eight per CTA; 1, 7, 1001 and 4096 rows.
  for (int64_t rows : {1, 7, 1001, 4096}) {
    auto x = random_tensor<bfloat16, 2>({rows, 1024}, -1, 1, 51);
    Tensor<float, 2> s({rows, 1});
    for (int64_t r = 0; r < rows; ++r) s(r, 0) = -12345.0f;
    row_kernels::row_sum_of<1024>().launch_on(target, s.partition<1, 1>(), x);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double want = 0;
      for (int64_t col = 0; col < 1024; ++col) want += f(x(r, col));
      bad += !close(s(r, 0), static_cast<float>(want), 1e-5f, 1e-4f);
    }
    INFO("rows = " << rows);
    CHECK(bad == 0);
  }
  // 1 x 1024 f32 tiles over 3 x 5000: a 3 x 5 grid, ragged along dim 1. Along grid x, one CTA of
  // four programs holds the three, and one program past the end.
  check_program_ids<1, 1024>(target, "shared_cta_ids", 3, 5000);
}
TESSERA_TARGET_TEST_CASE("programs sharing a CTA see their own ids and tiles; those past the end store nothing",
                         "[elementwise][rows]", body_shared_ctas)
static void body_2(Target target) {
  body_2_t<half>(target);
  body_2_t<bfloat16>(target);
  body_2_t<int32_t>(target);
}
TESSERA_TARGET_TEST_CASE("1-D add for every dtype", "[elementwise][dtype]", body_2)
TESSERA_TARGET_TEST_CASE("2-D add, 2000 x 1000, divisible and ragged tiles", "[elementwise]", body_3)
TESSERA_TARGET_TEST_CASE("ragged programs of an elementwise kernel, several chunks per thread", "[elementwise]",
                         body_fused_edge)
TESSERA_TARGET_TEST_CASE("unary math, f32", "[math]", body_4)
TESSERA_TARGET_TEST_CASE("exp over its whole range: in-range threads and the rest", "[math]", body_exp_range)
TESSERA_TARGET_TEST_CASE("approximate math: fast_exp, fast_sqrt, fast_tanh, fast_div", "[math]", body_fast_math)

// The elements of `y` that are not num(r, c) / d(r, 0) (IEEE f32 division on the host) bit for bit
// (any NaN matches any NaN); the first five are reported.
static int64_t quotients_differing(const Tensor<float, 2>& num, const Tensor<float, 2>& d, const Tensor<float, 2>& y) {
  int64_t bad = 0;
  for (int64_t r = 0; r < y.shape()[0]; ++r)
    for (int64_t c = 0; c < y.shape()[1]; ++c) {
      const float want = num(r, c) / d(r, 0), got = y(r, c);
      const bool same = std::memcmp(&want, &got, sizeof want) == 0 || (std::isnan(want) && std::isnan(got));
      if (!same && bad++ < 5) WARN("row " << r << " col " << c << ": " << got << " want " << want);
    }
  return bad;
}

// Many elements divided by one value (a row by its divisor): on the GPU the divisions of a thread
// share one reciprocal and are refined to the correctly rounded quotient, with the plain division
// as a fallback out of range (tessera-share-divisors). The results must be IEEE division's,
// bit for bit: normal values, signed zeros, numerators so small that the quotient leaves the
// refinement's range, and divisors out of it (huge, subnormal, zero, negative).
static void body_shared_divisor(Target target) {
  const int64_t rows = 8, cols = 256;
  auto x = random_tensor<float, 2>({rows, cols}, -100, 100, 50);
  Tensor<float, 2> d({rows, 1}), y({rows, cols});
  const float divisors[rows] = {3.7f, 1.0f / 3, 1e30f, 1e-40f, 0.0f, -1.5f, 8191.25f, 7e-8f};
  for (int64_t r = 0; r < rows; ++r) d(r, 0) = divisors[r];
  x(1, 0) = 0.0f;
  x(1, 1) = -0.0f;
  x(1, 9) = 1e-35f;   // |numerator| < 2^-52: this chunk takes the plain divisions
  x(1, 17) = -3e38f;
  x(5, 3) = 1e-30f;
  x(6, 100) = 2e-38f;
  for (int64_t c = 0; c < cols; c += 3) x(7, c) = x(7, c) * 1e-20f;
  kernel("shared_divisor", [](auto o, auto a, auto div) {
    return o.store(load<1, 256>(a, program_id<0>(), c<0>) / load<1, 1>(div, program_id<0>(), c<0>));
  }).launch_on(target, y.partition<1, 256>(), x, d);
  CHECK(quotients_differing(x, d, y) == 0);
}
TESSERA_TARGET_TEST_CASE("division of many values by one divisor is IEEE division, bit for bit", "[math]", body_shared_divisor)

// exps divided by one value (a softmax with a given divisor): on the GPU the groups of exps that
// passed their range test take the shared reciprocal without a test of their own (see
// lowerDivisionOfTestedExps). Bit for bit the IEEE quotient of the same kernel's exps, computed on
// the host: rows of ordinary values, of a wide range (groups whose exps underflow take the plain
// divisions), with -inf, and divisors in and out of the shared reciprocal's range.
static void body_exp_division(Target target) {
  const int64_t rows = 8, cols = 256;
  auto x = random_tensor<float, 2>({rows, cols}, -5, 5, 51);
  for (int64_t c = 0; c < cols; ++c) x(1, c) = -0.4f * static_cast<float>(c);  // down to -102
  x(2, 7) = -std::numeric_limits<float>::infinity();
  for (int64_t c = 0; c < cols; c += 5) x(3, c) = x(3, c) - 68.5f;  // near the test's bound
  Tensor<float, 2> d({rows, 1}), e({rows, cols}), y({rows, cols});
  const float divisors[rows] = {3.7f, 8191.25f, 1e-30f, 0.37f, 0.0f, -2.5f, 1e30f, 7e-8f};
  for (int64_t r = 0; r < rows; ++r) d(r, 0) = divisors[r];
  kernel("exp_only", [](auto o, auto a) {
    auto t = a.load_like(o);
    return o.store(exp(t - max<1>(t)));
  }).launch_on(target, e.partition<1, 256>(), x);
  kernel("exp_div_shared", [](auto o, auto a, auto div) {
    auto t = a.load_like(o);
    return o.store(exp(t - max<1>(t)) / load<1, 1>(div, program_id<0>(), c<0>));
  }).launch_on(target, y.partition<1, 256>(), x, d);
  CHECK(quotients_differing(e, d, y) == 0);
}
TESSERA_TARGET_TEST_CASE("exps divided by one value are IEEE quotients, bit for bit", "[math]", body_exp_division)

// The max and min of a widened 16-bit row: on the GPU each thread combines its elements two per
// instruction before widening (max.NaN.bf16x2, combineInPairs in LowerReduce.cpp). The same bits
// as the host's IEEE maximum and minimum of the widened values: +0 above -0, a NaN anywhere gives
// NaN, infinities.
template <class T>
static void widened_max_min_rows(Target target) {
  const int64_t rows = 7, cols = 8192;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto x = random_tensor<T, 2>({rows, cols}, -3, 3, 52);
  for (int64_t c = 0; c < cols; ++c) {
    x(1, c) = T(-0.0f);
    x(2, c) = T(0.0f);
  }
  x(1, 4097) = T(0.0f);
  x(2, 6) = T(-0.0f);
  x(3, 5000) = T(nan);
  x(4, 77) = T(inf);
  x(4, 8000) = T(-inf);
  for (int64_t c = 0; c < cols; ++c) x(5, c) = T(-inf);
  x(6, 0) = T(-7.0f);
  x(6, cols - 1) = T(7.0f);
  Tensor<float, 2> hi({rows, 1}), lo({rows, 1});
  kernel("widened_max_min", [](auto omax, auto omin, auto a) {
    auto t = cast<DType::f32>(load<1, 8192>(a, program_id<0>(), c<0>));
    return seq(omax.store(max<1>(t)), omin.store(min<1>(t)));
  }).launch_on(target, hi.partition<1, 1>(), lo.partition<1, 1>(), x);
  auto same = [](float got, float want) {
    return std::memcmp(&got, &want, sizeof got) == 0 || (std::isnan(got) && std::isnan(want));
  };
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float want_hi = f(x(r, 0)), want_lo = want_hi;
    for (int64_t c = 1; c < cols; ++c) {
      const float v = f(x(r, c));
      if (std::isnan(v) || std::isnan(want_hi)) {
        want_hi = want_lo = nan;
        continue;
      }
      if (v > want_hi || (v == 0 && want_hi == 0 && !std::signbit(v))) want_hi = v;
      if (v < want_lo || (v == 0 && want_lo == 0 && std::signbit(v))) want_lo = v;
    }
    if (!same(hi(r, 0), want_hi) || !same(lo(r, 0), want_lo)) {
      ++bad;
      WARN("row " << r << ": max " << hi(r, 0) << " want " << want_hi << ", min " << lo(r, 0) << " want " << want_lo);
    }
  }
  CHECK(bad == 0);
}
static void body_widened_max_min(Target target) {
  widened_max_min_rows<bfloat16>(target);
  widened_max_min_rows<half>(target);
}
TESSERA_TARGET_TEST_CASE("max and min of widened 16-bit rows: signed zeros, NaN, infinities", "[reduce][dtype]",
                         body_widened_max_min)

// An accurate softmax over 8192-wide bf16 rows (the benchmarks' kernel, row_kernels.h) and f16
// rows. On the GPU each thread's exps take the fast path when its least argument, fl(x_min - max)
// from the narrow minimum, is above -69 (lowerExpWithRangeTest). Rows whose exps are subnormal
// (x = max - 88: the fast path would flush them to zero, the bf16 results are about 6e-39), a ramp
// down to -100 (threads on both paths), values around the bound, -inf, +inf and NaN (all NaN), and
// equal values.
template <class T>
static void softmax_special_rows(Target target) {
  const int64_t rows = 8, cols = 8192;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  auto x = random_tensor<T, 2>({rows, cols}, -3, 3, 53);
  for (int64_t c = 0; c < cols; ++c) {
    x(1, c) = T(c == 0 ? 0.0f : -88.0f);
    x(2, c) = T(-100.0f * static_cast<float>(c) / cols);
    x(3, c) = T(c % 64 == 5 ? -69.5f : (c % 64 == 9 ? -68.5f : 0.0f));
    x(7, c) = T(1.5f);
  }
  for (int64_t c = 0; c < cols; c += 3) x(4, c) = T(-inf);
  x(5, 123) = T(inf);
  x(6, 4000) = T(nan);
  Tensor<T, 2> y({rows, cols});
  if constexpr (std::is_same_v<T, bfloat16>) {
    row_kernels::softmax().launch_on(target, y.template partition<1, 8192>(), x);
  } else {
    kernel("softmax_f16", [](auto o, auto a) {
      auto t = cast<DType::f32>(a.load_like(o));
      auto e = exp(t - max<1>(t));
      return o.store(cast<DType::f16>(e / sum<1>(e)));
    }).launch_on(target, y.template partition<1, 8192>(), x);
  }
  // Half an ulp of the result type, and its subnormal spacing.
  const float rel = std::is_same_v<T, bfloat16> ? 8e-3f : 1e-3f, tiny = std::is_same_v<T, bfloat16> ? 1e-40f : 1e-7f;
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r) {
    float m = f(x(r, 0));
    for (int64_t c = 1; c < cols; ++c)
      m = std::isnan(m) || std::isnan(f(x(r, c))) ? nan : std::max(m, f(x(r, c)));
    std::vector<double> e(cols);
    double sum = 0;
    for (int64_t c = 0; c < cols; ++c) sum += e[c] = std::exp(static_cast<double>(f(x(r, c)) - m));
    for (int64_t c = 0; c < cols; ++c) {
      const float want = static_cast<float>(e[c] / sum), got = f(y(r, c));
      const bool ok = std::isnan(want) ? std::isnan(got) : close(got, want, rel, tiny);
      if (!ok && bad++ < 5) WARN("row " << r << " col " << c << ": " << got << " want " << want);
    }
  }
  CHECK(bad == 0);
}
static void body_softmax_special_rows(Target target) {
  softmax_special_rows<bfloat16>(target);
  softmax_special_rows<half>(target);
}
TESSERA_TARGET_TEST_CASE("softmax over bf16 and f16 rows of subnormal exps, infinities, NaN and equal values", "[math][rows]",
                         body_softmax_special_rows)
// Every bf16 bit pattern copied through a ragged tile (the masked path: a phi of the loaded value
// and zero), bit for bit but for NaN payloads: the x86 back end holds such a bf16 in an f32
// register and narrows it back (a signaling NaN comes back quiet), which AVX512-BF16's
// instruction did flushing subnormals to zero (found by fuzz_kernels seed 10434 on a host that
// has it).
static void body_bf16_copy_every_pattern(Target target) {
  Tensor<bfloat16, 2> x({656, 100}), y({656, 100});  // rows of 100 in tiles of 128: all ragged
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = bfloat16::from_bits(static_cast<std::uint16_t>(i));
  kernel("bf16_copy_patterns", [](auto o, auto a) { return o.store(a.load_like(o)); })
      .launch_on(target, y.partition<8, 128>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const bfloat16 want = x.data()[i], got = y.data()[i];
    bad += std::isnan(float(want)) ? !std::isnan(float(got)) : got.bits != want.bits;
  }
  CHECK(bad == 0);
}

// out.load() reads the tile as the statements before it left it: here the second statement reads
// what the first stored, also where the first read it too (one node in the kernel's text; found
// by fuzz_kernels seed 9383: the compiler reused the first read).
static void body_own_after_store(Target target) {
  const int64_t n = 300;
  auto x = exec_test::random_tensor<float, 1>({n}, -4, 4, 31);
  Tensor<float, 1> first({n}), second({n});
  for (int64_t i = 0; i < n; ++i) first(i) = x(i);
  kernel("own_after_store", [](auto o, auto o2) {
    return seq(o.store(abs(o.load())), o2.store(o.load() * c<2>));
  }).launch_on(target, first.partition<128>(), second.partition<128>());
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += first(i) != std::abs(x(i)) || second(i) != 2 * std::abs(x(i));
  CHECK(bad == 0);
}
TESSERA_TARGET_TEST_CASE("bf16 copied through a ragged tile keeps every bit pattern", "[dtype]",
                         body_bf16_copy_every_pattern)
TESSERA_TARGET_TEST_CASE("out.load() after a store reads what the statements before stored", "[elementwise]",
                         body_own_after_store)
TESSERA_TARGET_TEST_CASE("binary ops, comparisons, select and logic", "[elementwise]", body_5)
TESSERA_TARGET_TEST_CASE("casts between dtypes", "[cast][dtype]", body_6)
TESSERA_TARGET_TEST_CASE("bf16 widened to f32 exactly, every bit pattern", "[cast][dtype]", body_bf16_widening)
TESSERA_TARGET_TEST_CASE("broadcasting rows, columns, scalars and scalar parameters", "[broadcast]", body_7)
static void body_8(Target target) {
  body_8_t<float>(target);
  body_8_t<half>(target);
  body_8_t<bfloat16>(target);
}
TESSERA_TARGET_TEST_CASE("row reductions sum, max, min accumulate in f32", "[reduce][dtype]", body_8)

// The benchmarks' RMSNorm and LayerNorm (row_kernels.h: 1 x 8192 tiles, one row per program) on
// rows of 8192 (every program in the interior copy of the versioned kernel) and of 8000 (every
// tile ragged: the edge copy, which spills to local memory where the registers are capped at what
// the interior needs, see compiler/register_cap.h). The tile semantics pads the ragged part with
// zeros and the kernels divide by 8192: the reference does the same.
static void body_norm_rows(Target target) {
  for (int64_t cols : {int64_t{8192}, int64_t{8000}}) {
    const int64_t rows = 6;
    auto x = random_tensor<bfloat16, 2>({rows, cols}, -2, 2, 40);
    auto w = random_tensor<bfloat16, 1>({8192}, -1, 1, 41);
    auto bias = random_tensor<bfloat16, 1>({8192}, -1, 1, 42);
    Tensor<bfloat16, 2> y({rows, cols}), z({rows, cols});
    row_kernels::rmsnorm().launch_on(target, y.partition<1, 8192>(), x, w);
    row_kernels::layernorm().launch_on(target, z.partition<1, 8192>(), x, w, bias);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double sq = 0, sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        sq += double(f(x(r, c))) * f(x(r, c));
        sum += f(x(r, c));
      }
      const double inv = 1 / std::sqrt(sq / 8192 + 1e-6), mean = sum / 8192;
      double var = (8192 - cols) * mean * mean;  // the padding's (0 - mean)^2
      for (int64_t c = 0; c < cols; ++c) var += (f(x(r, c)) - mean) * (f(x(r, c)) - mean);
      const double inv_sd = 1 / std::sqrt(var / 8192 + 1e-5);
      for (int64_t c = 0; c < cols; ++c) {
        const double rms = f(x(r, c)) * inv * f(w(c));
        const double ln = (f(x(r, c)) - mean) * inv_sd * f(w(c)) + f(bias(c));
        bad += !close(f(y(r, c)), static_cast<float>(rms), 8e-3f, 1e-3f);
        bad += !close(f(z(r, c)), static_cast<float>(ln), 8e-3f, 1e-2f);
      }
    }
    INFO("columns " << cols);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("RMSNorm and LayerNorm over whole and ragged 8192-wide rows", "[reduce][rows]", body_norm_rows)

// The elements of the bf16 matrix `y` that are not close to the reference: `row_want(r)` computes a
// row's statistics and returns the reference of its elements, a function of the column.
template <class RowWant>
int64_t row_mismatches(const Tensor<bfloat16, 2>& y, RowWant row_want, float rel, float abs_tol) {
  int64_t bad = 0;
  for (int64_t r = 0; r < y.shape()[0]; ++r) {
    auto want = row_want(r);
    for (int64_t c = 0; c < y.shape()[1]; ++c) bad += !close(f(y(r, c)), static_cast<float>(want(c)), rel, abs_tol);
  }
  return bad;
}

// RMSNorm over rows of 32768 bf16 (row_kernels::rmsnorm_of<32768>, one row per program). On the
// GPU the launcher keeps the variant that holds the row in bf16 across the reduction and widens it
// again after it (tile-rewiden-after-reduce; two programs of 512 threads per SM): rows of 32768
// run its interior copy, rows of 32000 its edge copy.
static void body_norm_wide_rows(Target target) {
  for (int64_t cols : {int64_t{32768}, int64_t{32000}}) {
    const int64_t rows = 3;
    auto x = random_tensor<bfloat16, 2>({rows, cols}, -2, 2, 43);
    auto w = random_tensor<bfloat16, 1>({32768}, -1, 1, 44);
    Tensor<bfloat16, 2> y({rows, cols});
    row_kernels::rmsnorm_of<32768>().launch_on(target, y.partition<1, 32768>(), x, w);
    const int64_t bad = row_mismatches(
        y,
        [&](int64_t r) {
          double sq = 0;
          for (int64_t c = 0; c < cols; ++c) sq += double(f(x(r, c))) * f(x(r, c));
          const double inv = 1 / std::sqrt(sq / 32768 + 1e-6);
          return [&, r, inv](int64_t c) { return f(x(r, c)) * inv * f(w(c)); };
        },
        8e-3f, 1e-3f);
    INFO("columns " << cols);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("RMSNorm over whole and ragged 32768-wide rows", "[reduce][rows]", body_norm_wide_rows)

// Two bf16 rows through two reductions, both used again after them (two_rows_kernel.h): on the
// GPU the launcher keeps the variant that widens them again after the first reduction each feeds
// (tile-rewiden-after-reduce, 4 programs per SM instead of 3, see test_occupancy.cpp). Rows of
// 8192 (interior copy) and 8000 (edge copy, padded with zeros).
static void body_two_rows(Target target) {
  for (int64_t cols : {int64_t{8192}, int64_t{8000}}) {
    const int64_t rows = 5;
    auto p = random_tensor<bfloat16, 2>({rows, cols}, -1, 1, 45);
    auto q = random_tensor<bfloat16, 2>({rows, cols}, -1, 1, 46);
    Tensor<bfloat16, 2> y({rows, cols});
    test_kernels::two_rows<DType::bf16>("occupancy_two_bf16_rows").launch_on(target, y.partition<1, 8192>(), p, q);
    const int64_t bad = row_mismatches(
        y,
        [&](int64_t r) {
          double dot = 0, mx = cols < 8192 ? 0 : -1e30;  // the padding's zeros take part in the max
          for (int64_t c = 0; c < cols; ++c) {
            dot += double(f(p(r, c))) * f(q(r, c));
            mx = std::max(mx, double(f(q(r, c))));
          }
          return [&, r, dot, mx](int64_t c) { return f(p(r, c)) * dot + f(q(r, c)) * mx; };
        },
        8e-3f, 1e-2f);
    INFO("columns " << cols);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("two bf16 rows through two reductions, used again after both", "[reduce][rows]", body_two_rows)
TESSERA_TARGET_TEST_CASE("iota, program ids, reshape and transpose", "[shape]", body_9)
TESSERA_TARGET_TEST_CASE("matrix multiply with a K loop and mma", "[mma][loop]", body_10)
TESSERA_TARGET_TEST_CASE("a loop carrying two tiles: online max and sum of exponentials", "[loop]", body_11)
TESSERA_TARGET_TEST_CASE("loops over growing tile indices: versioned and ragged programs", "[loop][mma]",
                         body_loop_versions)
TESSERA_TARGET_TEST_CASE("scalar parameters: scale and add", "[scalar]", body_12)
TESSERA_TARGET_TEST_CASE("i32 arithmetic and i1 tensors in and out", "[elementwise][dtype]", body_ints_bools)
TESSERA_TARGET_TEST_CASE("i1 tiles compare as C++ bools", "[elementwise][dtype]", body_bool_compare)
TESSERA_TARGET_TEST_CASE("a bf16 scalar parameter", "[scalar][dtype]", body_bf16_scalar)
TESSERA_TARGET_TEST_CASE("f16 and bf16 math, computed in f32", "[math][dtype]", body_half_math)

// On the CPU target one thread holds a whole tile: 1024 x 1024 f32 values (4 MiB each) and the
// 4 MiB scratch of a transpose live on the heap, not on a worker thread's stack.
TEST_CASE("huge tiles on the CPU target", "[cpu][shape][cpu-only]") {
  auto x = random_tensor<float, 2>({2048, 1536}, -1, 1, 31);
  Tensor<float, 2> y({2048, 1536}), t({1536, 2048});
  kernel("huge_elementwise", [](auto o, auto a) {
    auto v = a.load_like(o);
    return o.store(v * v + exp(v) - v);
  }).launch_on(Target::cpu, y.partition<1024, 1024>(), x);
  kernel("huge_transpose", [](auto o, auto a) {
    return o.store(transpose(load<1024, 1024>(a, program_id<1>(), program_id<0>())));
  }).launch_on(Target::cpu, t.partition<1024, 1024>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < 2048; i += 7)
    for (int64_t j = 0; j < 1536; j += 5) {
      float v = x(i, j);
      bad += !close(y(i, j), v * v + std::exp(v) - v, 1e-6f);
      bad += t(j, i) != v;
    }
  CHECK(bad == 0);
}
