// row_reference.h: host statistics of one bf16 row (sum, max, mean, variance, sum of squares, sum of
// exp(x - max)) in double, the reference of the row benchmarks (rows.cpp, row_widths.cpp).
#pragma once

#include <tessera/tessera.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace bench {

inline float f(tessera::bfloat16 v) { return static_cast<float>(v); }

struct RowRef {
  double sum = 0, max = -1e30, mean = 0, var = 0, sumsq = 0, sumexp = 0;
};

inline RowRef row_stats(const tessera::bfloat16* row, int64_t n) {
  RowRef r;
  for (int64_t c = 0; c < n; ++c) {
    double v = f(row[c]);
    r.sum += v;
    r.sumsq += v * v;
    r.max = std::max(r.max, v);
  }
  r.mean = r.sum / n;
  for (int64_t c = 0; c < n; ++c) r.sumexp += std::exp(f(row[c]) - r.max);
  for (int64_t c = 0; c < n; ++c) r.var += (f(row[c]) - r.mean) * (f(row[c]) - r.mean);
  r.var /= n;
  return r;
}

}  // namespace bench
