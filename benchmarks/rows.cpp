// rows.cpp: row-wise kernels on a 32768 x 8192 bf16 matrix, one row per program (issue 3
// family 2): row sum, row max, softmax, RMSNorm, LayerNorm. Bytes count each byte read and
// written once (the matrix, the output, the weights). A copy of the matrix in the same tiles gives
// the ceiling of the kernels that read it once and write it once (softmax, RMSNorm, LayerNorm).
#include <cmath>

#include "common.h"
#include "row_kernels.h"
#include "row_reference.h"

using namespace tessera;
using bench::f;
using bench::RowRef;

namespace {

constexpr int64_t R = 32768, C = 8192;

RowRef row_stats(const bfloat16* row) { return bench::row_stats(row, C); }

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  Tensor<bfloat16, 2> x({R, C}), y({R, C});
  Tensor<bfloat16, 1> w({C}), b({C});
  Tensor<float, 2> rsum({R, 1}), rmax({R, 1});
  bench::fill_device(x, 3);
  bench::fill_device(w, 4);
  bench::fill_device(b, 5);
  const double mat = double(R) * C * 2;

  auto copy_k = row_kernels::copy();
  auto sum_k = row_kernels::row_sum();
  auto sum_loop_k = row_kernels::row_sum_loop();
  auto max_k = row_kernels::row_max();
  auto softmax_k = row_kernels::softmax();
  auto softmax_fast_k = row_kernels::softmax_fast();
  auto rms_k = row_kernels::rmsnorm();
  auto ln_k = row_kernels::layernorm();

  // Validation on sampled rows, then timing.
  auto check_rows = [&](const char* name, auto&& err_of_row) {
    const bfloat16* px = x.data();
    double worst = 0;
    for (int64_t r = 0; r < R; r += 997) worst = std::max(worst, err_of_row(px + r * C, r, row_stats(px + r * C)));
    if (worst > 2e-2) std::printf("{\"error\": \"%s: wrong result, max error %g\"}\n", name, worst);
    return worst;
  };
  {
    auto launch = [&] { return bench::timed(copy_k, y.partition<1, 8192>(), x); };
    launch();
    const bfloat16* px = x.data();
    const bfloat16* py = y.data();
    double err = 0;
    for (int64_t i = 0; i < R * C; i += 4099) err = std::max(err, std::abs(double(f(py[i])) - f(px[i])));
    bench::report("rows", "copy", "bf16", 2 * mat, bench::median_ms(launch), err);
  }
  // The row sum and RMSNorm also compiled for static shapes (LaunchOptions::static_shapes), as
  // "<case>_static" beside the same baseline; the output is cleared first so that the check sees
  // this variant's result.
  for (bool static_shapes : {false, true}) {
    const std::string name = static_shapes ? "row_sum_static" : "row_sum";
    auto launch = [&] {
      return static_shapes ? bench::timed_static(sum_k, rsum.partition<1, 1>(), x)
                           : bench::timed(sum_k, rsum.partition<1, 1>(), x);
    };
    rsum.fill(0.0f);
    launch();
    const float* ps = rsum.data();
    double err = check_rows(name.c_str(), [&](const bfloat16*, int64_t r, RowRef s) {
      return std::abs(ps[r] - s.sum) / (1 + std::abs(s.sum));
    });
    bench::report("rows", name, "bf16", mat + R * 4, bench::median_ms(launch), err, "row_sum");
  }
  {
    auto launch = [&] { return bench::timed(sum_loop_k, rsum.partition<1, 1>(), x); };
    launch();
    const float* ps = rsum.data();
    double err = check_rows("row_sum_loop", [&](const bfloat16*, int64_t r, RowRef s) {
      return std::abs(ps[r] - s.sum) / (1 + std::abs(s.sum));
    });
    bench::report("rows", "row_sum_loop", "bf16", mat + R * 4, bench::median_ms(launch), err, "row_sum");
  }
  {
    auto launch = [&] { return bench::timed(max_k, rmax.partition<1, 1>(), x); };
    launch();
    const float* pm = rmax.data();
    double err = check_rows("row_max", [&](const bfloat16*, int64_t r, RowRef s) { return std::abs(pm[r] - s.max); });
    bench::report("rows", "row_max", "bf16", mat + R * 4, bench::median_ms(launch), err);
  }
  auto check_matrix = [&](const char* name, auto&& want) {
    const bfloat16* py = y.data();
    return check_rows(name, [&](const bfloat16* row, int64_t r, RowRef s) {
      double e = 0;
      for (int64_t c = 0; c < C; c += 7) e = std::max(e, std::abs(f(py[r * C + c]) - want(row, c, s)) / (1 + std::abs(want(row, c, s))));
      return e;
    });
  };
  {
    auto launch = [&] { return bench::timed(softmax_k, y.partition<1, 8192>(), x); };
    launch();
    double err = check_matrix("softmax", [](const bfloat16* row, int64_t c, RowRef s) {
      return std::exp(f(row[c]) - s.max) / s.sumexp;
    });
    bench::report("rows", "softmax", "bf16", 2 * mat, bench::median_ms(launch), err);
  }
  {
    auto launch = [&] { return bench::timed(softmax_fast_k, y.partition<1, 8192>(), x); };
    launch();
    double err = check_matrix("softmax_fast", [](const bfloat16* row, int64_t c, RowRef s) {
      return std::exp(f(row[c]) - s.max) / s.sumexp;
    });
    bench::report("rows", "softmax_fast", "bf16", 2 * mat, bench::median_ms(launch), err, "softmax");
  }
  for (bool static_shapes : {false, true}) {
    const std::string name = static_shapes ? "rmsnorm_static" : "rmsnorm";
    auto launch = [&] {
      return static_shapes ? bench::timed_static(rms_k, y.partition<1, 8192>(), x, w)
                           : bench::timed(rms_k, y.partition<1, 8192>(), x, w);
    };
    y.fill(bfloat16(0.0f));
    launch();
    const bfloat16* pw = w.data();
    double err = check_matrix(name.c_str(), [&](const bfloat16* row, int64_t c, RowRef s) {
      return f(row[c]) / std::sqrt(s.sumsq / C + 1e-6) * f(pw[c]);
    });
    bench::report("rows", name, "bf16", 2 * mat + C * 2, bench::median_ms(launch), err, "rmsnorm");
  }
  {
    auto launch = [&] { return bench::timed(ln_k, y.partition<1, 8192>(), x, w, b); };
    launch();
    const bfloat16* pw = w.data();
    const bfloat16* pb = b.data();
    double err = check_matrix("layernorm", [&](const bfloat16* row, int64_t c, RowRef s) {
      return (f(row[c]) - s.mean) / std::sqrt(s.var + 1e-5) * f(pw[c]) + f(pb[c]);
    });
    bench::report("rows", "layernorm", "bf16", 2 * mat + 2 * C * 2, bench::median_ms(launch), err);
  }
  return 0;
}
