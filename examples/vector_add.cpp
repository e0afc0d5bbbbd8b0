// vector_add.cpp: the main example. z = x + y over a million floats, in 128-wide tiles.
//
// Runs on the GPU when one is present, else on the CPU target (TESSERA_TARGET overrides), and
// checks every element against a host loop. Exits non-zero on a mismatch, and prints a
// tessera::Error (no usable GPU for TESSERA_TARGET, say) instead of dying on it.
#include <tessera/tessera.h>

#include "example_kernels.h"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int run() {
  const int64_t n = 1'000'001;  // deliberately not a multiple of the tile: the last tile is masked
  tessera::Tensor<float, 1> x({n}), y({n}), z({n});
  for (int64_t i = 0; i < n; ++i) {
    x(i) = 0.5f * static_cast<float>(i);
    y(i) = 1.0f - static_cast<float>(i % 7);
  }

  auto add = examples::vector_add();

  auto t0 = std::chrono::steady_clock::now();
  add.launch(z.partition<128>(), x, y);  // first launch compiles (JIT), then runs
  auto t1 = std::chrono::steady_clock::now();
  add.launch(z.partition<128>(), x, y);  // served from the in-process cache
  auto t2 = std::chrono::steady_clock::now();

  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    if (z(i) != x(i) + y(i)) ++bad;
  auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const std::string target(tessera::to_string(tessera::default_target()));
  std::printf("vector_add on %s: %lld elements, first launch %.1f ms (compile + run), second %.2f ms, %lld mismatches\n",
              target.c_str(), static_cast<long long>(n), ms(t0, t1), ms(t1, t2), static_cast<long long>(bad));
  return bad == 0 ? 0 : 1;
}

int main() {
  try {
    return run();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "vector_add: %s\n", e.what());
    return 2;
  }
}
