// matmul.cpp: a matrix product with a fused epilogue, y = bf16(relu(a @ b + bias)), for bf16
// a: 300 x 200 and b: 200 x 520, in 128 x 128 output tiles (examples::matmul_bias_relu).
//
// Shows a K loop carrying an f32 accumulator through mma, ragged M, N and K (no dimension is a
// multiple of its tile: tiles past an edge read as zero), and an epilogue fused before the store.
// On an sm_90 GPU (H100, H200) the kernel runs on tensor cores: TMA loads and wgmma, with the
// epilogue applied to the accumulators in registers (docs/compiler.md, "Tensor cores"); other
// targets run it as loops. Runs on the GPU when one is present, else on the CPU target
// (TESSERA_TARGET overrides); checks every element against a host product accumulated in double.
#include <tessera/tessera.h>

#include "example_kernels.h"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

int run() {
  const int64_t m = 300, n = 520, k = 200;
  tessera::Tensor<tessera::bfloat16, 2> a({m, k}), b({k, n}), y({m, n});
  tessera::Tensor<tessera::bfloat16, 1> bias({n});
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < k; ++j) a(i, j) = tessera::bfloat16(std::sin(0.37f * static_cast<float>(i * k + j)));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < n; ++j) b(i, j) = tessera::bfloat16(std::cos(0.11f * static_cast<float>(i * n + j)));
  for (int64_t j = 0; j < n; ++j) bias(j) = tessera::bfloat16(0.01f * static_cast<float>(j % 50) - 0.25f);

  auto matmul = examples::matmul_bias_relu();
  matmul.launch(y.partition<128, 128>(), a, b, bias);

  // The bf16 output is within 2^-8 of the exact value, plus the f32 accumulation's error (at most
  // about K 2^-24 times the sum of |a||b|).
  const std::vector<tessera::bfloat16> av = a.to_vector(), bv = b.to_vector(), biasv = bias.to_vector(), yv = y.to_vector();
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = static_cast<float>(biasv[j]), magnitude = 0;
      for (int64_t q = 0; q < k; ++q) {
        const double p = double(static_cast<float>(av[i * k + q])) * static_cast<float>(bv[q * n + j]);
        want += p;
        magnitude += std::abs(p);
      }
      want = std::max(want, 0.0);
      const double got = static_cast<float>(yv[i * n + j]);
      if (std::abs(got - want) > std::ldexp(1.0, -8) * std::abs(want) + 2 * k * std::ldexp(1.0, -24) * magnitude) ++bad;
    }
  const std::string target(tessera::to_string(tessera::default_target()));
  const char* how = tessera::default_target() == tessera::Target::sm_90 ? "tensor cores" : "loops";
  std::printf("matmul_bias_relu on %s (%s): %lld x %lld x %lld, %lld mismatches\n", target.c_str(), how,
              static_cast<long long>(m), static_cast<long long>(n), static_cast<long long>(k), static_cast<long long>(bad));
  return bad == 0 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "matmul: %s\n", e.what());
    return 2;
  }
}
