// execution_helpers.h: helpers of the execution-model tests (test_async, test_graph, test_unsafe,
// test_interop, test_threads).
//
//  - TESSERA_TARGET_TEST_CASE(name, tags, fn): registers fn(Target) for the CPU target ([cpu]) and,
//    tagged [gpu], for the GPU (skipped with a warning when there is none).
//  - Gate: work that completes when the test opens it. A CPU launch ordered after a closed gate
//    (LaunchOptions::after) is deterministically in flight: its worker waits for the gate. (On a
//    GPU target the launching thread would wait instead, so gates are for [cpu] tests.)
//  - slow_copy(): out = x after `n` iterations of acc = acc/2 + x/2; keeps a launch in flight for
//    a while on either target (GPU tests that need it in flight check ready() first).
#pragma once

#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <condition_variable>
#include <mutex>

#define TESSERA_TARGET_TEST_CASE(name, tags, fn)                \
  TEST_CASE(name " (cpu)", "[cpu]" tags) { fn(tessera::Target::cpu); } \
  TEST_CASE(name " (gpu)", "[gpu]" tags) {                      \
    if (!tessera::gpu_available()) {                             \
      WARN("no GPU on this machine: skipped");                   \
      return;                                                    \
    }                                                            \
    fn(tessera::Target::sm_90);                                  \
  }

namespace exec_test {

class Gate final : public tessera::detail::Completion {
 public:
  Gate() { label = std::make_shared<const std::string>("a test gate"); }
  bool done() const override {
    std::lock_guard lock(mutex_);
    return open_;
  }
  void wait() const override {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  bool open_ = false;
};

inline std::shared_ptr<Gate> make_gate() { return std::make_shared<Gate>(); }

// Options for a CPU launch that starts only once `gate` opens.
inline tessera::LaunchOptions after_gate(const std::shared_ptr<Gate>& gate) {
  tessera::LaunchOptions o;
  o.target = tessera::Target::cpu;
  o.after = {tessera::Event(gate)};
  return o;
}

inline tessera::LaunchOptions on(tessera::Target t) {
  tessera::LaunchOptions o;
  o.target = t;
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
