// jit_launch.cpp: what JIT compilation and launching cost (issue 3, item 6).
//
//  - cold compile of an elementwise kernel, AST -> cubin, by stage (median of 12 distinct kernels,
//    NVIDIA's compute cache disabled; the first compile of the process, which initialises LLVM and
//    the driver, is reported apart);
//  - cold compile of each row kernel of bench_rows (row_kernels.h), by stage: these also compile
//    the variants the launcher tries after ptxas (register-cap, fewer-threads, plain-exp stages);
//  - a warm start from the disk cache (in-process cache dropped, cubin read and verified);
//  - host overhead of a synchronous launch over a raw cuLaunchKernel + synchronize of the same
//    cubin (median per launch over 2000 launches of a one-program kernel);
//  - on an sm_90 GPU, the compiles of a tuner's first launch: the five 128-column options of the
//    fused bias + GELU GEMM (bench_matmul's tuned list), tile IR -> PTX -> a loaded kernel (the
//    toolkit's ptxas or the driver compiling the PTX, src/compiler/ptxas.h), one after another
//    (f16 inputs) and on threads of their own at once as tessera::autotune runs them (bf16 inputs:
//    other kernels, so nothing is cached); and the driver's compile of the same PTX texts alone,
//    one after another and from threads at once.
// Prints JSON lines. Compiles need no GPU; the launch part is skipped without one.
#include <tessera/tessera.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "driver/cuda_driver.h"
#include "matmul_kernels.h"
#include "raw_launch.h"
#include "row_kernels.h"

using namespace tessera;
// The driver bindings (driver/cuda_driver.h) of the raw baseline.
using tessera::detail::CudaDriver;
using tessera::detail::CUfunction;
using tessera::detail::DeviceBuffer;
using tessera::detail::DeviceModule;
using Clock = std::chrono::steady_clock;

namespace {

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <int I>
auto elementwise_kernel() {
  return kernel("jit_axpb_" + std::to_string(I), [](auto o, auto a, auto b) {
    return o.store(a.load_like(o) * c<I + 1> + b.load_like(o));
  });
}

template <int... I>
void cold_compiles(std::integer_sequence<int, I...>) {
  Tensor<float, 1> x({4096}), y({4096}), z({4096});
  std::vector<double> totals;
  std::map<std::string, std::vector<double>> stages;
  Backend backend = Backend::nvvm;
  auto one = [&](auto k, bool first) {
    auto t0 = Clock::now();
    CompiledArtifact a = k.compile(Target::sm_90, z.partition<1024>(), x, y);
    double total = ms_since(t0);
    backend = a.backend;
    if (first) {
      std::printf("{\"bench\": \"jit\", \"case\": \"first_compile_in_process\", \"ms\": %.2f}\n", total);
      return;
    }
    totals.push_back(total);
    for (auto& [name, ms] : a.stage_ms) stages[name].push_back(ms);
  };
  one(elementwise_kernel<100>(), true);
  (one(elementwise_kernel<I>(), false), ...);
  std::printf("{\"bench\": \"jit\", \"case\": \"cold_compile_elementwise\", \"backend\": \"%s\", \"ms\": %.2f, "
              "\"target_ms\": 150, \"stages\": {",
              to_string(backend).data(), median(totals));
  bool comma = false;
  for (auto& [name, v] : stages) {
    std::printf("%s\"%s\": %.2f", comma ? ", " : "", name.c_str(), median(v));
    comma = true;
  }
  std::printf("}}\n");
  std::fflush(stdout);

  // Warm start: drop the in-process cache, so the next compile is served from disk.
  std::vector<double> warm;
  for (int i = 0; i < 12; ++i) {
    clear_memory_cache();
    auto t0 = Clock::now();
    CompiledArtifact a = elementwise_kernel<1>().compile(Target::sm_90, z.partition<1024>(), x, y);
    warm.push_back(ms_since(t0));
    if (!a.from_disk_cache) std::printf("{\"error\": \"expected a disk cache hit\"}\n");
  }
  std::printf("{\"bench\": \"jit\", \"case\": \"disk_cache_load\", \"ms\": %.3f, \"target_ms\": 2}\n", median(warm));
}

// One line per kernel: total and stages of its first compile (a stage that ran more than once,
// e.g. the cubin of each variant, is summed).
void print_compile(const std::string& name, double total, const CompiledArtifact& a) {
  std::map<std::string, double> stages;
  for (auto& [stage, ms] : a.stage_ms) stages[stage] += ms;
  std::printf("{\"bench\": \"jit\", \"case\": \"cold_compile_%s\", \"backend\": \"%s\", \"ms\": %.2f, \"stages\": {",
              name.c_str(), to_string(a.backend).data(), total);
  bool comma = false;
  for (auto& [stage, ms] : stages) {
    std::printf("%s\"%s\": %.2f", comma ? ", " : "", stage.c_str(), ms);
    comma = true;
  }
  std::printf("}}\n");
  std::fflush(stdout);
}

// The row kernels (shapes are dynamic: a small matrix compiles the same kernels).
void row_kernel_compiles() {
  Tensor<bfloat16, 2> x({16, 8192}), y({16, 8192});
  Tensor<bfloat16, 1> w({8192}), b({8192});
  Tensor<float, 2> r({16, 1});
  auto time = [](const std::string& name, auto&& compile) {
    auto t0 = Clock::now();
    CompiledArtifact a = compile();
    print_compile(name, ms_since(t0), a);
  };
  time("row_sum", [&] { return row_kernels::row_sum().compile(Target::sm_90, r.partition<1, 1>(), x); });
  time("softmax", [&] { return row_kernels::softmax().compile(Target::sm_90, y.partition<1, 8192>(), x); });
  time("softmax_fast", [&] { return row_kernels::softmax_fast().compile(Target::sm_90, y.partition<1, 8192>(), x); });
  time("rmsnorm", [&] { return row_kernels::rmsnorm().compile(Target::sm_90, y.partition<1, 8192>(), x, w); });
  time("layernorm", [&] { return row_kernels::layernorm().compile(Target::sm_90, y.partition<1, 8192>(), x, w, b); });
}

void launch_overhead() {
  if (!gpu_available()) {
    std::printf("{\"bench\": \"launch\", \"skipped\": \"no GPU\"}\n");
    return;
  }
  Tensor<float, 1> x({128}), z({128});
  auto k = kernel("launch_probe", [](auto o, auto a) { return o.store(a.load_like(o) + c<1>); });
  const int n = 2000;
  k.launch_on(Target::sm_90, z.partition<128>(), x);
  std::vector<double> ours;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    k.launch_on(Target::sm_90, z.partition<128>(), x);
    ours.push_back(ms_since(t0) * 1000);
  }
  // The same cubin through the raw driver API.
  CompiledArtifact art = k.compile(Target::sm_90, z.partition<128>(), x);
  CudaDriver& d = CudaDriver::get();
  DeviceModule module(d, art.cubin);
  CUfunction fn = module.function("tessera_launch_probe");
  // The block size the compiler chose, and the programs per CTA (one program here).
  const bench::RawShape shape = bench::raw_shape(art.ptx);
  DeviceBuffer bx(d, 512), bz(d, 512);
  int64_t slots[] = {int64_t(bz.ptr()), int64_t(bz.ptr()), 0, 128, 1, int64_t(bx.ptr()), int64_t(bx.ptr()), 0, 128, 1, 1};
  void* params[11];
  for (int i = 0; i < 11; ++i) params[i] = &slots[i];
  std::vector<double> raw;
  for (int i = 0; i < n; ++i) {
    auto t0 = Clock::now();
    d.check(d.cuLaunchKernel(fn, shape.ctas(1), 1, 1, shape.threads(1), 1, 1, 0, nullptr, params, nullptr), "cuLaunchKernel");
    d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
    raw.push_back(ms_since(t0) * 1000);
  }
  double a = median(ours), b = median(raw);
  std::printf("{\"bench\": \"launch\", \"case\": \"sync_launch\", \"tessera_us\": %.2f, \"raw_cuLaunchKernel_us\": %.2f, "
              "\"overhead_us\": %.2f, \"target_overhead_us\": 5}\n",
              a, b, a - b);
  std::fflush(stdout);
}

// The fused bias + GELU GEMM's tuned options (bench_matmul's EpilogueTiles): the kernel, its
// name in the lines and the hints it compiles with.
void each_epilogue_option(auto&& f) {
  f(matmul_kernels::matmul_bias_gelu<128, 128, 64>(), "128x128x64", CompilerHints{});
  f(matmul_kernels::matmul_bias_gelu<128, 128, 128>(), "128x128x128", CompilerHints{});
  f(matmul_kernels::matmul_bias_gelu<128, 128, 64>(), "128x128x64/splitk2", CompilerHints{.split_k = 2});
  f(matmul_kernels::matmul_bias_gelu<128, 128, 64>(), "128x128x64/splitk4", CompilerHints{.split_k = 4});
  f(matmul_kernels::matmul_bias_gelu<128, 128, 64>(), "128x128x64/pingpong", CompilerHints{.ping_pong = true});
}

void tuner_compiles() {
  if (!gpu_available() || CudaDriver::get().compute_capability() != 90) {
    std::printf("{\"bench\": \"jit\", \"case\": \"tuner_compiles\", \"skipped\": \"no sm_90 GPU\"}\n");
    return;
  }
  const int64_t n = 1024;
  Tensor<bfloat16, 2> out({n, n});
  Tensor<half, 2> a16({n, n}), b16({n, n});
  Tensor<half, 1> bias16({n});
  Tensor<bfloat16, 2> a({n, n}), b({n, n});
  Tensor<bfloat16, 1> bias({n});
  auto options = [](CompilerHints h) {
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints = h;
    return o;
  };
  // One after another: compile() (tile IR -> PTX, and ptxas' cubin where it stands in for the
  // driver, stage "ptxas"; else the artifact gets nvJitLink's cubin, stage "cubin"), then
  // prepare(), which loads the kernel: the driver's compile of the PTX, or only ptxas' cubin.
  std::vector<std::string> ptx;
  double serial = 0;
  each_epilogue_option([&](auto k, const char* name, CompilerHints h) {
    auto t0 = Clock::now();
    CompiledArtifact art = k.compile(options(h), out.partition<128, 128>(), a16, b16, bias16);
    const double compile_ms = ms_since(t0);
    t0 = Clock::now();
    k.prepare(options(h), out.partition<128, 128>(), a16, b16, bias16);
    const double load_ms = ms_since(t0);
    serial += compile_ms + load_ms;
    ptx.push_back(art.ptx);
    print_compile(std::string("gemm_option_") + name, compile_ms, art);
    std::printf("{\"bench\": \"jit\", \"case\": \"driver_load_%s\", \"ms\": %.2f}\n", name, load_ms);
  });
  // At once, as the tuner prepares its options.
  auto t0 = Clock::now();
  std::vector<std::future<void>> at_once;
  each_epilogue_option([&](auto k, const char*, CompilerHints h) {
    at_once.push_back(std::async(std::launch::async, [&, k, h] { k.prepare(options(h), out.partition<128, 128>(), a, b, bias); }));
  });
  for (auto& f : at_once) f.get();
  const double parallel = ms_since(t0);
  // The driver's compile of the same PTX, alone: one after another, then from threads at once.
  CudaDriver& d = CudaDriver::get();
  auto load = [&](const std::string& text) { DeviceModule m(d, std::span<const char>(text.c_str(), text.size() + 1)); };
  t0 = Clock::now();
  for (const std::string& text : ptx) load(text);
  const double driver_serial = ms_since(t0);
  t0 = Clock::now();
  std::vector<std::future<void>> loads;
  for (const std::string& text : ptx) loads.push_back(std::async(std::launch::async, [&] { load(text); }));
  for (auto& f : loads) f.get();
  const double driver_parallel = ms_since(t0);
  std::printf("{\"bench\": \"jit\", \"case\": \"tuner_compiles\", \"options\": %zu, \"one_after_another_ms\": %.1f, "
              "\"at_once_ms\": %.1f, \"driver_ptx_one_after_another_ms\": %.1f, \"driver_ptx_at_once_ms\": %.1f, "
              "\"threads\": %u}\n",
              ptx.size(), serial, parallel, driver_serial, driver_parallel, std::thread::hardware_concurrency());
  std::fflush(stdout);
}

}  // namespace

int main() {
  auto dir = std::filesystem::temp_directory_path() / ("tessera-jit-bench-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  // nvJitLink keeps the cubins it made in NVIDIA's compute cache (~/.nv/ComputeCache) across
  // processes: on the H200, a second run took 0.5 ms instead of 22 to link the elementwise
  // kernel. The compiles measured here are cold only without it.
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  cold_compiles(std::integer_sequence<int, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12>{});
  row_kernel_compiles();
  launch_overhead();
  tuner_compiles();
  std::filesystem::remove_all(dir);
  return 0;
}
