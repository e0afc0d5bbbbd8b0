// test_ping_pong.cpp: the wgmma GEMM's ping-pong schedule (CompilerHints::ping_pong; the pass
// option ping-pong of convert-tile-matmul-to-nvvm). The two consumer warpgroups take the CTA's
// programs in turn, each multiplying all rows of its own while the other runs its epilogue; named
// barriers hand the products from one to the next. Products under the hint equal the host
// reference on both targets (the CPU target ignores the hint): tiles of 128 x 128 (two wgmma per K
// step), 64 x 128 and 64 x 256 (one), ragged M, N and K, K of one tile and less, programs fewer
// than the SMs (each CTA's only program is consumer 0's) and two to three rounds of them (both
// consumers, the ring stepped over the other's programs), a row-major and a K-major B, bf16 and
// f32 outputs, and a bias + GELU epilogue, all staged in each consumer's BM rows of shared memory
// and TMA-stored (the epilogue's loads beside 128 accumulators a thread included, where the
// cooperative schedule stores from registers). The sm_90a PTX has the hand-over barriers, TMA
// stores and no stores from registers, and nothing spilled; tiles over 128 x 128 and split
// products keep the cooperative schedule.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <string>

#include "execution_helpers.h"
#include "gemm_products.h"
#include "matmul_kernels.h"
#include "ptxas_log.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;

namespace {

LaunchOptions ping_pong_launch(Target target) {
  LaunchOptions o;
  o.target = target;
  o.hints.ping_pong = true;
  return o;
}

void ping_pong_results(Target target) {
  // N and K multiples of 8: rows 16-byte aligned, as TMA needs. On the GPU: 288 programs of
  // 128 x 128 (two or three per CTA on 132 SMs), 6 (one per CTA), and K of one tile (40).
  const LaunchOptions o = ping_pong_launch(target);
  using gemm_products::equal_the_reference;
  if (target == Target::cpu) {
    equal_the_reference<128, 128>(o, 200, 264, 72, 71);
    equal_the_reference<128, 128>(o, 130, 136, 40, 71);
    equal_the_reference<64, 256>(o, 100, 264, 72, 71);
    return;
  }
  equal_the_reference<128, 128>(o, 1000, 4600, 200, 71);
  equal_the_reference<128, 128>(o, 200, 300, 72, 71);
  equal_the_reference<128, 128>(o, 1000, 2000, 40, 71);
  equal_the_reference<64, 128>(o, 1000, 2000, 136, 71);
  equal_the_reference<64, 256>(o, 1000, 2000, 136, 71);
}

}  // namespace

TESSERA_TARGET_TEST_CASE("ping-pong: wgmma GEMMs whose consumers take programs in turn equal the reference",
                         "[matmul][ping-pong]", ping_pong_results)

TEST_CASE("ping-pong: the sm_90a GEMM hands its products over at named barriers, nothing spilled",
          "[matmul][ping-pong][compile]") {
  if (!exec_test::toolchain_present()) return;
  const std::string ptxas = ptxas_log::toolkit_ptxas_or_warn();
  Tensor<bfloat16, 2> a({1024, 4096}), b({4096, 2560}), out({1024, 2560});
  LaunchOptions o = ping_pong_launch(Target::sm_90);
  const CompiledArtifact plain = matmul_kernels::matmul<128, 128, 64>().compile(o, out.partition<128, 128>(), a, b);
  const CompiledArtifact gelu = matmul_kernels::matmul_bias_gelu<128, 128, 64>().compile(
      o, out.partition<128, 128>(), a, b, Tensor<bfloat16, 1>({2560}));
  const CompiledArtifact wide = matmul_kernels::matmul_bias_gelu<64, 256, 64>().compile(
      o, out.partition<64, 256>(), a, b, Tensor<bfloat16, 1>({2560}));
  for (const CompiledArtifact* c : {&plain, &gelu, &wide}) {
    // Each consumer waits for the other's products and hands its own over.
    CHECK(occurrences(c->ptx, "bar.arrive 4, 256;") == 1);
    CHECK(occurrences(c->ptx, "bar.arrive 5, 256;") == 1);
    // The output staged and TMA-stored (TMA clips the ragged edges): no element stored from
    // registers, each behind its bounds test.
    CHECK(occurrences(c->ptx, "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group") > 0);
    CHECK(occurrences(c->ptx, "st.global") == 0);
    ptxas_log::check_gemm_log(ptxas, c->ptx);
  }
  // 128 rows: two wgmma per K step, four K steps; no halves.
  CHECK(occurrences(plain.ptx, "wgmma.mma_async.sync.aligned.m64n128k16") == 8);
  CHECK(occurrences(plain.ptx, "wgmma.mma_async.sync.aligned.m64n64k16") == 0);
  CHECK(occurrences(wide.ptx, "wgmma.mma_async.sync.aligned.m64n256k16") == 4);
  // Over 128 x 128, or with a split: the cooperative schedule.
  const CompiledArtifact big = matmul_kernels::matmul<128, 256, 64>().compile(o, out.partition<128, 256>(), a, b);
  CHECK(occurrences(big.ptx, "bar.arrive") == 0);
  o.hints.split_k = 2;
  const CompiledArtifact split = matmul_kernels::matmul<128, 128, 64>().compile(o, out.partition<128, 128>(), a, b);
  CHECK(occurrences(split.ptx, "bar.arrive") == 0);
}
