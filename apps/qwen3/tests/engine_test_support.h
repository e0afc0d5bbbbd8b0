// engine_test_support.h: helpers of the engine's tests (test_engine_*.cpp).
//
//  - QWEN3_TARGET_TEST_CASE(name, tags, fn): registers fn(tessera::Target) for the CPU target
//    ([cpu]) and, tagged [gpu], for the GPU's own target (skipped with a warning when there is no
//    GPU), as tessera's own unit tests do.
//  - random_bf16 / random_f32: tessera tensors of uniform random values, the same for one seed.
//  - as_double: a tensor's elements widened to double (waits for the work writing it).
//  - max_abs: the largest |value| of a vector.
#pragma once

#include <tessera/tessera.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#define QWEN3_TARGET_TEST_CASE(name, tags, fn)                         \
  TEST_CASE(name " (cpu)", "[cpu]" tags) { fn(tessera::Target::cpu); } \
  TEST_CASE(name " (gpu)", "[gpu]" tags) {                             \
    if (!tessera::gpu_available()) {                                   \
      WARN("no GPU on this machine: skipped");                         \
      return;                                                          \
    }                                                                  \
    fn(tessera::default_target());                                     \
  }

namespace qwen3::test {

template <int R>
tessera::Tensor<tessera::bfloat16, R> random_bf16(std::array<std::int64_t, R> shape, float lo, float hi,
                                                  unsigned seed) {
  tessera::Tensor<tessera::bfloat16, R> t(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  tessera::bfloat16* p = t.data();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = tessera::bfloat16(dist(rng));
  return t;
}

template <int R>
tessera::Tensor<float, R> random_f32(std::array<std::int64_t, R> shape, float lo, float hi, unsigned seed) {
  tessera::Tensor<float, R> t(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  float* p = t.data();
  for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = dist(rng);
  return t;
}

template <class T, int R>
std::vector<double> as_double(const tessera::Tensor<T, R>& t) {
  std::vector<double> out;
  for (const T& v : t.to_vector()) out.push_back(static_cast<double>(static_cast<float>(v)));
  return out;
}

inline double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

inline tessera::LaunchOptions on(tessera::Target target) {
  tessera::LaunchOptions o;
  o.target = target;
  return o;
}

// The same with `threads` per program (CompilerHints::threads), as the engine launches some
// products (kernels/tile_common.h).
inline tessera::LaunchOptions on(tessera::Target target, int threads) {
  tessera::LaunchOptions o = on(target);
  o.hints.threads = threads;
  return o;
}

}  // namespace qwen3::test
