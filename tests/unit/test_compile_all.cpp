// test_compile_all.cpp: Kernel::pending_compile and tessera::compile_all, a warm-up's compiles
// described at once and run on threads: the views they were described from may be gone, the
// launches afterwards compile nothing, results are those of launches compiled one at a time, and
// a compile that fails is rethrown once every other has ended.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <vector>

#include "execution_helpers.h"
#include "scoped_env.h"

using namespace tessera;
using Catch::Matchers::Contains;

namespace {

auto scaled_kernel() {
  return kernel("compile_all_scaled", [](auto out, auto x, auto s) { return out.store(x.load_like(out) * s); });
}
template <int N>
auto row_sums() {
  return kernel(N == 16 ? "compile_all_row_sums16" : "compile_all_row_sums8", [](auto out, auto x) {
    return out.store(reshape<N>(sum<1>(load<N, 64>(x, program_id<0>(), c<0>))));
  });
}

// A disk cache of the test's own, and nothing compiled in the process's memory.
struct FreshCaches : test_env::FreshDiskCache {
  FreshCaches() { clear_memory_cache(); }
};

}  // namespace

static void compiles_on_threads(Target target) {
  FreshCaches fresh;
  const LaunchOptions o{.target = target};
  Tensor<float, 2> x({300, 64});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(i % 17) - 8.0f;
  Tensor<float, 1> v({600}), y({300}), sums({300}), sums8({300});
  for (int64_t i = 0; i < v.numel(); ++i) v.data()[i] = static_cast<float>(i);
  std::vector<PendingCompile> compiles;
  {
    // Described from a view that is gone before the compiles run.
    Tensor<float, 1> part = v.slice(0, 100, 400);
    compiles.push_back(scaled_kernel().pending_compile(o, y.partition<128>(), part, 2.5f));
  }
  compiles.push_back(row_sums<16>().pending_compile(o, sums.partition<16>(), x));
  compiles.push_back(row_sums<8>().pending_compile(o, sums8.partition<8>(), x));
  // The same specialization twice: compiled once.
  compiles.push_back(row_sums<16>().pending_compile(o, sums.partition<16>(), x));
  CHECK(compiles.front().kernel() == "compile_all_scaled");

  const CacheStats before = cache_stats();
  compile_all(compiles, 4);
  const CacheStats compiled = cache_stats();
  CHECK(compiled.compiles - before.compiles == 3);

  Tensor<float, 1> part = v.slice(0, 100, 400);
  scaled_kernel().launch(o, y.partition<128>(), part, 2.5f);
  row_sums<16>().launch(o, sums.partition<16>(), x);
  row_sums<8>().launch(o, sums8.partition<8>(), x);
  const CacheStats launched = cache_stats();
  CHECK(launched.compiles == compiled.compiles);
  CHECK(launched.memory_hits - compiled.memory_hits >= 3);
  for (int64_t r = 0; r < 300; ++r) {
    float expect = 0;
    for (int64_t col = 0; col < 64; ++col) expect += x.data()[r * 64 + col];
    INFO("row " << r);
    CHECK(y.data()[r] == static_cast<float>(100 + r) * 2.5f);
    CHECK(sums.data()[r] == Approx(expect));
    CHECK(sums8.data()[r] == Approx(expect));
  }
}
TESSERA_TARGET_TEST_CASE("compile_all compiles pending launches on threads; the launches then compile nothing",
                         "[compile_all][counts-compiles]", compiles_on_threads)

static void rethrows_after_all(Target target) {
  FreshCaches fresh;
  const LaunchOptions o{.target = target};
  Tensor<float, 2> x({300, 64});
  Tensor<float, 1> short_column({299}), y({300}), sums({300});
  std::vector<PendingCompile> compiles;
  compiles.push_back(row_sums<16>().pending_compile(o, sums.partition<16>(), x));
  // An input loaded like the output must have its shape: the compile's argument check throws.
  compiles.push_back(scaled_kernel().pending_compile(o, y.partition<128>(), short_column, 1.0f));
  compiles.push_back(row_sums<8>().pending_compile(o, sums.partition<8>(), x));
  for (unsigned threads : {1u, 3u}) {
    INFO(threads << " threads");
    CHECK_THROWS_WITH(compile_all(compiles, threads),
                      Contains("kernel 'compile_all_scaled'") && Contains("input parameter 1 has shape [299]"));
  }
  // The other compiles ran all the same: their launches find them.
  const CacheStats before = cache_stats();
  row_sums<16>().launch(o, sums.partition<16>(), x);
  row_sums<8>().launch(o, sums.partition<8>(), x);
  CHECK(cache_stats().compiles == before.compiles);
  compile_all({}, 0);  // nothing to compile: returns
}
TESSERA_TARGET_TEST_CASE("compile_all rethrows the first failed compile once every compile has ended",
                         "[compile_all][counts-compiles]", rethrows_after_all)
