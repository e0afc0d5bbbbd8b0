// test_tail_halves.cpp: the wgmma GEMM's last round in halves (convert-tile-matmul-to-nvvm's
// halve-tail). Without a split, where the programs of the persistent CTAs' last round are no more
// than half the CTAs, each of them runs as two halves of BN / 2 columns on two CTAs, all of K each.
// Products of more programs than the 132 SMs of an H100 or H200 (144 programs of 128 x 256 and 160
// of 128 x 128 8-bit tiles: last rounds of 12 and 28, halved there; on a GPU of other SM counts
// the round may stay whole, and the results must be the same) equal the host reference: 128 x 256
// tiles with a row-major and a K-major B, ragged M, N (the last column of tiles half outside the
// output) and K, bf16 (TMA-stored) and f32 outputs, a bias + GELU epilogue (its bias read from
// global memory in the halves too), and 8-bit float inputs at 128 x 128 x 128. The CPU target runs
// smaller shapes. The sm_90a PTX of a 128 x 256 GEMM has both wgmma shapes and nothing spilled;
// a split kernel and one of 64 columns have no halves. The 128 x 128 products of test_split_k.cpp
// at split_k 0 (160 and 288 programs) cover that tile's halves, tile epilogues included.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <string>
#include <vector>

#include "execution_helpers.h"
#include "gemm_products.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"
#include "ptxas_log.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;
using exec_test::random_tensor;

namespace {

using namespace matmul_reference;

struct Shape {
  int64_t m, n, k;
};

void halves_results(Target target) {
  // 8 x 18 programs of 128 x 256: N = 4600 leaves 248 columns in the last tile column, 120 in its
  // second half; M and K ragged.
  LaunchOptions o;
  o.target = target;
  if (target == Target::cpu)
    gemm_products::equal_the_reference<128, 256>(o, 200, 600, 72, 61);
  else
    gemm_products::equal_the_reference<128, 256>(o, 1000, 4600, 200, 61);
}

void float8_halves_results(Target target) {
  // 8 x 20 programs of 128 x 128 x 128 e4m3 (K-major B, as 8-bit wgmma reads it): halves of 64
  // columns, wgmma m64n64k32.
  const Shape s = target == Target::cpu ? Shape{130, 300, 144} : Shape{1000, 2552, 272};
  INFO("M " << s.m << ", N " << s.n << ", K " << s.k);
  auto a = random_tensor<float8_e4m3, 2>({s.m, s.k}, -2, 2, 64);
  auto w = random_tensor<float8_e4m3, 2>({s.n, s.k}, -2, 2, 65);
  const Reference r = reference_wt(a, w);
  Tensor<float, 2> wide({s.m, s.n});
  matmul_kernels::matmul<128, 128, 128>().launch_on(target, wide.partition<128, 128>(), a, w.transposed());
  CHECK(mismatches(r, s.m, s.n, product_bound(DType::f8e4m3, s.k), 0, [&](int64_t i, int64_t j) { return double(wide(i, j)); },
                   [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
}

}  // namespace

TESSERA_TARGET_TEST_CASE("tail halves: wgmma GEMMs whose last round runs in halves equal the reference",
                         "[matmul][tail-halves]", halves_results)

TESSERA_TARGET_TEST_CASE("tail halves: 8-bit float GEMMs whose last round runs in halves equal the reference",
                         "[matmul][tail-halves]", float8_halves_results)

TEST_CASE("tail halves: the sm_90a GEMM of 256 columns has a half of 128, nothing spilled; splits and 64 columns none",
          "[matmul][tail-halves][compile]") {
  if (!exec_test::toolchain_present()) return;
  const std::string ptxas = ptxas_log::toolkit_ptxas_or_warn();
  Tensor<bfloat16, 2> a({1024, 4096}), b({4096, 2560}), w({2560, 4096}), out({1024, 2560});
  LaunchOptions o;
  o.target = Target::sm_90;
  const CompiledArtifact row = matmul_kernels::matmul<128, 256, 64>().compile(o, out.partition<128, 256>(), a, b);
  const CompiledArtifact kmajor =
      matmul_kernels::matmul<128, 256, 64>().compile(o, out.partition<128, 256>(), a, w.transposed());
  const CompiledArtifact gelu =
      matmul_kernels::matmul_bias_gelu<128, 256, 64>().compile(o, out.partition<128, 256>(), a, b, Tensor<bfloat16, 1>({2560}));
  for (const CompiledArtifact* c : {&row, &kmajor, &gelu}) {
    CHECK(occurrences(c->ptx, "wgmma.mma_async.sync.aligned.m64n256k16") == 4);
    CHECK(occurrences(c->ptx, "wgmma.mma_async.sync.aligned.m64n128k16") == 4);
    ptxas_log::check_gemm_log(ptxas, c->ptx);
  }
  // A K-major B's halves load through a map of their own: A's, B's, the output's and B's halves'.
  CHECK(occurrences(row.ptx, ".param .align 64 .b8") == 3);
  CHECK(occurrences(kmajor.ptx, ".param .align 64 .b8") == 4);
  const CompiledArtifact narrow = matmul_kernels::matmul<128, 64, 64>().compile(o, out.partition<128, 64>(), a, b);
  CHECK(occurrences(narrow.ptx, "wgmma.mma_async.sync.aligned.m64n64k16") == 4);
  CHECK(occurrences(narrow.ptx, "wgmma.mma_async.sync.aligned.m64n32k16") == 0);
  o.hints.split_k = 2;
  const CompiledArtifact split = matmul_kernels::matmul<128, 256, 64>().compile(o, out.partition<128, 256>(), a, b);
  CHECK(occurrences(split.ptx, "wgmma.mma_async.sync.aligned.m64n256k16") == 8);
  CHECK(occurrences(split.ptx, "wgmma.mma_async.sync.aligned.m64n128k16") == 0);
}
