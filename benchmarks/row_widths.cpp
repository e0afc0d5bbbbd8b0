// row_widths.cpp: the row sum, softmax, RMSNorm and LayerNorm of bench_rows at other row widths
// (1024, 4096, 16384 and 32768 bf16 elements), one row per program, each over a 512 MiB matrix (2^28 elements:
// 262144 x 1024 ... 8192 x 32768), as a user writes them for that width. Cases are named
// "<kernel>_w<width>"; bytes count each byte read and written once. Shows where the automatic
// block size and the register budget hold up beyond the 8192-wide rows of the targets.
#include <cmath>

#include "common.h"
#include "row_kernels.h"
#include "row_reference.h"

using namespace tessera;
using bench::f;

namespace {

constexpr int64_t kElements = int64_t{1} << 28;

template <int W>
auto softmax() {
  return kernel("softmax_w" + std::to_string(W), [](auto o, auto a) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto e = exp(t - max<1>(t));
    return o.store(cast<DType::bf16>(e / sum<1>(e)));
  });
}

// Validates on about 40 sampled rows (relative error, worst over the row), then times; prints a
// JSON line per case.
template <int W>
void run_width() {
  constexpr int64_t R = kElements / W;
  Tensor<bfloat16, 2> x({R, W}), y({R, W});
  Tensor<bfloat16, 1> w({W}), b({W});
  Tensor<float, 2> s({R, 1});
  bench::fill_device(x, 3);
  bench::fill_device(w, 4);
  bench::fill_device(b, 5);
  const double mat = double(R) * W * 2;
  const std::string suffix = "_w" + std::to_string(W);
  auto worst_over_rows = [&](auto&& err_of_row) {
    const bfloat16* px = x.data();
    double worst = 0;
    for (int64_t r = 0; r < R; r += R / 40 + 1) worst = std::max(worst, err_of_row(px + r * W, r, bench::row_stats(px + r * W, W)));
    return worst;
  };
  auto matrix_error = [&](auto&& want) {
    const bfloat16* py = y.data();
    return worst_over_rows([&](const bfloat16* row, int64_t r, bench::RowRef st) {
      double e = 0;
      for (int64_t c = 0; c < W; c += 7) e = std::max(e, std::abs(f(py[r * W + c]) - want(row, c, st)) / (1 + std::abs(want(row, c, st))));
      return e;
    });
  };
  auto report = [&](const char* name, double bytes, double ms, double err) {
    if (err > 2e-2) std::printf("{\"error\": \"%s%s: wrong result, max error %g\"}\n", name, suffix.c_str(), err);
    bench::report("row_widths", name + suffix, "bf16", bytes, ms, err);
  };
  {
    auto k = row_kernels::row_sum_of<W>();
    auto launch = [&] { return bench::timed(k, s.template partition<1, 1>(), x); };
    launch();
    const float* ps = s.data();
    double err = worst_over_rows([&](const bfloat16*, int64_t r, bench::RowRef st) {
      return std::abs(ps[r] - st.sum) / (1 + std::abs(st.sum));
    });
    report("row_sum", mat + R * 4, bench::median_ms(launch), err);
  }
  {
    auto k = softmax<W>();
    auto launch = [&] { return bench::timed(k, y.template partition<1, W>(), x); };
    launch();
    double err = matrix_error([](const bfloat16* row, int64_t c, bench::RowRef st) {
      return std::exp(f(row[c]) - st.max) / st.sumexp;
    });
    report("softmax", 2 * mat, bench::median_ms(launch), err);
  }
  {
    auto k = row_kernels::rmsnorm_of<W>();
    auto launch = [&] { return bench::timed(k, y.template partition<1, W>(), x, w); };
    launch();
    const bfloat16* pw = w.data();
    double err = matrix_error([&](const bfloat16* row, int64_t c, bench::RowRef st) {
      return f(row[c]) / std::sqrt(st.sumsq / W + 1e-6) * f(pw[c]);
    });
    report("rmsnorm", 2 * mat + W * 2, bench::median_ms(launch), err);
  }
  {
    auto k = row_kernels::layernorm_of<W>();
    auto launch = [&] { return bench::timed(k, y.template partition<1, W>(), x, w, b); };
    launch();
    const bfloat16* pw = w.data();
    const bfloat16* pb = b.data();
    double err = matrix_error([&](const bfloat16* row, int64_t c, bench::RowRef st) {
      return (f(row[c]) - st.mean) / std::sqrt(st.var + 1e-5) * f(pw[c]) + f(pb[c]);
    });
    report("layernorm", 2 * mat + 2 * W * 2, bench::median_ms(launch), err);
  }
}

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  run_width<1024>();
  run_width<4096>();
  run_width<16384>();
  run_width<32768>();
  return 0;
}
