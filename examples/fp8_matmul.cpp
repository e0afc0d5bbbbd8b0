// fp8_matmul.cpp: an fp8 linear layer, y = x @ w^T, with bf16 x: 300 x 256 and a bf16 weight w:
// 520 x 256 quantized to f8e4m3 with per-tensor scales, then multiplied as torch._scaled_mm does
// (examples::tile_abs_max, quantize_e4m3, fp8_linear).
//
// Shows the 8-bit float dtypes end to end: a reduction for each tensor's amax (per-tile maxima,
// the largest taken on the host), a quantizing cast (scale 448 / amax, rounded to nearest even and
// saturated), and the product of the 8-bit tiles with the scales applied in the epilogue, B given
// as the transposed() view of the N x K weight (K-major: how the tensor cores read 8-bit floats).
// On an sm_90 GPU the product runs as TMA + wgmma of e4m3, on sm_89 and newer as mma.sync of e4m3;
// other targets run it as loops. Runs on the GPU when one is present, else on the CPU target
// (TESSERA_TARGET overrides). Checks every element against the product of the quantized values
// (exact products, an f32 sum, one bf16 rounding) and prints how far fp8 puts y from the product
// of the bf16 inputs.
#include <tessera/tessera.h>

#include "example_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using tessera::bfloat16;
using tessera::float8_e4m3;
using tessera::Tensor;

// The largest |x| of a matrix: per-tile maxima on the device, their largest here.
float amax(const Tensor<bfloat16, 2>& x) {
  const int64_t tiles_m = (x.shape(0) + 63) / 64, tiles_n = (x.shape(1) + 255) / 256;
  Tensor<float, 2> partial({tiles_m, tiles_n});
  examples::tile_abs_max().launch(partial.partition<1, 1>(), x);
  const std::vector<float> p = partial.to_vector();
  return *std::max_element(p.begin(), p.end());
}

// x quantized to f8e4m3 with the per-tensor scale that maps its amax to 448; returns the scale
// that undoes it (amax / 448), as torch._scaled_mm takes it.
float quantize(const Tensor<bfloat16, 2>& x, Tensor<float8_e4m3, 2>& q) {
  const float a = std::max(amax(x), 1e-12f);
  examples::quantize_e4m3().launch(q.partition<1, 1024>(), x, 448.0f / a);
  return a / 448.0f;
}

}  // namespace

int run() {
  const int64_t m = 300, n = 520, k = 256;
  Tensor<bfloat16, 2> x({m, k}), w({n, k}), y({m, n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j) x(i, j) = bfloat16(3.0f * std::sin(0.37f * static_cast<float>(i * k + j)));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) w(i, j) = bfloat16(0.05f * std::cos(0.11f * static_cast<float>(i * k + j)));

  Tensor<float8_e4m3, 2> qx({m, k}), qw({n, k});
  const float scale_x = quantize(x, qx), scale_w = quantize(w, qw);
  examples::fp8_linear().launch(y.partition<128, 128>(), qx, qw.transposed(), scale_x, scale_w);

  // Against the product of the quantized values: exact products summed in f32, scaled, one bf16
  // rounding (2^-8 of the value). Hopper's 8-bit tensor cores keep 13 bits of each instruction's
  // sum and tessera adds each K step's partial sum in f32, which stays within 2^-9 of the sum of
  // |products| (docs/compiler.md). Beside it, the distance from the bf16 inputs' product, relative
  // to the sum of |x||w| (what e4m3's 3 mantissa bits cost: a few percent at most).
  const std::vector<float8_e4m3> qxv = qx.to_vector(), qwv = qw.to_vector();
  const std::vector<bfloat16> xv = x.to_vector(), wv = w.to_vector(), yv = y.to_vector();
  const double scale = double(scale_x) * scale_w;
  int64_t bad = 0;
  double worst = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0, magnitude = 0, exact = 0, exact_magnitude = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double p = double(static_cast<float>(qxv[i * k + q])) * static_cast<float>(qwv[j * k + q]);
        want += p;
        magnitude += std::abs(p);
        const double e = double(static_cast<float>(xv[i * k + q])) * static_cast<float>(wv[j * k + q]);
        exact += e;
        exact_magnitude += std::abs(e);
      }
      want *= scale;
      const double got = static_cast<float>(yv[i * n + j]);
      if (std::abs(got - want) >
          std::ldexp(1.0, -8) * std::abs(want) + (2 * k * std::ldexp(1.0, -24) + std::ldexp(1.0, -9)) * magnitude * scale)
        ++bad;
      worst = std::max(worst, std::abs(got - exact) / exact_magnitude);
    }
  const tessera::Target t = tessera::default_target();
  const std::string target(tessera::to_string(t));
  const char* how = t == tessera::Target::sm_90                                  ? "wgmma e4m3"
                    : t == tessera::Target::cpu || t == tessera::Target::sm_80 ||
                              t == tessera::Target::sm_86                        ? "loops"
                                                                                 : "mma.sync e4m3";
  std::printf("fp8_linear on %s (%s): %lld x %lld x %lld, scales %.3g and %.3g, %lld mismatches against the "
              "quantized product; fp8 against bf16: at most %.2g of sum |x||w|\n",
              target.c_str(), how, static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k),
              scale_x, scale_w, static_cast<long long>(bad), worst);
  return bad == 0 && worst < 0.125 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "fp8_matmul: %s\n", e.what());
    return 2;
  }
}
