// elementwise.cpp: memory-bound elementwise kernels over >= 2 GiB arrays (issue 3 family 1):
// add (f32, bf16), scale-and-add (bf16), a fused chain (bf16). Written as a user would.
#include <cmath>

#include "common.h"

using namespace tessera;

namespace {

// Elements per program: 8 KiB of each input per program, whatever the dtype.
template <class T>
constexpr int kTile = 8192 / sizeof(T);

template <class T>
float f(T v) {
  return static_cast<float>(v);
}

template <class T, class K, class Ref>
void run_case(const char* name, const K& k, int64_t n, int arrays_in, Ref ref, const char* baseline = "") {
  Tensor<T, 1> x({n}), y({n}), z({n});
  bench::fill_device(x, 1);
  bench::fill_device(y, 2);
  auto launch = [&] { return bench::timed(k, z.template partition<kTile<T>>(), x, y); };
  launch();
  // Validate a sample of the output against the host reference (downloads once).
  const T* px = x.data();
  const T* py = y.data();
  const T* pz = z.data();
  double max_err = 0;
  for (int64_t i = 0; i < n; i += 4099) {
    float want = f(static_cast<T>(ref(f(px[i]), f(py[i]))));
    max_err = std::max<double>(max_err, std::abs(f(pz[i]) - want) / (1.0 + std::abs(want)));
  }
  if (max_err > 1e-2) std::printf("{\"error\": \"%s: wrong result, max relative error %g\"}\n", name, max_err);
  double ms = bench::median_ms(launch);
  bench::report("elementwise", name, bench::dtype_str(dtype_v<T>), double(arrays_in + 1) * n * sizeof(T), ms, max_err,
                baseline);
}

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  auto add = kernel("add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); });
  auto axpy = kernel("scale_add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) * c<2.5> + b.load_like(o)); });
  auto chain = kernel("fused_chain", [](auto o, auto a, auto b) {
    auto p = cast<DType::f32>(a.load_like(o));
    auto q = cast<DType::f32>(b.load_like(o));
    auto r = tanh(p * q + c<0.5>) * p + exp(q * c<-0.5>) - sqrt(abs(p) + c<1.0>);
    return o.store(cast<dtype_v<bfloat16>>(r));
  });
  // The same chain with the explicit approximations (fast_tanh is about 2^-11 relative: fine for
  // a bf16 result).
  auto chain_fast = kernel("fused_chain_fast", [](auto o, auto a, auto b) {
    auto p = cast<DType::f32>(a.load_like(o));
    auto q = cast<DType::f32>(b.load_like(o));
    auto r = fast_tanh(p * q + c<0.5>) * p + fast_exp(q * c<-0.5>) - fast_sqrt(abs(p) + c<1.0>);
    return o.store(cast<dtype_v<bfloat16>>(r));
  });
  const int64_t n32 = int64_t(1) << 29, n16 = int64_t(1) << 30;  // 2 GiB per array
  run_case<float>("add", add, n32, 2, [](float p, float q) { return p + q; });
  run_case<bfloat16>("add", add, n16, 2, [](float p, float q) { return p + q; });
  run_case<bfloat16>("scale_add", axpy, n16, 2, [](float p, float q) { return p * 2.5f + q; });
  run_case<bfloat16>("fused_chain", chain, n16, 2,
                     [](float p, float q) { return std::tanh(p * q + 0.5f) * p + std::exp(q * -0.5f) - std::sqrt(std::abs(p) + 1.0f); });
  run_case<bfloat16>("fused_chain_fast", chain_fast, n16, 2,
                     [](float p, float q) { return std::tanh(p * q + 0.5f) * p + std::exp(q * -0.5f) - std::sqrt(std::abs(p) + 1.0f); },
                     "fused_chain");
  return 0;
}
