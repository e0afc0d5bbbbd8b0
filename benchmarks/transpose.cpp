// transpose.cpp: a 16384 x 16384 bf16 matrix transposed in 64 x 64 tiles (issue 3 family 3):
// the program owning output tile (i, j) loads input tile (j, i).
#include <cmath>

#include "common.h"

using namespace tessera;

int main() {
  if (!bench::have_gpu()) return 0;
  const int64_t n = 16384;
  Tensor<bfloat16, 2> x({n, n}), y({n, n});
  bench::fill_device(x, 6);
  auto t = kernel("transpose", [](auto o, auto a) {
    return o.store(transpose(load<64, 64>(a, program_id<1>(), program_id<0>())));
  });
  auto launch = [&] { return bench::timed(t, y.partition<64, 64>(), x); };
  launch();
  const bfloat16* px = x.data();
  const bfloat16* py = y.data();
  double err = 0;
  for (int64_t i = 0; i < n; i += 101)
    for (int64_t j = 0; j < n; j += 103) err = std::max<double>(err, std::abs(float(py[i * n + j]) - float(px[j * n + i])));
  if (err != 0) std::printf("{\"error\": \"transpose: wrong result\"}\n");
  bench::report("transpose", "transpose", "bf16", 2.0 * n * n * 2, bench::median_ms(launch), err);
  return 0;
}
