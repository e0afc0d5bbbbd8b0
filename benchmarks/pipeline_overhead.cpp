// pipeline_overhead.cpp: what a chain of small launches costs per op (issue 4).
//
// A chain of N dependent launches of a tiny kernel (f16, 2048 elements, y = x + 1, ping-ponging
// between two tensors), N = 1, 10, 100, 1000, run three ways:
//   sync   launch() after launch(): each waits for its kernel;
//   async  launch_async() N times, then wait for the last (the chain is ordered by its tensors);
//   graph  the N launches captured once into a Graph, then replay() (capture cost reported apart).
// For each: us_per_op = wall time from the first submission until the result is complete, / N
// (median of several repetitions), and host_us_per_op = time the host spent submitting, / N
// (for sync the same as us_per_op). The tensors are zeroed by a kernel between repetitions.
// Every run is validated (the last tensor must hold N, exact in f16) before it is reported. Prints
// JSON lines; runs on the GPU if there is one (TESSERA_TARGET overrides), else on the CPU target.
// Targets on an H200: async <= 3 us per op, graph replay <= 1.2 us per op (N = 1000).
#include <tessera/tessera.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tessera;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

const char* target_name(Target t) {
  switch (t) {
    case Target::cpu: return "cpu";
    case Target::sm_90: return "sm_90";
    case Target::sm_100a: return "sm_100a";
  }
  return "?";
}

auto step_kernel() {
  return kernel("pipeline_step", [](auto out, auto x) { return out.store(x.load_like(out) + c<1>); });
}
using Step = decltype(step_kernel());

constexpr int64_t kElems = 2048;

struct Result {
  double us_per_op;
  double host_us_per_op;
};

// The chain's tensors; ops alternate a -> b -> a ...
struct Chain {
  Tensor<half, 1> a{std::array<int64_t, 1>{kElems}};
  Tensor<half, 1> b{std::array<int64_t, 1>{kElems}};
  // Zeroes both where the chain runs (a host fill would make every first op upload them).
  void reset(Target t) {
    static auto zero = kernel("pipeline_zero", [](auto out) { return out.store(out.load() * c<0>); });
    LaunchOptions o;
    o.target = t;
    zero.launch(o, a.partition<1024>());
    zero.launch(o, b.partition<1024>());
  }
  // After n ops the last written tensor holds n everywhere.
  bool valid(int n) {
    const Tensor<half, 1>& last = n % 2 ? std::as_const(b) : std::as_const(a);
    for (int64_t i = 0; i < kElems; ++i)
      if (static_cast<float>(last(i)) != static_cast<float>(n)) return false;
    return true;
  }
};

void fail(const char* mode, int n) {
  std::printf("{\"bench\": \"pipeline\", \"error\": \"%s chain of %d gave a wrong result\"}\n", mode, n);
  std::exit(1);
}

Result run_sync(const Step& step, Chain& ch, Target t, int n) {
  LaunchOptions o;
  o.target = t;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0)
      step.launch(o, ch.b.partition<1024>(), ch.a);
    else
      step.launch(o, ch.a.partition<1024>(), ch.b);
  }
  double us = us_since(t0);
  return {us / n, us / n};
}

Result run_async(const Step& step, Chain& ch, Target t, int n) {
  LaunchOptions o;
  o.target = t;
  auto t0 = Clock::now();
  for (int i = 0; i + 1 < n; ++i) {
    if (i % 2 == 0)
      step.launch_async(o, ch.b.partition<1024>(), ch.a).detach();
    else
      step.launch_async(o, ch.a.partition<1024>(), ch.b).detach();
  }
  auto last = (n - 1) % 2 == 0 ? step.launch_async(o, ch.b.partition<1024>(), ch.a)
                               : step.launch_async(o, ch.a.partition<1024>(), ch.b);
  double host = us_since(t0);
  last.wait();
  double us = us_since(t0);
  return {us / n, host / n};
}

struct GraphRun {
  Graph graph;
  double capture_ms;
};

GraphRun capture(const Step& step, Chain& ch, Target t, int n) {
  auto t0 = Clock::now();
  Graph g(t);
  {
    auto recording = g.capture();
    for (int i = 0; i < n; ++i) {
      if (i % 2 == 0)
        step.launch(ch.b.partition<1024>(), ch.a);
      else
        step.launch(ch.a.partition<1024>(), ch.b);
    }
  }
  return {std::move(g), us_since(t0) / 1000};
}

Result run_graph(Graph& g, int n) {
  auto t0 = Clock::now();
  auto h = g.replay_async();
  double host = us_since(t0);
  h.wait();
  double us = us_since(t0);
  return {us / n, host / n};
}

void report(const char* mode, Target t, int n, const std::vector<Result>& rs, double target_us, double extra_ms = -1) {
  std::vector<double> total, host;
  for (const Result& r : rs) {
    total.push_back(r.us_per_op);
    host.push_back(r.host_us_per_op);
  }
  std::printf("{\"bench\": \"pipeline\", \"mode\": \"%s\", \"target\": \"%s\", \"n\": %d, \"dtype\": \"f16\", "
              "\"elements\": %lld, \"us_per_op\": %.3f, \"host_us_per_op\": %.3f",
              mode, target_name(t), n, static_cast<long long>(kElems), median(total), median(host));
  if (target_us > 0 && t != Target::cpu)
    std::printf(", \"target_us_per_op\": %.1f, \"meets_target\": %s", target_us,
                median(total) <= target_us ? "true" : "false");
  if (extra_ms >= 0) std::printf(", \"capture_ms\": %.3f", extra_ms);
  std::printf("}\n");
  std::fflush(stdout);
}

}  // namespace

int main() {
  Target t = default_target();
  auto step = step_kernel();
  Chain ch;
  // Warm up: compile, allocate the device copies, start the streams.
  ch.reset(t);
  run_sync(step, ch, t, 4);
  run_async(step, ch, t, 4);
  for (int n : {1, 10, 100, 1000}) {
    const int reps = n >= 1000 ? 7 : n >= 100 ? 15 : 51;
    std::vector<Result> sync, async, graph;
    for (int r = 0; r < reps; ++r) {
      ch.reset(t);
      sync.push_back(run_sync(step, ch, t, n));
      if (!ch.valid(n)) fail("sync", n);
    }
    for (int r = 0; r < reps; ++r) {
      ch.reset(t);
      async.push_back(run_async(step, ch, t, n));
      if (!ch.valid(n)) fail("async", n);
    }
    GraphRun gr = capture(step, ch, t, n);
    ch.reset(t);
    run_graph(gr.graph, n);  // the first replay builds and instantiates the CUDA graph
    if (!ch.valid(n)) fail("graph", n);
    for (int r = 0; r < reps; ++r) {
      ch.reset(t);
      graph.push_back(run_graph(gr.graph, n));
      if (!ch.valid(n)) fail("graph", n);
    }
    report("sync", t, n, sync, -1);
    report("async", t, n, async, n == 1000 ? 3.0 : -1);
    report("graph", t, n, graph, n == 1000 ? 1.2 : -1, gr.capture_ms);
  }
  return 0;
}
