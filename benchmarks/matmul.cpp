// matmul.cpp: matrix products as a user writes them (matmul_kernels.h: BM x BN output tiles, a
// K loop carrying an f32 accumulator over mma of BM x BK and BK x BN tiles), on random data
// (issue #22's targets): bf16 and f16 at M = N = K = 4096 and 8192, f32 (tf32 tensor cores, beside
// cuBLAS's tf32) at 4096 and 8192; the LLM shapes (M x N x K)
// 4096 x 9728 x 2560, 4096 x 2560 x 9728 and 128 x 151936 x 2560; the batch-1 shapes
// 1 x 9728 x 2560, 1 x 2560 x 9728 and 1 x 151936 x 2560; the same with M = 16 and B K-major (the
// projections of 16 tokens); and a product with a fused bias + GELU
// (tanh) + bf16 cast epilogue at 4096^3. A is M x K and B is K x N, both row-major, the output
// in the inputs' dtype; bf16 products with M > 1 also run with B as the transposed view of an
// N x K row-major matrix ("<case>_kmajor", K-major B on tensor cores). The square sizes also run
// in f8e4m3 as torch._scaled_mm runs them (dtype "f8e4m3"): B the transposed view of an N x K
// matrix (K-major, which is how the tensor cores read 8-bit floats and the column-major B that
// _scaled_mm requires), f32 per-tensor scales applied in the epilogue, a bf16 output.
//
// Each shape runs with tile shapes chosen here (128 x 256 x 64 and 128 x 128 x 64, which take the
// tensor-core lowering on sm_90; for M = 1, one-row tiles of 16 to 64 columns, which run as
// multiply-adds; for M = 16, 16-row tiles with B K-major, SkinnyTiles), named "<case>_t<BM>x<BN>x<BK>" with the shape's own case as the baseline
// (torch_baselines.py's matmul family: cuBLAS, Triton, torch.compile), and as "<case>_tuned",
// tessera::autotune choosing among a list of tiles (time_tuned), its first launch including the
// tuning. Each is first
// launched cold, with empty in-process and disk caches and NVIDIA's compute cache off: its wall
// time, compile included, is "first_launch_ms". That launch's output is checked on 64 sampled
// elements against a double-precision host product (bound: 2 K 2^-24 sum |a||b| for the f32
// accumulation, plus 2^-8 of the value for the output's rounding, plus 2^-9 sum |a||b| for tf32's
// products with f32 inputs; matmul_reference.h explains it).
// Then the median of up to 30 timed launches (each behind an L2 reset and a GPU spin, common.h),
// fewer for slow kernels so that a case's timing takes about 2 s of GPU time (at least 3).
// Each line has "tflops" (2 M N K per second) and "tbps" (A, B and the output each read or
// written once, per second; for M = 1 the bound that matters, compared with a copy).
// With BENCH_MATMUL_SM80=1 (or "only") the bf16 and f16 squares and the two 4096-row LLM shapes
// also run as sm_80 code ("<case>_sm80": cp.async + ldmatrix + mma.sync, what Ampere and Ada run,
// compiled by this GPU's driver from the PTX), beside Triton's Ampere lowering
// (torch_baselines.py matmul_sm80).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <unistd.h>

#include "common.h"
#include "matmul_kernels.h"

using namespace tessera;

namespace {

using Clock = std::chrono::steady_clock;

// Values in [-1, 1) from a hash of the flat element index, filled on the device; the quadratic
// step keeps neighbouring elements unrelated (tensor cores draw more power on varied data, so
// constant or periodic inputs would flatter both sides). Every intermediate stays below 2^31.
template <class T>
void fill_random(Tensor<T, 2>& t, int seed) {
  auto fill = kernel("matmul_fill", [](auto o, auto s) {
    constexpr double p = 46337;  // prime, p^2 < 2^31
    auto i = program_id<0>() * dim<1>(o) + program_id<1>() * c<1024> + iota<1024>();
    auto j = i - (i / c<p>) * c<p>;
    auto h0 = j * c<40009> + s;
    auto h = h0 - (h0 / c<p>) * c<p>;
    auto q0 = h * h + j;
    auto q = q0 - (q0 / c<p>) * c<p>;
    auto v = cast<DType::f32>(q) * c<2.0 / p> - c<1.0>;
    return o.store(cast<dtype_v<T>>(reshape<1, 1024>(v)));
  });
  fill.launch(t.template partition<1, 1024>(), int32_t{seed * 7919 + 13});
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// This process's disk caches: one directory per cold start, all removed at the end.
std::filesystem::path cache_root() {
  static const auto root = std::filesystem::temp_directory_path() / ("tessera-matmul-bench-" + std::to_string(::getpid()));
  return root;
}

// Empty in-process and disk caches, so that the next launch compiles from scratch as a new
// shape's first launch would.
void cold_caches() {
  static int n = 0;
  const auto dir = cache_root() / std::to_string(n++);
  std::filesystem::remove_all(dir);
  ::setenv("TESSERA_CACHE_DIR", dir.c_str(), 1);
  clear_memory_cache();
}

struct Problem {
  int64_t m, n, k;
  std::string name() const { return "mm_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k); }
};

// The sampled output elements and their reference values.
struct Samples {
  std::vector<std::pair<int64_t, int64_t>> at;
  std::vector<double> want, magnitude;
};

// 64 elements (the four corners and 60 others spread by a hash) of a @ b, and for the epilogue
// case gelu(a @ b + bias); computed in double from the inputs' values.
template <class T>
Samples reference(const Problem& s, const Tensor<T, 2>& a, const Tensor<T, 2>& b, const Tensor<T, 1>* bias) {
  Samples r;
  r.at = {{0, 0}, {0, s.n - 1}, {s.m - 1, 0}, {s.m - 1, s.n - 1}};
  for (int64_t q = 1; r.at.size() < 64; ++q) r.at.push_back({(q * 2654435761LL) % s.m, (q * 40503LL + 7) % s.n});
  const T* pa = a.data();
  const T* pb = b.data();
  for (auto [i, j] : r.at) {
    double v = 0, mag = 0;
    for (int64_t k = 0; k < s.k; ++k) {
      const double x = double(float(pa[i * s.k + k])) * double(float(pb[k * s.n + j]));
      v += x;
      mag += std::abs(x);
    }
    if (bias) {
      v += double(float(bias->data()[j]));
      v = 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
      mag *= 1.13;  // GELU's steepest slope
    }
    r.want.push_back(v);
    r.magnitude.push_back(mag);
  }
  return r;
}

// Worst |got - want| over the samples, relative to (1 + |want|), and whether every sample is
// within the bound.
template <class T>
std::pair<double, bool> check(const Problem& s, const Samples& r, const Tensor<T, 2>& out) {
  const T* po = out.data();
  double worst = 0;
  bool ok = true;
  for (std::size_t q = 0; q < r.at.size(); ++q) {
    const auto [i, j] = r.at[q];
    const double got = double(float(po[i * s.n + j])), want = r.want[q];
    // tf32's products (f32 inputs) and the 13-bit sums of 8-bit wgmma (matmul_reference.h).
    const double tf32 = std::is_same_v<T, float> || sizeof(T) == 1 ? std::ldexp(1.0, -9) : 0.0;
    const double bound =
        (2.0 * double(s.k) * std::ldexp(1.0, -24) + tf32) * r.magnitude[q] + std::ldexp(1.0, -8) * std::abs(want);
    ok = ok && std::abs(got - want) <= bound + 1e-6;
    worst = std::max(worst, std::abs(got - want) / (1 + std::abs(want)));
  }
  return {worst, ok};
}

void report(const std::string& name, const std::string& baseline, const char* dtype, const Problem& s, const std::string& tile,
            double bytes, double ms, double first_ms, int iters, double err) {
  const double tflops = 2.0 * double(s.m) * double(s.n) * double(s.k) / (ms * 1e-3) / 1e12;
  std::printf("{\"bench\": \"matmul\", \"case\": \"%s\", \"baseline\": \"%s\", \"backend\": \"%s\", \"dtype\": \"%s\", "
              "\"m\": %lld, \"n\": %lld, \"k\": %lld, \"tile\": \"%s\", \"bytes\": %.0f, \"ms\": %.4f, \"tflops\": %.2f, "
              "\"tbps\": %.3f, \"first_launch_ms\": %.1f, \"iters\": %d, \"max_err\": %.3g}\n",
              name.c_str(), baseline.c_str(), to_string(bench::last_backend()).data(), dtype, static_cast<long long>(s.m),
              static_cast<long long>(s.n),
              static_cast<long long>(s.k), tile.c_str(), bytes, ms, tflops, bytes / (ms * 1e-3) / 1e12, first_ms, iters, err);
  std::fflush(stdout);
}

// An {"error": ...} line (quotes and newlines of the message made harmless).
void print_error(std::string what) {
  std::replace(what.begin(), what.end(), '"', '\'');
  std::replace(what.begin(), what.end(), '\n', ' ');
  std::printf("{\"error\": \"%s\"}\n", what.c_str());
  std::fflush(stdout);
}

// The case whose baselines a case is compared with: a K-major case ("<case>_kmajor") and a search
// over both back ends ("<case>_both") have the same product's; sm_80 code ("<case>_sm80",
// "<case>_kmajor_sm80") has "<case>_sm80"'s.
std::string baseline_of(const std::string& base) {
  if (base.ends_with("_kmajor_sm80")) return base.substr(0, base.size() - 12) + "_sm80";
  for (const std::string_view suffix : {"_kmajor", "_both"})
    if (base.ends_with(suffix)) return base.substr(0, base.size() - suffix.size());
  return base;
}

// The bytes of A and B (T elements) and of the output (O elements), each read or written once.
template <class T, class O>
double operand_bytes(const Problem& s) {
  return double(sizeof(T)) * (double(s.m) * s.k + double(s.k) * s.n) + double(sizeof(O)) * double(s.m) * s.n;
}

// Compiler hints for the next time_tile calls and what their tile's name gets for them
// ("/group8"); none by default.
struct TileHints {
  CompilerHints hints;
  std::string suffix;
};
TileHints& tile_hints() {
  static TileHints h;
  return h;
}

// One tile shape on one problem: a cold first launch (checked), then the timing. A tessera::Error
// (a tile that needs more shared memory than the GPU has, say) is printed and the next case runs.
template <int BM, int BN, int BK, class T, class K, class B, class O, class... Extra>
void time_tile(const K& k, const std::string& base, const char* dtype, const Problem& s, const Tensor<T, 2>& a,
               const B& b, Tensor<O, 2>& out, const Samples& ref, const Extra&... extra) try {
  const std::string tile = matmul_kernels::tile_name(BM, BN, BK) + tile_hints().suffix;
  auto launch = [&] { return bench::timed_hinted(tile_hints().hints, k, out.template partition<BM, BN>(), a, b, extra...); };
  cold_caches();
  auto t0 = Clock::now();
  const double first_kernel_ms = launch();
  const double first_ms = ms_since(t0);
  auto [err, ok] = check(s, ref, std::as_const(out));
  if (!ok) std::printf("{\"error\": \"%s_t%s %s: wrong result, max error %g\"}\n", base.c_str(), tile.c_str(), dtype, err);
  // About 2 s of GPU time per case: 30 launches when they are fast, at least 3.
  const int iters = std::clamp(static_cast<int>(2000.0 / std::max(first_kernel_ms, 1e-3)), 3, 30);
  const int warmup = first_kernel_ms > 100 ? 1 : 3;
  const double ms = bench::median_ms(launch, warmup, iters);
  const double bytes = operand_bytes<T, O>(s);
  const std::string baseline = baseline_of(base);
  report(base + "_t" + tile, baseline, dtype, s, tile, bytes, ms, first_ms, iters, err);
} catch (const Error& e) {
  print_error(base + "_t" + matmul_kernels::tile_name(BM, BN, BK) + ": " + e.what());
}

// The back end a tuner's option compiles with: the launch's (TESSERA_BACKEND), or one of its own.
enum class On { launch, nvvm, tileir };
constexpr std::optional<Backend> backend_of(On on) {
  if (on == On::launch) return std::nullopt;
  return on == On::tileir ? Backend::tileir : Backend::nvvm;
}

// A tile shape, the back end of a tuner's option and its programs per cluster (a tileiras hint;
// 0: the compiler's choice), as a value (for the lists of tiles below).
// Stages: CompilerHints::pipeline_stages (0: the compiler's choice); PingPong:
// CompilerHints::ping_pong.
template <int BM, int BN, int BK, On B = On::launch, int Cluster = 0, int Stages = 0, int SplitK = 0,
          bool PingPong = false, int Threads = 0>
struct Tile {};

// The tuner's option for tile BM x BN of kernel `k`, compiled with back end `on`, `cluster`
// programs per cluster, `stages` pipeline stages, its K loop shared by `split` CTAs, its
// consumers taking programs in turn (`ping_pong`) and `threads` (an mma.sync GEMM's warps).
template <int BM, int BN, class Fn>
TileOption<Fn, BM, BN> option_on(Kernel<Fn> k, On on, int cluster, int stages, int split, bool ping_pong,
                                 int threads) {
  return {std::move(k),
          {.pipeline_stages = stages,
           .cluster_programs = cluster,
           .threads = threads,
           .split_k = split,
           .ping_pong = ping_pong},
          backend_of(on)};
}

// An option's name in the lines: "128x256x64", "128x256x64/tileir", "128x256x64/tileir/cluster2",
// "16x64x128/stages8", "1x16x512/splitk4", "128x128x64/pingpong", "128x128x64/threads128".
std::string option_name(int bm, int bn, int bk, On on, int cluster, int stages, int split, bool ping_pong,
                        int threads) {
  std::string s = matmul_kernels::tile_name(bm, bn, bk) + (on == On::tileir ? "/tileir" : on == On::nvvm ? "/nvvm" : "");
  if (cluster) s += "/cluster" + std::to_string(cluster);
  if (split) s += "/splitk" + std::to_string(split);
  if (ping_pong) s += "/pingpong";
  if (threads) s += "/threads" + std::to_string(threads);
  return stages ? s + "/stages" + std::to_string(stages) : s;
}

// The same problem through tessera::autotune over `tiles`: a cold first launch, which compiles
// every option (at once) and times them, then the timing of the option it chose, reported as
// "<case>_tuned" with that option's tile; a second line gives each option's time as the tuner
// measured it.
template <class T, class O, class Make, class B, int... BM, int... BN, int... BK, On... On_, int... Cl, int... St,
          int... Sk, bool... Pp, int... Th, class... Extra>
void time_tuned(const Make& make, std::tuple<Tile<BM, BN, BK, On_, Cl, St, Sk, Pp, Th>...>, const std::string& base,
                const char* dtype,
                const Problem& s, const Tensor<T, 2>& a, const B& b, Tensor<O, 2>& out, const Samples& ref,
                const Extra&... extra) try {
  auto tuned =
      autotune(base + "_" + dtype, option_on<BM, BN>(make.template operator()<BM, BN, BK>(), On_, Cl, St, Sk, Pp, Th)...);
  cold_caches();
  clear_tuning();
  auto t0 = Clock::now();
  // The benchmarks' options: their target (sm_80 for the "_sm80" cases) is the one tuned for.
  const TuningResult r = tuned.launch(bench::bench_options(), out, a, b, extra...);
  const double first_ms = ms_since(t0);
  auto [err, ok] = check(s, ref, std::as_const(out));
  if (!ok) std::printf("{\"error\": \"%s_tuned %s: wrong result, max error %g\"}\n", base.c_str(), dtype, err);
  const std::vector<std::string> tiles = {option_name(BM, BN, BK, On_, Cl, St, Sk, Pp, Th)...};
  // The chosen option as the tuner launches it (its back end), and the back end that compiled it.
  auto launch = [&] {
    double ms = 0;
    int i = 0;
    auto one = [&](const auto& k, auto partition, std::optional<Backend> on, int cluster, int stages, int split,
                   bool ping_pong, int threads) {
      LaunchOptions o = bench::behind_a_spin();
      if (on) o.backend = on;
      o.hints.cluster_programs = cluster;
      o.hints.pipeline_stages = stages;
      o.hints.split_k = split;
      o.hints.ping_pong = ping_pong;
      o.hints.threads = threads;
      ms = k.launch_timed(o, partition, a, b, extra...);
      bench::last_backend() = k.compile(o, partition, a, b, extra...).backend;
      return 0.0;
    };
    ((i++ == r.index
          ? one(make.template operator()<BM, BN, BK>(), out.template partition<BM, BN>(), backend_of(On_), Cl, St, Sk, Pp,
                Th)
          : 0.0),
     ...);
    return ms;
  };
  const double once = launch();
  const int iters = std::clamp(static_cast<int>(2000.0 / std::max(once, 1e-3)), 3, 30);
  const double ms = bench::median_ms(launch, 3, iters);
  const double bytes = operand_bytes<T, O>(s);
  const std::string baseline = baseline_of(base);
  report(base + "_tuned", baseline, dtype, s, tiles[r.index], bytes, ms, first_ms, iters, err);
  bench::last_backend() = default_backend();  // the next case's lines say their own
  std::string times;
  for (std::size_t i = 0; i < r.ms.size(); ++i) {
    char one[96];
    std::snprintf(one, sizeof one, "%s\"%s\": %.4f", i ? ", " : "", tiles[i].c_str(), r.ms[i]);
    times += one;
  }
  std::printf("{\"bench\": \"matmul\", \"case\": \"%s_tuned\", \"dtype\": \"%s\", \"chosen\": \"%s\", "
              "\"tuning_ms\": {%s}}\n",
              base.c_str(), dtype, tiles[r.index].c_str(), times.c_str());
  std::fflush(stdout);
} catch (const Error& e) {
  print_error(base + "_tuned: " + e.what());
}

// The tiles tessera::autotune chooses among: the tensor-core lowering's for M > 1 (with the
// compiler's own stages and program order: a search that also tried 3 stages and 4 or 16 rows of
// programs gained at most 0.3% and made the first launch up to 5.2 s, docs/performance.md), and
// 128 x 128 x 64 (2 or 4) and 128 x 256 x 64 (2) with the k-tiles of the last round's programs
// shared by the CTAs of a cluster (CompilerHints::split_k), for products of fewer output tiles
// than SMs (128 x 2560 has 20) or a little more than a round of them (4096 x 2560 at 128 x 256:
// 320 tiles, 2 rounds of 132 and 56 left); for
// M = 1 (one row: multiply-adds, tile-vector-mma) tiles of 2-8 KiB of B per step, with 16 to 64 columns per
// program (fewer columns, more programs: N = 2560 has 40 programs of 64 columns). Larger steps
// were slower on the H200 at all three batch-1 shapes (1 x 16 x 1024, 1 x 32 x 512, 1 x 64 x 256,
// 1 x 128 x 128: 0.09-0.78 of the copy, docs/performance.md).
using TensorCoreTiles =
    std::tuple<Tile<128, 256, 64>, Tile<128, 128, 64>, Tile<128, 128, 128>, Tile<128, 128, 64, On::launch, 0, 0, 2>,
               Tile<128, 128, 64, On::launch, 0, 0, 4>, Tile<128, 256, 64, On::launch, 0, 0, 2>>;
// A fused epilogue's GEMM: the 128-column tiles, also with the consumers taking programs in turn
// (CompilerHints::ping_pong), one's epilogue beside the other's products. Not 128 x 256: with an
// epilogue that loads (a bias) its 128 accumulators a thread leave no registers to stage the
// output for TMA stores, so it stores from registers and lost to ping-pong's 128 x 128 on both
// GPUs, and its compile alone took the first launch past 2 s (docs/performance.md).
using EpilogueTiles =
    std::tuple<Tile<128, 128, 64>, Tile<128, 128, 128>, Tile<128, 128, 64, On::launch, 0, 0, 2>,
               Tile<128, 128, 64, On::launch, 0, 0, 4>, Tile<128, 128, 64, On::launch, 0, 0, 0, true>>;
// "<case>_tuned_both": the tensor-core tiles of both back ends in one search (tileiras beats the
// NVVM lowering on some products, docs/performance.md); only where tileiras is installed.
// tileiras may share tiles among the programs of a cluster (cluster_programs): its options also
// run in clusters of two.
using BothBackendTiles =
    std::tuple<Tile<128, 256, 64, On::nvvm>, Tile<128, 128, 64, On::nvvm>, Tile<128, 256, 64, On::tileir>,
               Tile<128, 128, 64, On::tileir>, Tile<128, 256, 64, On::tileir, 2>, Tile<128, 128, 64, On::tileir, 2>>;
// Whether the "_tuned_both" cases run: the default back end is nvvm (their nvvm options are that
// run's) and tileiras is there.
bool tune_both_backends() { return default_backend() == Backend::nvvm && backend_available(Backend::tileir); }
// Row-major B, M = 1: also 64 columns with each program's K loop shared by the 4 or 8 CTAs of a
// cluster (N = 2560 has 40 programs of 64 columns: 160 or 320 CTAs then stream B).
using RowTiles = std::tuple<Tile<1, 64, 64>, Tile<1, 32, 64>, Tile<1, 16, 64>, Tile<1, 32, 128>, Tile<1, 16, 128>,
                            Tile<1, 64, 64, On::launch, 0, 0, 4>, Tile<1, 64, 64, On::launch, 0, 0, 8>,
                            Tile<1, 32, 128, On::launch, 0, 0, 4>>;
// With B K-major the one-row accumulator is BN x BK, rows along K (the engine's matrix-vector
// form): tiles of 8-32 weight rows by 256-512 of K, and the same with each program's K loop shared
// by the 2 or 4 CTAs of a cluster (CompilerHints::split_k: N = 2560 at 16 columns is 160
// programs for 132 SMs).
using WeightRowTiles =
    std::tuple<Tile<1, 16, 512>, Tile<1, 8, 256>, Tile<1, 32, 256>, Tile<1, 8, 512>, Tile<1, 16, 512, On::launch, 0, 0, 2>,
               Tile<1, 16, 512, On::launch, 0, 0, 4>, Tile<1, 8, 512, On::launch, 0, 0, 4>>;
// M = 16 (a decoder's projections for 16 tokens at once) with B K-major: one 16-row tile per
// program, mma.sync on sm_80 and newer (wgmma's tiles start at 64 rows); the weight is read once,
// so the bound is a copy of it. Narrow tiles give more programs (N = 2560 has 40 of 64 columns);
// where programs are fewer than SMs, deeper pipelines keep more of the weight in flight (8 stages
// of 16 x 64 x 128 are 160 KiB: one program per SM), where they are more, fewer stages let
// several programs share an SM: the tuner weighs both. With a program's k-tiles shared by the 2
// or 4 CTAs of a cluster (CompilerHints::split_k), N = 2560 streams from 80-320 CTAs.
using SkinnyTiles =
    std::tuple<Tile<16, 64, 128>, Tile<16, 32, 128>, Tile<16, 128, 64>, Tile<16, 128, 128>, Tile<16, 64, 128, On::launch, 0, 8>,
               Tile<16, 32, 128, On::launch, 0, 8>, Tile<16, 32, 128, On::launch, 0, 5>, Tile<16, 16, 128, On::launch, 0, 8>,
               Tile<16, 64, 128, On::launch, 0, 4, 4>, Tile<16, 32, 128, On::launch, 0, 4, 4>,
               Tile<16, 64, 128, On::launch, 0, 8, 2>>;

// sm_80 code (cp.async + ldmatrix + mma.sync: what Ampere, Ada and the tiles wgmma does not take
// run) on this GPU, which compiles it from its PTX: tiles of at most 128 accumulators a thread,
// 32 or 64 of K per stage, the pipeline's depth, and 128 x 128 x 32 on 8 warps of 32 x 64
// (CompilerHints::threads 256) as well as on the compiler's 4 of 64 x 64 (128 x 128 x 64 on 8
// warps, 1.13-1.40 times the best option's time in every case of an H100 run, is not among them).
using MmaSyncTiles =
    std::tuple<Tile<128, 256, 32>, Tile<256, 128, 32>, Tile<128, 256, 64>, Tile<128, 128, 32>, Tile<64, 128, 64>,
               Tile<128, 128, 32, On::launch, 0, 4>, Tile<128, 256, 32, On::launch, 0, 4>,
               Tile<256, 128, 32, On::launch, 0, 4>, Tile<128, 128, 32, On::launch, 0, 0, 0, false, 256>,
               Tile<128, 128, 64>>;

// b's values stored transposed: an N x K row-major matrix (a linear layer's weight).
template <class T>
Tensor<T, 2> transposed_copy(const Tensor<T, 2>& b) {
  const int64_t k = b.shape(0), n = b.shape(1);
  Tensor<T, 2> w({n, k});
  const T* pb = b.data();
  T* pw = w.data();
  for (int64_t kk = 0; kk < k; ++kk)
    for (int64_t j = 0; j < n; ++j) pw[j * k + kk] = pb[kk * n + j];
  return w;
}

// A problem's operands: A (M x K) and B (K x N) random (fill_random), the output, and the
// reference samples of A B.
template <class T>
struct Operands {
  Tensor<T, 2> a, b, out;
  Samples ref;
  explicit Operands(const Problem& s) : a({s.m, s.k}), b({s.k, s.n}), out({s.m, s.n}) {
    fill_random(a, 1);
    fill_random(b, 2);
    ref = reference(s, std::as_const(a), std::as_const(b), static_cast<const Tensor<T, 1>*>(nullptr));
  }
};

template <class T>
void plain_case(const Problem& s, const char* dtype) {
  Operands<T> operands(s);
  auto& [a, b, out, ref] = operands;
  if (s.m == 1) {
    time_tile<1, 64, 64>(matmul_kernels::matmul<1, 64, 64>(), s.name(), dtype, s, a, b, out, ref);
    time_tile<1, 16, 128>(matmul_kernels::matmul<1, 16, 128>(), s.name(), dtype, s, a, b, out, ref);
    time_tile<1, 32, 64>(matmul_kernels::matmul<1, 32, 64>(), s.name(), dtype, s, a, b, out, ref);
    time_tile<1, 16, 64>(matmul_kernels::matmul<1, 16, 64>(), s.name(), dtype, s, a, b, out, ref);
    time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, RowTiles{}, s.name(), dtype,
               s, a, b, out, ref);
    // B as the transposed view of an N x K weight (how linear layers store theirs, and what a
    // decoder's batch-1 projections read): tile-vector-mma reads its rows along K.
    const Tensor<T, 2> w = transposed_copy(b);
    time_tile<1, 16, 512>(matmul_kernels::matmul<1, 16, 512>(), s.name() + "_kmajor", dtype, s, a, w.transposed(), out,
                          ref);
    time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, WeightRowTiles{},
               s.name() + "_kmajor", dtype, s, a, w.transposed(), out, ref);
  } else if (s.m <= 16) {
    const Tensor<T, 2> w = transposed_copy(b);
    time_tile<16, 64, 128>(matmul_kernels::matmul<16, 64, 128>(), s.name() + "_kmajor", dtype, s, a, w.transposed(), out,
                           ref);
    time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, SkinnyTiles{},
               s.name() + "_kmajor", dtype, s, a, w.transposed(), out, ref);
  } else {
    time_tile<128, 256, 64>(matmul_kernels::matmul<128, 256, 64>(), s.name(), dtype, s, a, b, out, ref);
    time_tile<128, 128, 64>(matmul_kernels::matmul<128, 128, 64>(), s.name(), dtype, s, a, b, out, ref);
    time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, TensorCoreTiles{}, s.name(),
               dtype, s, a, b, out, ref);
    if (tune_both_backends())
      time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, BothBackendTiles{},
                 s.name() + "_both", dtype, s, a, b, out, ref);
    if (std::string_view(dtype) != "bf16") return;
    // B as the transposed view of an N x K row-major weight (a linear layer's, as the Qwen3
    // prefill passes it): the same values, read K-major.
    const Tensor<T, 2> w = transposed_copy(b);
    time_tile<128, 256, 64>(matmul_kernels::matmul<128, 256, 64>(), s.name() + "_kmajor", dtype, s, a, w.transposed(),
                            out, ref);
  }
}

// f32 inputs: the tensor-core lowering multiplies them as tf32. With a row-major B, sm_90's wgmma
// lowering computes the product transposed in BN 64 or 128 (B^T from registers); 128 x 256 x 32 is
// mma.sync's best tile. Tiles of 32 K-columns hold as many bytes per stage as bf16's 64.
using Tf32Tiles = std::tuple<Tile<256, 128, 32>, Tile<128, 128, 32>, Tile<128, 128, 64>, Tile<256, 64, 32>,
                             Tile<128, 256, 32>>;

// With a K-major B, the tiles of sm_90's wgmma lowering (rows of 128 or 256 bytes).
using Tf32KMajorTiles = std::tuple<Tile<128, 256, 32>, Tile<128, 128, 32>, Tile<128, 128, 64>, Tile<128, 256, 64>>;

void f32_case(const Problem& s) {
  Operands<float> operands(s);
  auto& [a, b, out, ref] = operands;
  time_tile<256, 128, 32>(matmul_kernels::matmul<256, 128, 32>(), s.name(), "f32", s, a, b, out, ref);
  time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, Tf32Tiles{}, s.name(), "f32", s,
             a, b, out, ref);
  // B as the transposed view of an N x K weight: K-major, which sm_90's wgmma reads as tf32.
  const Tensor<float, 2> w = transposed_copy(b);
  time_tile<128, 256, 32>(matmul_kernels::matmul<128, 256, 32>(), s.name() + "_kmajor", "f32", s, a, w.transposed(), out,
                          ref);
  time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); }, Tf32KMajorTiles{},
             s.name() + "_kmajor", "f32", s, a, w.transposed(), out, ref);
}

// f8e4m3 operands (sm_90: TMA + wgmma k32, which needs BN 64 or 128 and 128 or 256 bytes of K per tile) with f32
// per-tensor scales and a bf16 output, as torch._scaled_mm computes it; B is the transposed view
// of an N x K matrix. The reference is the product of the quantized values, scaled.
using Float8Tiles = std::tuple<Tile<128, 128, 128>, Tile<128, 128, 256>, Tile<64, 128, 256>>;

void float8_case(const Problem& s) {
  Tensor<float8_e4m3, 2> a({s.m, s.k}), b({s.k, s.n});
  Tensor<bfloat16, 2> out({s.m, s.n});
  fill_random(a, 1);
  fill_random(b, 2);
  const float scale_a = 0.5f, scale_b = 0.25f;
  Samples ref = reference(s, std::as_const(a), std::as_const(b), static_cast<const Tensor<float8_e4m3, 1>*>(nullptr));
  for (double& v : ref.want) v *= double(scale_a) * scale_b;
  for (double& v : ref.magnitude) v *= double(scale_a) * scale_b;
  const Tensor<float8_e4m3, 2> w = transposed_copy(b);
  time_tile<128, 128, 128>(matmul_kernels::scaled_matmul<128, 128, 128>(), s.name(), "f8e4m3", s, a, w.transposed(), out,
                           ref, scale_a, scale_b);
  time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::scaled_matmul<BM, BN, BK>(); }, Float8Tiles{},
             s.name(), "f8e4m3", s, a, w.transposed(), out, ref, scale_a, scale_b);
}

// The product as sm_80 code ("<case>_sm80", "<case>_kmajor_sm80"): the target of every launch in
// here is sm_80, whose baseline is Triton's matmul with its Ampere lowering (torch_baselines.py's
// matmul_sm80 family, run with DISABLE_MMA_V3=1).
template <class T>
void mma_sync_case(const Problem& s, const char* dtype) {
  Operands<T> operands(s);
  auto& [a, b, out, ref] = operands;
  const Tensor<T, 2> w = transposed_copy(b);
  bench::bench_options().target = Target::sm_80;
  auto make = []<int BM, int BN, int BK>() { return matmul_kernels::matmul<BM, BN, BK>(); };
  time_tile<128, 128, 32>(matmul_kernels::matmul<128, 128, 32>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tuned(make, MmaSyncTiles{}, s.name() + "_sm80", dtype, s, a, b, out, ref);
  // The programs in groups of 8 rows (CompilerHints::group_rows) against the launch's order (the
  // compiler's choice on mma.sync).
  tile_hints() = {{.group_rows = 8}, "/group8"};
  time_tile<128, 256, 32>(matmul_kernels::matmul<128, 256, 32>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tile<128, 128, 32>(matmul_kernels::matmul<128, 128, 32>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  // 128 x 128 tiles on 8 warps of 32 x 64 (CompilerHints::threads) against the compiler's 4 of 64 x 64.
  tile_hints() = {{.threads = 256}, "/threads256"};
  time_tile<128, 128, 32>(matmul_kernels::matmul<128, 128, 32>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tile<128, 128, 64>(matmul_kernels::matmul<128, 128, 64>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  tile_hints() = {};
  time_tile<128, 128, 64>(matmul_kernels::matmul<128, 128, 64>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tile<128, 256, 32>(matmul_kernels::matmul<128, 256, 32>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tile<128, 256, 64>(matmul_kernels::matmul<128, 256, 64>(), s.name() + "_sm80", dtype, s, a, b, out, ref);
  time_tuned(make, MmaSyncTiles{}, s.name() + "_kmajor_sm80", dtype, s, a, w.transposed(), out, ref);
  bench::bench_options().target = Target::sm_90;
}

void epilogue_case(const Problem& s) {
  Tensor<bfloat16, 2> a({s.m, s.k}), b({s.k, s.n}), out({s.m, s.n}), row({1, s.n});
  fill_random(a, 3);
  fill_random(b, 4);
  fill_random(row, 5);
  const Tensor<bfloat16, 1> bias = std::move(row).reshape<1>({s.n});
  const Samples ref = reference(s, std::as_const(a), std::as_const(b), &bias);
  const std::string base = "mm_bias_gelu_" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  time_tile<128, 256, 64>(matmul_kernels::matmul_bias_gelu<128, 256, 64>(), base, "bf16", s, a, b, out, ref, bias);
  time_tile<128, 128, 64>(matmul_kernels::matmul_bias_gelu<128, 128, 64>(), base, "bf16", s, a, b, out, ref, bias);
  time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul_bias_gelu<BM, BN, BK>(); }, EpilogueTiles{},
             base, "bf16", s, a, b, out, ref, bias);
  if (tune_both_backends())
    time_tuned([]<int BM, int BN, int BK>() { return matmul_kernels::matmul_bias_gelu<BM, BN, BK>(); }, BothBackendTiles{},
               base + "_both", "bf16", s, a, b, out, ref, bias);
}

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  // nvJitLink keeps cubins in NVIDIA's compute cache across processes; first launches are cold
  // only without it (as in bench_jit_launch).
  ::setenv("CUDA_CACHE_DISABLE", "1", 1);
  bench::behind_a_spin();  // builds the L2 reset and spin kernels now, not inside a first launch
  const char* only = std::getenv("BENCH_MATMUL_CASES");  // e.g. "mm_4096x4096x4096": run the cases named
  auto wanted = [&](const std::string& name) { return !only || std::string_view(only).find(name) != std::string_view::npos; };
  // e.g. "f32" or "bf16,f16": run the square sizes in these dtypes only (whole names: "bf16" is not "f16").
  const char* dtypes = std::getenv("BENCH_MATMUL_DTYPES");
  auto dtype_wanted = [&](std::string_view d) {
    if (!dtypes) return true;
    const std::string list = std::string(",") + dtypes + ",";
    return list.find(std::string(",") + std::string(d) + ",") != std::string::npos;
  };
  // BENCH_MATMUL_SM80=1: also the tensor-core products as sm_80 code (mma.sync), after the others;
  // "only": those alone.
  const char* sm80_env = std::getenv("BENCH_MATMUL_SM80");
  const std::string_view sm80 = sm80_env ? sm80_env : "";
  try {
    for (int64_t n : {4096, 8192}) {
      const Problem s{n, n, n};
      if (!wanted(s.name()) || sm80 == "only") continue;
      if (dtype_wanted("bf16")) plain_case<bfloat16>(s, "bf16");
      if (dtype_wanted("f16")) plain_case<half>(s, "f16");
      if (dtype_wanted("f32")) f32_case(s);
      if (dtype_wanted("f8e4m3")) float8_case(s);
    }
    for (Problem s : {Problem{4096, 9728, 2560}, Problem{4096, 2560, 9728}, Problem{128, 151936, 2560},
                      Problem{128, 2560, 9728}, Problem{1, 9728, 2560},
                    Problem{1, 2560, 9728}, Problem{1, 151936, 2560}, Problem{16, 9728, 2560}, Problem{16, 2560, 9728},
                    Problem{16, 151936, 2560}})
      if (wanted(s.name()) && sm80 != "only") plain_case<bfloat16>(s, "bf16");
    if (wanted("mm_bias_gelu_4096x4096x4096") && sm80 != "only") epilogue_case({4096, 4096, 4096});
    if (sm80 == "1" || sm80 == "only") {
      for (int64_t n : {4096, 8192}) {
        const Problem s{n, n, n};
        if (!wanted(s.name())) continue;
        if (dtype_wanted("bf16")) mma_sync_case<bfloat16>(s, "bf16");
        if (dtype_wanted("f16")) mma_sync_case<half>(s, "f16");
      }
      for (Problem s : {Problem{4096, 9728, 2560}, Problem{4096, 2560, 9728}})
        if (wanted(s.name())) mma_sync_case<bfloat16>(s, "bf16");
    }
  } catch (const Error& e) {
    print_error(e.what());
    std::filesystem::remove_all(cache_root());
    return 1;
  }
  std::filesystem::remove_all(cache_root());
  return 0;
}
