// test_threads_hint.cpp: CompilerHints::threads, the threads of one program chosen by the caller.
// Kernels lowered element by element compute the same results at any power of two from 32 to 1024
// threads (a matrix-vector product whose rows then spread over fewer or more threads, and an
// elementwise kernel whose tile has fewer elements than threads), on both targets (the CPU target
// runs a program on one thread and ignores the hint); the sm_90 PTX declares the threads asked
// for; a tensor-core GEMM keeps its own warpgroups; anything else is an error naming the kernel.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <string>
#include <vector>

#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matvec_reference.h"

using namespace tessera;
using exec_test::random_tensor;

namespace {

auto hinted_matvec() { return matvec_reference::matvec_16x512("hinted_matvec"); }

// out = 2 x + 1 over [16, 32] tiles: 512 elements, fewer than 1024 threads.
auto hinted_axpb() {
  return kernel("hinted_axpb", [](auto out, auto x) {
    return out.store(load<16, 32>(x, program_id<0>(), program_id<1>()) * c<2.0f> + c<1.0f>);
  });
}

void hinted_results(Target target) {
  const std::pair<int64_t, int64_t> shapes[] = {{37, 1000}, {64, 2048}, {5, 300}};
  for (auto [n, k] : shapes)
    for (int threads : {0, 32, 128, 256, 1024}) {
      INFO("N = " << n << ", K = " << k << ", threads = " << threads);
      auto w = random_tensor<bfloat16, 2>({n, k}, -1, 1, 41);
      auto v = random_tensor<float, 1>({k}, -1, 1, 42);
      LaunchOptions options;
      options.target = target;
      options.hints.threads = threads;
      Tensor<float, 1> y({n});
      hinted_matvec().launch(options, y.partition<16>(), w, v);
      const matvec_reference::Rows want = matvec_reference::product(w, v);
      CHECK(matvec_reference::mismatches(y, want.value, want.magnitude, k) == 0);

      auto x = random_tensor<float, 2>({n, 70}, -1, 1, 43);
      Tensor<float, 2> out({n, 70});
      hinted_axpb().launch(options, out.partition<16, 32>(), x);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < 70; ++j) REQUIRE(out(i, j) == x(i, j) * 2.0f + 1.0f);
    }
}

// The `.maxntid` of a PTX entry: its threads per CTA.
int maxntid(const std::string& ptx) {
  const auto at = ptx.find(".maxntid");
  return at == std::string::npos ? 0 : std::stoi(ptx.substr(at + 8));
}

}  // namespace

TESSERA_TARGET_TEST_CASE("threads hint: the same results at 32 to 1024 threads per program", "[threads-hint]",
                         hinted_results)

TEST_CASE("threads hint: the sm_90 PTX has the threads asked for; a tensor-core GEMM keeps its own",
          "[threads-hint][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> w({64, 1024});
  Tensor<float, 1> v({1024}), y({64});
  auto with = [](int threads) {
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints.threads = threads;
    return o;
  };
  // The compiler's choice for 16 x 512 tiles in a loop: 512 threads (2 rows of 8 columns each).
  CHECK(maxntid(hinted_matvec().compile(with(0), y.partition<16>(), w, v).ptx) == 512);
  CHECK(maxntid(hinted_matvec().compile(with(256), y.partition<16>(), w, v).ptx) == 256);
  CHECK(maxntid(hinted_matvec().compile(with(64), y.partition<16>(), w, v).ptx) == 64);
  Tensor<bfloat16, 2> a({256, 128}), b({128, 256}), out({256, 256});
  const CompiledArtifact gemm =
      matmul_kernels::matmul<128, 128, 64>().compile(with(256), out.partition<128, 128>(), a, b);
  CHECK(gemm.ptx.find("wgmma.mma_async") != std::string::npos);
}

TEST_CASE("threads hint: other than 0 or a power of two from 32 to 1024 is an error naming the kernel", "[threads-hint]") {
  Tensor<bfloat16, 2> w({64, 1024});
  Tensor<float, 1> v({1024}), y({64});
  for (int threads : {16, 48, 2048, -32}) {
    LaunchOptions o;
    o.target = Target::cpu;
    o.hints.threads = threads;
    CHECK_THROWS_WITH(hinted_matvec().launch(o, y.partition<16>(), w, v),
                      Catch::Contains("kernel 'hinted_matvec'") &&
                          Catch::Contains("threads is " + std::to_string(threads)));
  }
}
