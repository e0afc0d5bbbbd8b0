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
// On a GPU the same cubin is also run through the raw driver API as baselines (modes raw_sync:
// cuLaunchKernel + cuStreamSynchronize per op; raw_async: N cuLaunchKernel on one stream, then
// one synchronize; raw_graph: a CUDA graph of N chained kernel nodes, cuGraphLaunch), so that
// tessera's cost can be told from the driver's and the GPU's. tessera launches its kernels
// programmatically (cuLaunchKernelEx with programmatic stream serialization; programmatic graph
// edges): raw_async_pdl and raw_graph_pdl do the same through the raw driver API.
#include <tessera/tessera.h>

#include "driver/cuda_driver.h"
#include "raw_launch.h"

#include <algorithm>
#include <bit>
#include <memory>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace tessera;
// The driver bindings (driver/cuda_driver.h) of the raw baselines.
using tessera::detail::CudaDriver;
using tessera::detail::CUfunction;
using tessera::detail::CUgraph;
using tessera::detail::CUgraphExec;
using tessera::detail::CUgraphNode;
using tessera::detail::CUstream;
using tessera::detail::DeviceBuffer;
using tessera::detail::DeviceModule;
using tessera::detail::GraphEdgeData;
using tessera::detail::KernelNodeParams;
using tessera::detail::LaunchAttribute;
using tessera::detail::LaunchConfig;
using tessera::detail::kGraphDependencyTypeProgrammatic;
using tessera::detail::kGraphKernelNodePortProgrammatic;
using tessera::detail::kLaunchAttributeProgrammaticStreamSerialization;
using tessera::detail::kStreamNonBlocking;
using Clock = std::chrono::steady_clock;

namespace {

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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
              mode, std::string(to_string(t)).c_str(), n, static_cast<long long>(kElems), median(total), median(host));
  if (target_us > 0 && t != Target::cpu)
    std::printf(", \"target_us_per_op\": %.1f, \"meets_target\": %s", target_us,
                median(total) <= target_us ? "true" : "false");
  if (extra_ms >= 0) std::printf(", \"capture_ms\": %.3f", extra_ms);
  std::printf("}\n");
  std::fflush(stdout);
}

// The raw driver API on the same cubin: what tessera's modes are compared with.
struct Raw {
  CudaDriver& d = CudaDriver::get();
  std::unique_ptr<DeviceModule> module;
  CUfunction fn = nullptr;
  bench::RawShape shape;
  DeviceBuffer a{d, kElems * 2}, b{d, kElems * 2};
  CUstream stream = nullptr;
  // [op parity]: out (b or a), then in (a or b), then the program count (read only by a kernel
  // whose programs share CTAs: see raw_launch.h).
  int64_t slots[2][11];
  void* params[2][11];

  explicit Raw(const CompiledArtifact& art) {
    d.make_current();
    module = std::make_unique<DeviceModule>(d, art.cubin);
    fn = module->function("tessera_pipeline_step");
    shape = bench::raw_shape(art.ptx);
    d.check(d.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
    for (int p = 0; p < 2; ++p) {
      int64_t out = static_cast<int64_t>(p == 0 ? b.ptr() : a.ptr()), in = static_cast<int64_t>(p == 0 ? a.ptr() : b.ptr());
      int64_t s[11] = {out, out, 0, kElems, 1, in, in, 0, kElems, 1, kElems / 1024};
      for (int i = 0; i < 11; ++i) {
        slots[p][i] = s[i];
        params[p][i] = &slots[p][i];
      }
    }
  }
  ~Raw() { d.cuStreamDestroy_v2(stream); }
  void reset() {
    a.fill(0);
    b.fill(0);
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
  }
  void launch(int i, bool pdl = false) {
    if (!pdl) {
      d.check(d.cuLaunchKernel(fn, shape.ctas(kElems / 1024), 1, 1, shape.threads(kElems / 1024), 1, 1, 0, stream, params[i % 2], nullptr),
              "cuLaunchKernel");
      return;
    }
    LaunchAttribute attr;
    attr.id = kLaunchAttributeProgrammaticStreamSerialization;
    attr.value.programmatic_stream_serialization_allowed = 1;
    LaunchConfig config{shape.ctas(kElems / 1024), 1, 1, shape.threads(kElems / 1024), 1, 1, 0, stream, &attr, 1};
    d.check(d.cuLaunchKernelEx(&config, fn, params[i % 2], nullptr), "cuLaunchKernelEx");
  }
  bool valid(int n) {
    std::vector<uint16_t> h(kElems);
    (n % 2 ? b : a).download(h.data(), h.size() * 2);
    for (uint16_t v : h)
      if (static_cast<float>(std::bit_cast<half>(v)) != static_cast<float>(n)) return false;
    return true;
  }
  Result run_sync(int n) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      launch(i);
      d.check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }
    double us = us_since(t0);
    return {us / n, us / n};
  }
  Result run_async(int n, bool pdl) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) launch(i, pdl);
    double host = us_since(t0);
    d.check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    return {us_since(t0) / n, host / n};
  }
  struct Exec {
    CudaDriver& d;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    ~Exec() {
      if (exec) d.cuGraphExecDestroy(exec);
      if (graph) d.cuGraphDestroy(graph);
    }
  };
  std::unique_ptr<Exec> build(int n, bool pdl) {
    auto e = std::make_unique<Exec>(Exec{d});
    d.check(d.cuGraphCreate(&e->graph, 0), "cuGraphCreate");
    CUgraphNode prev = nullptr;
    for (int i = 0; i < n; ++i) {
      KernelNodeParams p;
      p.func = fn;
      p.grid_x = shape.ctas(kElems / 1024);
      p.block_x = shape.threads(kElems / 1024);
      p.kernel_params = params[i % 2];
      CUgraphNode node = nullptr;
      d.check(d.cuGraphAddKernelNode_v2(&node, e->graph, nullptr, 0, &p), "cuGraphAddKernelNode");
      if (prev) {
        GraphEdgeData edge;
        if (pdl) {
          edge.from_port = kGraphKernelNodePortProgrammatic;
          edge.type = kGraphDependencyTypeProgrammatic;
        }
        d.check(d.cuGraphAddDependencies_v2(e->graph, &prev, &node, &edge, 1), "cuGraphAddDependencies");
      }
      prev = node;
    }
    d.check(d.cuGraphInstantiateWithFlags(&e->exec, e->graph, 0), "cuGraphInstantiate");
    return e;
  }
  Result run_graph(Exec& e, int n) {
    auto t0 = Clock::now();
    d.check(d.cuGraphLaunch(e.exec, stream), "cuGraphLaunch");
    double host = us_since(t0);
    d.check(d.cuStreamSynchronize(stream), "cuStreamSynchronize");
    return {us_since(t0) / n, host / n};
  }
};

void run_raw(const Step& step, Chain& ch, Target t, int n, int reps) {
  static std::unique_ptr<Raw> raw;
  if (!raw) raw = std::make_unique<Raw>(step.compile(t, ch.b.partition<1024>(), ch.a));
  std::vector<Result> sync, async, async_pdl, graph, graph_pdl;
  for (int r = 0; r < reps; ++r) {
    raw->reset();
    sync.push_back(raw->run_sync(n));
    if (!raw->valid(n)) fail("raw_sync", n);
    raw->reset();
    async.push_back(raw->run_async(n, false));
    if (!raw->valid(n)) fail("raw_async", n);
    raw->reset();
    async_pdl.push_back(raw->run_async(n, true));
    if (!raw->valid(n)) fail("raw_async_pdl", n);
  }
  for (bool pdl : {false, true}) {
    auto exec = raw->build(n, pdl);
    for (int r = 0; r < reps; ++r) {
      raw->reset();
      (pdl ? graph_pdl : graph).push_back(raw->run_graph(*exec, n));
      if (!raw->valid(n)) fail(pdl ? "raw_graph_pdl" : "raw_graph", n);
    }
  }
  report("raw_sync", t, n, sync, -1);
  report("raw_async", t, n, async, -1);
  report("raw_async_pdl", t, n, async_pdl, -1);
  report("raw_graph", t, n, graph, -1);
  report("raw_graph_pdl", t, n, graph_pdl, -1);
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
    if (t != Target::cpu) run_raw(step, ch, t, n, reps);
  }
  return 0;
}
