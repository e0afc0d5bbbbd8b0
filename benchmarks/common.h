// common.h: shared helpers of the GPU benchmarks.
//
// Every benchmark validates its result against a host reference before timing, then times the
// kernel with GPU events (Kernel::launch_timed, through timed() below, each launch behind an L2
// reset and a GPU spin) after warm-up and prints
// one JSON line per case:
//   {"bench": ..., "case": ..., "backend": ..., "dtype": ..., "bytes": ..., "ms": median, "tbps": ...}
// TESSERA_BACKEND=tileir runs them through the Tile IR backend ("backend" says which compiled each).
// Inputs are filled on the device by a tessera kernel (no multi-GiB host loops); bytes count each
// byte read and written once. Assumes a GPU (skips with a message otherwise).
#pragma once

#include <tessera/tessera.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace bench {

inline bool have_gpu() {
  if (tessera::gpu_available()) return true;
  std::printf("{\"skipped\": \"no GPU on this machine\"}\n");
  return false;
}

// Puts L2 in the same state before every timed launch, here and in the PyTorch baselines
// (torch_baselines.reset_l2): it reads 128 MiB of other data, 2.5 times the H200's L2, with plain
// loads, so that L2 holds clean lines of that data and nothing of the benchmark's tensors. Without
// it a kernel's time depends on what the case before it left in L2 (most for kernels whose loads
// are evict_first, such as Inductor's reductions), so the order of the cases would move the
// numbers. It reads rather than writes (as
// triton.testing.do_bench's cache clear does) so that the timed kernel has no dirty lines to write
// back.
inline void reset_l2(const tessera::LaunchOptions& options) {
  constexpr std::int64_t kFloats = std::int64_t{32} << 20;
  static tessera::Tensor<float, 1> scratch = [] {
    tessera::Tensor<float, 1> t({kFloats});
    t.fill(0.0f);
    return t;
  }();
  static tessera::Tensor<float, 1> sink({1});
  static const auto read = tessera::unsafe_cuda_kernel("bench_reset_l2", R"(
    extern "C" __global__ void bench_reset_l2(float* sink, const float4* p, int n) {
      unsigned bits = 0;
      for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        float4 v = p[i];
        bits ^= __float_as_uint(v.x) ^ __float_as_uint(v.y) ^ __float_as_uint(v.z) ^ __float_as_uint(v.w);
      }
      if (bits == 0x9e3779b9u) *sink = 1.0f;  // never true for zeros; keeps the loads
    })");
  read.launch_async(options, {.blocks = {132 * 8}, .threads = {256}}, tessera::unsafe::out(sink),
                    tessera::unsafe::in(scratch), static_cast<std::int32_t>(kFloats / 4))
      .detach();
}

// The options every benchmark launch uses: the benchmarks' own stream on sm_90, the GPU back end
// of TESSERA_BACKEND (default nvvm; kernels Tile IR cannot express take nvvm, see last_backend).
// A benchmark may change the target for a group of cases (bench_matmul runs sm_80 code, which the
// GPU compiles from its PTX) and must set it back after them.
inline tessera::LaunchOptions& bench_options() {
  static tessera::LaunchOptions options = [] {
    tessera::LaunchOptions o;
    o.target = tessera::Target::sm_90;
    o.stream = tessera::Stream::create();
    // BENCH_WHOLE_TILES=0: every case runs the kernels that test their bounds per program
    // (LaunchOptions::whole_tiles off), to compare the two on one machine.
    const char* whole = std::getenv("BENCH_WHOLE_TILES");
    o.whole_tiles = !whole || std::string_view(whole) != "0";
    return o;
  }();
  return options;
}

// Options that put a launch on the benchmarks' own stream right behind an L2 reset (reset_l2) and
// a GPU spin of about half a millisecond: the GPU is still busy while the host submits the launch,
// so that timing events recorded around the kernel measure the kernel and not the submission (the
// PyTorch baselines do the same with torch.cuda._sleep).
inline const tessera::LaunchOptions& behind_a_spin() {
  const tessera::LaunchOptions& options = bench_options();
  static const auto spin = tessera::unsafe_cuda_kernel("bench_spin", R"(
    extern "C" __global__ void bench_spin(int cycles) {
      long long start = clock64();
      while (clock64() - start < cycles) {
      }
    })");
  reset_l2(options);
  spin.launch_async(options, {.blocks = {1}, .threads = {32}}, std::int32_t{1 << 20}).detach();
  return options;
}

// The back end that compiled the kernel timed last (report() prints it): the default one
// (TESSERA_BACKEND) until a launch is timed.
inline tessera::Backend& last_backend() {
  static tessera::Backend backend = tessera::default_backend();
  return backend;
}

// Notes the back end that compiled `k` for these arguments under `options` (a lookup in the
// compiled-kernel cache; nothing to look up while the default is nvvm).
template <class K, class... A>
void note_backend(const tessera::LaunchOptions& options, const K& k, A&&... args) {
  if (tessera::default_backend() == tessera::Backend::nvvm) return;
  last_backend() = k.compile(options, std::forward<A>(args)...).backend;
}

// One launch of kernel `k`, timed with GPU events around the kernel alone (behind a spin).
template <class K, class... A>
double timed(const K& k, A&&... args) {
  const double ms = k.launch_timed(behind_a_spin(), args...);
  note_backend(bench_options(), k, std::forward<A>(args)...);
  return ms;
}

// timed() with these compiler hints (LaunchOptions::hints) for the launch.
template <class K, class... A>
double timed_hinted(const tessera::CompilerHints& hints, const K& k, A&&... args) {
  tessera::LaunchOptions o = behind_a_spin();
  o.hints = hints;
  const double ms = k.launch_timed(o, args...);
  note_backend(o, k, std::forward<A>(args)...);
  return ms;
}

// The same launch compiled for its exact shapes (LaunchOptions::static_shapes), the way
// torch.compile(dynamic=False), our baseline, compiles its kernels.
template <class K, class... A>
double timed_static(const K& k, A&&... args) {
  tessera::LaunchOptions o = behind_a_spin();
  o.static_shapes = true;
  const double ms = k.launch_timed(o, args...);
  note_backend(o, k, std::forward<A>(args)...);
  return ms;
}

// Median of `iters` timed launches after `warmup` untimed ones.
template <class Launch>
double median_ms(Launch&& launch, int warmup = 5, int iters = 30) {
  for (int i = 0; i < warmup; ++i) launch();
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) t.push_back(launch());
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// `baseline` names the PyTorch case a variant is compared with (default: the case itself).
inline void report(const std::string& bench, const std::string& name, const std::string& dtype, double bytes,
                   double ms, double max_err, const std::string& baseline = "") {
  std::printf("{\"bench\": \"%s\", \"case\": \"%s\", \"baseline\": \"%s\", \"backend\": \"%s\", \"dtype\": \"%s\", "
              "\"bytes\": %.0f, \"ms\": %.4f, \"tbps\": %.3f, \"max_err\": %.3g}\n",
              bench.c_str(), name.c_str(), (baseline.empty() ? name : baseline).c_str(),
              tessera::to_string(last_backend()).data(), dtype.c_str(), bytes, ms, bytes / (ms * 1e-3) / 1e12, max_err);
  std::fflush(stdout);
}

// Fills a tensor on the device with values in [-1, 1): a hash of the element index.
template <class T, int R>
void fill_device(tessera::Tensor<T, R>& t, int seed) {
  using namespace tessera;
  auto fill = kernel("bench_fill", [](auto o, auto s) {
    auto i = iota<1024>() + program_id<0>() * c<1024> + s;
    auto h = i * c<7919> + c<104729>;
    auto m = h - (h / c<2048>) * c<2048>;  // in (-2048, 2048)
    return o.store(cast<dtype_v<T>>(cast<DType::f32>(m) * c<0.00048828125>));
  });
  if constexpr (R == 1) {
    fill.launch(t.template partition<1024>(), seed);
  } else {
    // Fill the flat view: the benchmarks' 2-D tensors are contiguous.
    static_assert(R == 2);
    auto fill2 = kernel("bench_fill2", [](auto o, auto s) {
      auto i = iota<1024>() + program_id<1>() * c<1024> + program_id<0>() * c<7> + s;
      auto h = i * c<7919> + c<104729>;
      auto m = h - (h / c<2048>) * c<2048>;
      return o.store(cast<dtype_v<T>>(reshape<1, 1024>(cast<DType::f32>(m) * c<0.00048828125>)));
    });
    fill2.launch(t.template partition<1, 1024>(), seed);
  }
}

inline const char* dtype_str(tessera::DType d) { return tessera::dtype_name(d).data(); }

// The bandwidth (bytes read + written per second) of a 1 GiB bf16 copy, reported as a case of
// `bench`: the ceiling of a kernel that reads its bytes once.
inline double copy_bandwidth(const std::string& bench) {
  using namespace tessera;
  constexpr std::int64_t rows = 65536, cols = 8192;
  Tensor<bfloat16, 2> a({rows, cols}), o({rows, cols});
  fill_device(a, 1);
  auto copy = kernel("bench_copy_1gib", [](auto o, auto a) { return o.store(a.load_like(o)); });
  const double ms = median_ms([&] { return timed(copy, o.partition<1, 8192>(), a); });
  const double bytes = 2.0 * rows * cols * 2;
  report(bench, "copy 1 GiB", "bf16", bytes, ms, 0);
  return bytes / (ms * 1e-3);
}

}  // namespace bench
