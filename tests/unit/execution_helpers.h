// execution_helpers.h: helpers of the unit tests that run on both targets (test_kernels,
// test_views, test_async, test_graph, test_unsafe, test_device_functions, test_interop,
// test_threads, test_static_shapes, test_whole_tiles; test_compile_gpu and test_occupancy for
// bounds_tested).
//
//  - TESSERA_TARGET_TEST_CASE(name, tags, fn): registers fn(Target) for the CPU target ([cpu]) and,
//    tagged [gpu], for the GPU (skipped with a warning when there is none).
//  - Gate (gate.h): work that completes when the test opens it, for [cpu] tests (on a GPU target
//    the launching thread would wait instead).
//  - toolchain_present(): whether NVRTC and nvJitLink load (else a warning: the test is skipped).
//  - random_tensor<T, R>(shape, lo, hi, seed): uniform random values, the same for the same seed.
//  - slow_copy(): out = x after `n` iterations of acc = acc/2 + x/2; keeps a launch in flight for
//    a while on either target (GPU tests that need it in flight check ready() first).
#pragma once

#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <random>

#include "driver/nvrtc.h"
#include "gate.h"
#include "driver/nvjitlink.h"

#define TESSERA_TARGET_TEST_CASE(name, tags, fn)                \
  TEST_CASE(name " (cpu)", "[cpu]" tags) { fn(tessera::Target::cpu); } \
  TEST_CASE(name " (gpu)", "[gpu]" tags) {                      \
    if (!tessera::gpu_available()) {                             \
      WARN("no GPU on this machine: skipped");                   \
      return;                                                    \
    }                                                            \
    fn(tessera::default_target()); /* the GPU's own target */  \
  }

namespace exec_test {


inline bool toolchain_present() {
  if (tessera::detail::nvrtc_available() && tessera::detail::nvjitlink_available()) return true;
  WARN("NVRTC or nvJitLink missing: skipped (" << tessera::detail::nvrtc_load_error() << tessera::detail::nvjitlink_load_error() << ")");
  return false;
}

inline std::shared_ptr<Gate> make_gate() { return std::make_shared<Gate>(); }

// Options for a CPU launch that starts only once `gate` opens.
inline tessera::LaunchOptions after_gate(const std::shared_ptr<Gate>& gate) {
  tessera::LaunchOptions o;
  o.target = tessera::Target::cpu;
  o.after = {tessera::Event(gate)};
  return o;
}

// A tensor of uniform random values in [lo, hi), the same for the same seed.
template <class T, int R>
tessera::Tensor<T, R> random_tensor(std::array<int64_t, R> shape, float lo, float hi, unsigned seed) {
  tessera::Tensor<T, R> t(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = static_cast<T>(dist(rng));
  return t;
}

inline tessera::LaunchOptions on(tessera::Target t) {
  tessera::LaunchOptions o;
  o.target = t;
  return o;
}
// Options for `t` that keep the kernel which tests per program whether its tiles are in bounds,
// also for launches whose tiles are all whole (LaunchOptions::whole_tiles off).
inline tessera::LaunchOptions bounds_tested(tessera::Target t) {
  tessera::LaunchOptions o = on(t);
  o.whole_tiles = false;
  return o;
}

inline auto copy_kernel() {
  return tessera::kernel("exec_copy", [](auto out, auto a) { return out.store(a.load_like(out)); });
}
inline auto add_one_kernel() {
  return tessera::kernel("exec_add_one", [](auto out, auto a) { return out.store(a.load_like(out) + tessera::c<1>); });
}
inline auto add_kernel() {
  return tessera::kernel("exec_add", [](auto out, auto a, auto b) { return out.store(a.load_like(out) + b.load_like(out)); });
}
// out += 1, reading its own output: lost updates would show if two writers overlapped.
inline auto increment_kernel() {
  return tessera::kernel("exec_increment", [](auto out) { return out.store(out.load() + tessera::c<1>); });
}
inline auto slow_copy_kernel() {
  return tessera::kernel("exec_slow_copy", [](auto out, auto x, auto n) {
    auto v = x.load_like(out);
    auto r = tessera::for_range(
        n, [=](auto, auto acc) { return acc * tessera::c<0.5> + v * tessera::c<0.5>; }, v);
    return out.store(r);
  });
}
// Iterations of slow_copy that take a good fraction of a second.
inline int32_t slow_iterations(tessera::Target t) { return t == tessera::Target::cpu ? 2'000'000 : 50'000'000; }

inline tessera::Tensor<float, 1> iota_tensor(int64_t n, float start = 0) {
  tessera::Tensor<float, 1> t({n});
  for (int64_t i = 0; i < n; ++i) t(i) = start + static_cast<float>(i);
  return t;
}

}  // namespace exec_test
