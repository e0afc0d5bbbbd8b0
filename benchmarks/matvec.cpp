// matvec.cpp: batch-1 matrix-vector products (issue 22 item 4, issue 23's decode) against the copy
// bandwidth measured in the same run.
//
// y = W v with W a bf16 [N, K] row-major matrix (a Hugging Face linear weight, [out, in]) and v an
// f32 vector, f32 accumulation: the Qwen3 engine's own kernels (apps/qwen3/kernels/matvec.h) at
// the shapes of Qwen3-4B's projections, which are also issue 22's batch-1 shapes (1x9728x2560,
// 1x2560x9728, 1x151936x2560). Each product reads its weight once, so its ceiling is the copy
// bandwidth: bytes are the weight's (the vectors are a few KB), and "ratio" is the product's
// bandwidth over that of a large copy (bytes read + written) timed in the same run. Several tile
// shapes (rows per program x columns per step) run for each shape, and the fused forms the
// engine launches (RMSNorm prologue, residual epilogue, gate+up with SwiGLU) at the engine's tile.
// Qwen3-0.6B's smaller products (4 to 12 MiB) run at the tiles a small model might choose, plain
// and fused: that is where the engine's 8 x 256 gate/up tile for small models comes from.
// The engine's tiles run again with fewer threads per program (CompilerHints::threads: "t256",
// "t128"), and with BENCH_MATVEC_STREAM=1 with their weight tiles copied ahead into rings in shared
// memory (tile-stream-loads, CompilerHints::stream_stages: "stream4" four slots, "stream6" six;
// bulk rings, CompilerHints::bulk_streams; 256 threads), for the comparison with registers (the
// default) in the same run. Each runs again with its K loop shared by the 2, 4 or 8 CTAs of a
// cluster (CompilerHints::split_k: "splitk4"). BENCH_MATVEC_ONLY=TEXT runs only
// the cases whose names contain TEXT (for a profiler).
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <span>

#include "common.h"
#include "kernels/matvec.h"

using namespace tessera;
namespace k = qwen3::kernels;

namespace {

// The hints of every launch below and the suffix naming them in the case names.
CompilerHints g_hints;
std::string g_variant;

// The fused form the engine launches for a projection (apps/qwen3/model.h).
enum class Form { rmsnorm_matvec, matvec_residual, rmsnorm_swiglu };

// The form's name in the case names: its kernel's.
const char* form_name(Form f) {
  switch (f) {
    case Form::rmsnorm_matvec: return "rmsnorm_matvec";
    case Form::matvec_residual: return "matvec_residual";
    case Form::rmsnorm_swiglu: return "rmsnorm_swiglu";
  }
  return "?";
}

struct Case {
  const char* name;
  std::int64_t n, k;
  Form form;
};

// Qwen3-4B: hidden 2560, 32 query and 8 KV heads of 128, intermediate 9728, vocabulary 151936.
constexpr Case kShapes[] = {{"qkv", 6144, 2560, Form::rmsnorm_matvec},
                            {"o_proj", 2560, 4096, Form::matvec_residual},
                            {"gate", 9728, 2560, Form::rmsnorm_swiglu},
                            {"down", 2560, 9728, Form::matvec_residual},
                            {"lm_head", 151936, 2560, Form::rmsnorm_matvec}};

// Qwen3-0.6B: hidden 1024, 16 query and 8 KV heads of 128, intermediate 3072. Its products are
// small (4 to 12 MiB): few programs per SM at the engine's tile.
constexpr Case kSmallShapes[] = {{"0.6B qkv", 4096, 1024, Form::rmsnorm_matvec},
                                 {"0.6B o_proj", 1024, 2048, Form::matvec_residual},
                                 {"0.6B gate", 3072, 1024, Form::rmsnorm_swiglu},
                                 {"0.6B down", 1024, 3072, Form::matvec_residual}};

// max |y - W v| / max(1, |W v|) over sampled rows, in double on the host.
double check(const Tensor<float, 1>& y, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v, std::int64_t n,
             std::int64_t kk) {
  const float* py = y.data();
  const bfloat16* pw = w.data();
  const float* pv = v.data();
  double worst = 0;
  for (std::int64_t r = 0; r < n; r += 61) {
    double s = 0;
    for (std::int64_t c = 0; c < kk; ++c) s += double(float(pw[r * kk + c])) * pv[c];
    worst = std::max(worst, std::abs(py[r] - s) / std::max(1.0, std::abs(s)));
  }
  return worst;
}

// Whether the case `name` runs: BENCH_MATVEC_ONLY, if set, is a substring of the names that do (for
// a profiler run of one case).
bool selected(const std::string& name) {
  const char* only = std::getenv("BENCH_MATVEC_ONLY");
  return only == nullptr || name.find(only) != std::string::npos;
}

template <int R, int BK>
void plain(const Case& s, Tensor<float, 1>& y, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v, double copy_bw) {
  const std::string name = fmt::format("{} {}x{} tile {}x{}{}", s.name, s.n, s.k, R, BK, g_variant);
  if (!selected(name)) return;
  auto kern = k::matvec<R, BK>();
  kern.launch(y.partition<R>(), w, v);
  const double err = check(y, w, v, s.n, s.k);
  const double ms = bench::median_ms([&] { return bench::timed_hinted(g_hints, kern, y.partition<R>(), w, v); });
  const double bytes = double(s.n) * s.k * 2;
  bench::report("matvec", name, "bf16", bytes, ms, err);
  std::printf("{\"bench\": \"matvec\", \"case\": \"%s\", \"ratio_to_copy\": %.3f}\n", name.c_str(),
              bytes / (ms * 1e-3) / copy_bw);
}

// Split K (a candidate for short, wide products): program (s, n) sums its rows over the s-th of
// S ranges of column steps into partial[s, n], and a second kernel adds the S partials.
template <int R, int BK>
auto matvec_partial() {
  return kernel(qwen3::kernels::tiled_name("bench_matvec_partial", R, BK), [](auto out, auto w, auto v, auto steps) {
    auto first = program_id<0>() * steps;
    auto acc = for_range(
        steps,
        [=](auto j, auto acc) {
          auto kk = first + j;
          return acc + cast<DType::f32>(load<R, BK>(w, program_id<1>(), kk)) * reshape<1, BK>(load<BK>(v, kk));
        },
        full<DType::f32, R, BK>(c<0.0>));
    return out.store(reshape<1, R>(sum<1>(acc)));
  });
}

template <int S, int B>
auto sum_partials() {
  return kernel(qwen3::kernels::tiled_name("bench_matvec_sum_partials", S, B),
                [](auto y, auto partial) { return y.store(reshape<B>(sum<0>(load<S, B>(partial, c<0>, program_id<0>())))); });
}

template <int R, int BK, int S>
void split(const Case& s, Tensor<float, 1>& y, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v, double copy_bw) {
  const std::string name = fmt::format("{} {}x{} tile {}x{} split {}", s.name, s.n, s.k, R, BK, S);
  if (!selected(name)) return;
  auto part = matvec_partial<R, BK>();
  auto reduce = sum_partials<S, 256>();
  Tensor<float, 2> partial({S, s.n});
  const std::int32_t steps = std::int32_t(((s.k + BK - 1) / BK + S - 1) / S);
  part.launch(partial.partition<1, R>(), w, v, steps);
  reduce.launch(y.partition<256>(), partial);
  const double err = check(y, w, v, s.n, s.k);
  const double ms_part = bench::median_ms([&] { return bench::timed(part, partial.partition<1, R>(), w, v, steps); });
  const double ms_sum = bench::median_ms([&] { return bench::timed(reduce, y.partition<256>(), partial); });
  const double bytes = double(s.n) * s.k * 2;
  bench::report("matvec", name, "bf16", bytes, ms_part + ms_sum, err);
  std::printf("{\"bench\": \"matvec\", \"case\": \"%s\", \"ratio_to_copy\": %.3f, \"partial_ms\": %.4f}\n",
              name.c_str(), bytes / ((ms_part + ms_sum) * 1e-3) / copy_bw, ms_part);
}

// The engine's fused form of a shape at tile R x BK: bytes are the weights read.
template <int R, int BK>
void fused(const Case& s, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v, double copy_bw) {
  const std::string name = fmt::format("{} {}x{} {} {}x{}{}", s.name, s.n, s.k, form_name(s.form), R, BK, g_variant);
  if (!selected(name)) return;
  Tensor<float, 1> y({s.n});
  Tensor<bfloat16, 1> g({s.k});
  bench::fill_device(g, 4);
  double ms = 0, bytes = double(s.n) * s.k * 2;
  if (s.form == Form::matvec_residual) {
    auto kern = k::matvec_residual<R, BK>();
    ms = bench::median_ms([&] { return bench::timed_hinted(g_hints, kern, y.partition<R>(), w, v); });
  } else if (s.form == Form::rmsnorm_swiglu) {
    // The up projection is a matrix of its own: with w read twice the second read would hit the
    // cache and the product would seem to stream twice the bytes it does.
    Tensor<bfloat16, 2> up({s.n, s.k});
    bench::fill_device(up, 5);
    auto kern = k::rmsnorm_swiglu<R, BK>();
    ms = bench::median_ms([&] { return bench::timed_hinted(g_hints, kern, y.partition<R>(), w, up, v, g, 1e-6f); });
    bytes *= 2;
  } else {
    auto kern = k::rmsnorm_matvec<R, BK>();
    ms = bench::median_ms([&] { return bench::timed_hinted(g_hints, kern, y.partition<R>(), w, v, g, 1e-6f); });
  }
  bench::report("matvec", name, "bf16", bytes, ms, 0);
  std::printf("{\"bench\": \"matvec\", \"case\": \"%s\", \"ratio_to_copy\": %.3f}\n", name.c_str(),
              bytes / (ms * 1e-3) / copy_bw);
}

// A shape's random weight, vector and output (the same values for the same shape).
struct Operands {
  Tensor<bfloat16, 2> w;
  Tensor<float, 1> v, y;
};
Operands operands(const Case& s) {
  Operands o{Tensor<bfloat16, 2>({s.n, s.k}), Tensor<float, 1>({s.k}), Tensor<float, 1>({s.n})};
  bench::fill_device(o.w, 2);
  bench::fill_device(o.v, 3);
  return o;
}

// A tile size, as a value (for the lists of tiles below).
template <int R, int BK>
struct TileSize {};

// plain<R, BK> and fused<R, BK> of shape s at each tile size given.
template <class... Tiles>
void plain_at(const Case& s, Tensor<float, 1>& y, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v,
              double copy_bw, Tiles... tiles) {
  ([&]<int R, int BK>(TileSize<R, BK>) { plain<R, BK>(s, y, w, v, copy_bw); }(tiles), ...);
}
template <class... Tiles>
void fused_at(const Case& s, const Tensor<bfloat16, 2>& w, const Tensor<float, 1>& v, double copy_bw,
              Tiles... tiles) {
  ([&]<int R, int BK>(TileSize<R, BK>) { fused<R, BK>(s, w, v, copy_bw); }(tiles), ...);
}

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  const double copy_bw = bench::copy_bandwidth("matvec");
  auto shapes = [&](std::span<const Case> cases, bool small) {
    for (const Case& s : cases) {
      auto [w, v, y] = operands(s);
      if (small) {
        plain_at(s, y, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{}, TileSize<4, 512>{},
                 TileSize<8, 256>{}, TileSize<4, 256>{});
        fused_at(s, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{}, TileSize<4, 512>{}, TileSize<8, 256>{},
                 TileSize<4, 256>{});
        continue;
      }
      plain_at(s, y, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{}, TileSize<8, 1024>{},
               TileSize<4, 1024>{}, TileSize<4, 2048>{}, TileSize<2, 2048>{}, TileSize<2, 4096>{},
               TileSize<1, 4096>{}, TileSize<32, 256>{}, TileSize<32, 512>{}, TileSize<16, 1024>{});
      split<16, 512, 4>(s, y, w, v, copy_bw);
      split<8, 512, 4>(s, y, w, v, copy_bw);
      split<16, 512, 8>(s, y, w, v, copy_bw);
      fused_at(s, w, v, copy_bw, TileSize<k::kMatvecRows, k::kMatvecCols>{});
    }
  };
  shapes(kShapes, false);
  shapes(kSmallShapes, true);
  // Fewer threads per program (CompilerHints::threads), so that each thread multiplies more rows
  // by the vector chunk it loads: "t256" is 256 threads, each with twice the rows of the
  // compiler's choice at 16 x 512 (512 threads, 2 rows of 8 columns each).
  for (int threads : {256, 128}) {
    g_hints = CompilerHints{.threads = threads};
    g_variant = fmt::format(" t{}", threads);
    for (const Case& s : kShapes) {
      auto [w, v, y] = operands(s);
      plain_at(s, y, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{}, TileSize<32, 512>{},
               TileSize<16, 256>{});
      fused_at(s, w, v, copy_bw, TileSize<k::kMatvecRows, k::kMatvecCols>{}, TileSize<8, 512>{});
    }
    for (const Case& s : kSmallShapes) {
      auto [w, v, y] = operands(s);
      fused_at(s, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 256>{}, TileSize<8, 512>{});
    }
  }
  // Each program's K loop shared by the CTAs of a cluster (CompilerHints::split_k): "splitk4" is
  // four CTAs per program, each a quarter of the row.
  for (int split : {2, 4, 8}) {
    for (int threads : {0, 256}) {
      g_hints = CompilerHints{.threads = threads, .split_k = split};
      g_variant = fmt::format(" splitk{}{}", split, threads ? fmt::format(" t{}", threads) : "");
      for (const Case& s : kShapes) {
        auto [w, v, y] = operands(s);
        plain_at(s, y, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{});
        fused_at(s, w, v, copy_bw, TileSize<k::kMatvecRows, k::kMatvecCols>{}, TileSize<8, 512>{});
      }
      for (const Case& s : kSmallShapes) {
        auto [w, v, y] = operands(s);
        fused_at(s, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 256>{});
      }
    }
  }
  g_hints = {};
  g_variant.clear();
  if (std::getenv("BENCH_MATVEC_STREAM") == nullptr) return 0;
  // The engine's tiles again, their weight tiles in rings of four and of six slots (on sm_90 bulk
  // rings, the vector chunks in rings too).
  for (auto [stages, variant] : {std::pair{4, " stream4"}, std::pair{6, " stream6"}}) {
    g_hints.stream_stages = stages;
    g_hints.bulk_streams = true;
    g_hints.threads = 256;
    g_variant = variant;
    for (const Case& s : kShapes) {
      auto [w, v, y] = operands(s);
      plain_at(s, y, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 512>{});
      fused_at(s, w, v, copy_bw, TileSize<k::kMatvecRows, k::kMatvecCols>{});
    }
    for (const Case& s : kSmallShapes) {
      auto [w, v, y] = operands(s);
      fused_at(s, w, v, copy_bw, TileSize<16, 512>{}, TileSize<8, 256>{});
    }
  }
  return 0;
}
