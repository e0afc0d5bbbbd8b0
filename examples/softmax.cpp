// softmax.cpp: row-wise softmax of a 1000 x 1000 matrix, one 1 x 1024 row tile per program.
//
// Shows reductions with broadcasting and how a ragged row is handled: the row is loaded padded
// with -inf (x.load_like(out).padded(c<-inf>)), so the columns past its end contribute nothing to
// the max and the sum, with no mask.
#include <tessera/tessera.h>

#include "example_kernels.h"

#include <cmath>
#include <cstdio>

int run() {
  const int64_t rows = 1000, cols = 1000;
  tessera::Tensor<float, 2> x({rows, cols}), y({rows, cols});
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) x(r, c) = std::sin(0.01f * static_cast<float>(r * cols + c));

  auto softmax = examples::softmax();
  softmax.launch(y.partition<1, 1024>(), x);

  double worst = 0;
  for (int64_t r = 0; r < rows; ++r) {
    double m = -1e30, s = 0;
    for (int64_t c = 0; c < cols; ++c) m = std::max<double>(m, x(r, c));
    for (int64_t c = 0; c < cols; ++c) s += std::exp(x(r, c) - m);
    for (int64_t c = 0; c < cols; ++c) worst = std::max(worst, std::abs(y(r, c) - std::exp(x(r, c) - m) / s));
  }
  std::printf("softmax %lldx%lld: max abs error %.3g\n", static_cast<long long>(rows), static_cast<long long>(cols), worst);
  return worst < 1e-5 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "softmax: %s\n", e.what());
    return 2;
  }
}
