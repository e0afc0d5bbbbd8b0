// exit_in_flight.cpp: returns from main with work in flight on tensors that are already gone, to
// check that the library's exit drain lets that work finish before anything it uses is freed
// (test execution.exit_in_flight). The CPU work waits for a gate that a detached thread opens
// 100 ms after main has returned and prints "gate opened": the line appears only if process exit
// waited for the work. With a GPU, a slow kernel writing a dropped tensor is in flight too.
#include <tessera/tessera.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "gate.h"

using exec_test::Gate;

int main() {
  using namespace tessera;
  auto copy = kernel("exit_copy", [](auto out, auto a) { return out.store(a.load_like(out) + c<1>); });
  auto gate = std::make_shared<Gate>();
  {
    Tensor<float, 1> x({1 << 16}), y({1 << 16});
    LaunchOptions o;
    o.target = Target::cpu;
    o.after = {Event(gate)};
    copy.launch_async(o, y.partition<1024>(), x).detach();
    copy.launch_async({.target = Target::cpu}, x.partition<1024>(), y).detach();
  }  // both tensors' handles are gone: their memory waits for the work
  if (gpu_available()) {
    auto slow = kernel("exit_slow", [](auto out, auto x, auto n) {
      auto v = x.load_like(out);
      return out.store(for_range(n, [=](auto, auto acc) { return acc * c<0.5> + v * c<0.5>; }, v));
    });
    Tensor<float, 1> a({1 << 20}), b({1 << 20});
    slow.launch_async({.target = Target::sm_90}, b.partition<1024>(), a, 1 << 20).detach();
  }
  std::thread([gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::printf("gate opened\n");
    std::fflush(stdout);
    gate->open();
  }).detach();
  std::printf("main returns\n");
  std::fflush(stdout);
  return 0;
}
