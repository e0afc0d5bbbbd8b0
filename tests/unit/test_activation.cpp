// test_activation.cpp: sigmoid, silu and gelu_tanh (tessera/expr/activation.h) on the CPU target
// and the GPU, against double-precision host references.
//
// f32 inputs span [-30, 30] (every region: tiny, the bend, the saturated tails) plus signed zeros,
// arguments whose exponential overflows or underflows (|x| >= 100) and NaN. Tolerance: 2e-6
// relative (the GPU's exp is within 4e-7 and div.full.f32 within 2 ulp; the CPU is exact) plus
// what the f32 rounding of the exponent's argument u costs (|u| 2^-21), and 1e-37 absolute for
// results that underflow. bf16 inputs and outputs: within one bf16 ulp of the
// rounded reference. gelu_tanh is also checked against the tanh form it replaces, written out in
// the same kernel language.
#include "execution_helpers.h"

#include <cmath>
#include <functional>

using namespace tessera;

namespace {

// Each function is f(x) = g(x) / (1 + e^u(x)); u's rounding to f32 alone moves e^u by |u| 2^-24
// relative, so the tolerance grows with |u| where e^u dominates.
double sigmoid_ref(double x) { return 1 / (1 + std::exp(-x)); }
double silu_ref(double x) { return x / (1 + std::exp(-x)); }
double minus_x(double x) { return -x; }
double gelu_exponent(double x) { return -2 * 0.7978845608028654 * (x + 0.044715 * x * x * x); }
// 0.5 x (1 + tanh z) as x / (1 + e^-2z): in the tanh form 1 + tanh z rounds to 0 in double below
// z = -19, where GELU is still a normal float.
double gelu_tanh_ref(double x) {
  return x / (1 + std::exp(gelu_exponent(x)));
}

Tensor<float, 1> inputs() {
  auto x = exec_test::random_tensor<float, 1>({1500}, -30.0f, 30.0f, 61);
  const float specials[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-3f, -1e-3f, 100.0f, -100.0f, 1e4f, -1e4f,
                            3e38f, -3e38f, std::nanf("")};
  for (size_t i = 0; i < std::size(specials); ++i) x(static_cast<int64_t>(i) * 97) = specials[i];
  return x;
}

// The elements of `got` farther from `ref` than (2e-6 + |u| 2^-21) relative + 1e-37, u being the
// exponent's argument (NaN matches NaN); the first five are reported.
int64_t misses(const char* name, const Tensor<float, 1>& x, const Tensor<float, 1>& got,
               const std::function<double(double)>& ref, double (*exponent)(double)) {
  int64_t bad = 0;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double want = ref(x(i));
    const double rel = 2e-6 + std::abs(exponent(x(i))) * 0x1p-21;
    const bool ok = std::isnan(want) ? std::isnan(got(i)) : std::abs(got(i) - want) <= rel * std::abs(want) + 1e-37;
    if (!ok && bad++ < 5) WARN(name << "(" << x(i) << ") = " << got(i) << ", expected " << want);
  }
  return bad;
}

void f32_results(Target target) {
  const Tensor<float, 1> x = inputs();
  Tensor<float, 1> y({x.numel()});
  kernel("act_sigmoid", [](auto o, auto a) { return o.store(sigmoid(a.load_like(o))); })
      .launch_on(target, y.partition<256>(), x);
  CHECK(misses("sigmoid", x, y, sigmoid_ref, minus_x) == 0);
  kernel("act_silu", [](auto o, auto a) { return o.store(silu(a.load_like(o))); })
      .launch_on(target, y.partition<256>(), x);
  CHECK(misses("silu", x, y, silu_ref, minus_x) == 0);
  kernel("act_gelu_tanh", [](auto o, auto a) { return o.store(gelu_tanh(a.load_like(o))); })
      .launch_on(target, y.partition<256>(), x);
  CHECK(misses("gelu_tanh", x, y, gelu_tanh_ref, gelu_exponent) == 0);
}

// bf16 in and out, the activation computed in bf16 arithmetic as written: each result within one
// bf16 ulp (2^-8 relative) of the reference rounded to bf16, or 1e-6 absolute.
void bf16_results(Target target) {
  auto x = exec_test::random_tensor<bfloat16, 2>({33, 300}, -8.0f, 8.0f, 62);
  Tensor<bfloat16, 2> y({33, 300});
  kernel("act_gelu_tanh_bf16", [](auto o, auto a) {
    return o.store(cast<DType::bf16>(gelu_tanh(cast<DType::f32>(a.load_like(o)))));
  }).launch_on(target, y.partition<8, 128>(), x);
  int64_t bad = 0;
  for (int64_t r = 0; r < 33; ++r)
    for (int64_t c = 0; c < 300; ++c) {
      const double want = static_cast<float>(bfloat16(static_cast<float>(gelu_tanh_ref(static_cast<float>(x(r, c))))));
      const double got = static_cast<float>(y(r, c));
      bad += std::abs(got - want) > std::abs(want) / 256 + 1e-6;
    }
  CHECK(bad == 0);
}

// gelu_tanh equals the tanh form written out where that form is accurate (x >= -3: no
// cancellation in 1 + tanh).
void equals_the_tanh_form(Target target) {
  auto x = exec_test::random_tensor<float, 1>({1000}, -3.0f, 6.0f, 63);
  Tensor<float, 1> fused({1000}), written({1000});
  kernel("act_gelu_tanh_fused", [](auto o, auto a) { return o.store(gelu_tanh(a.load_like(o))); })
      .launch_on(target, fused.partition<128>(), x);
  kernel("act_gelu_tanh_written", [](auto o, auto a) {
    auto v = a.load_like(o);
    return o.store(c<0.5> * v * (c<1.0> + tanh(c<0.7978845608028654> * (v + c<0.044715> * v * v * v))));
  }).launch_on(target, written.partition<128>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < 1000; ++i) bad += std::abs(fused(i) - written(i)) > 1e-5f * std::abs(written(i)) + 1e-6f;
  CHECK(bad == 0);
}

}  // namespace

TESSERA_TARGET_TEST_CASE("activations: sigmoid, silu, gelu_tanh in f32 over every region", "[activation]",
                         f32_results)
TESSERA_TARGET_TEST_CASE("activations: gelu_tanh of bf16 tiles within one bf16 ulp", "[activation]", bf16_results)
TESSERA_TARGET_TEST_CASE("activations: gelu_tanh equals the tanh form it replaces", "[activation]",
                         equals_the_tanh_form)
