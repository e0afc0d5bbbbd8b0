// test_split_k.cpp: CompilerHints::split_k, a program's K loop shared by the CTAs of a cluster
// (tile-split-k-loop). Matrix-vector products in the engine's three forms (a plain product, one
// whose epilogue reads its own output tile back and adds to it, one with two carried sums and a
// folded norm) compute the reference results at S = 2, 4 and 8, for long rows, ragged ones and
// rows shorter than one step (the CTAs past the first then run no iteration); a kernel the pass
// does not take (a sum that starts at one) runs as it is. The CPU target ignores the hint. On sm_90 the PTX declares
// clusters of S and meets through cluster barriers and distributed shared memory, with nothing
// spilled; below sm_90 the hint is ignored; other values are an error naming the kernel.
// GEMM kernels that take mma.sync (16-row tiles: a decoder's projections of a few tokens) split
// their k-tiles the same way: plain and with a bias + GELU epilogue, whole, ragged and K below
// one tile, against the host reference; and so do GEMM kernels that take wgmma (128 x 128 tiles on
// sm_90a: persistent clusters, the last round's programs split), with row-major and K-major B, bf16
// and f32 outputs, and an epilogue that reads tiles of other arguments (through TMA where aligned).
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <string>
#include <vector>

#include "driver/nvjitlink.h"
#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"
#include "matvec_reference.h"
#include "ptxas_log.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;
using exec_test::random_tensor;

namespace {

auto split_matvec() { return matvec_reference::matvec_16x512("split_matvec"); }

// x += W v over 8-row tiles: the epilogue reads the program's own output tile back.
auto split_residual() {
  return kernel("split_residual", [](auto x, auto w, auto v) {
    auto acc = for_range(
        (dim<0>(v) + c<511>) / c<512>,
        [=](auto k, auto acc) {
          return acc + cast<DType::f32>(load<8, 512>(w, program_id<0>(), k)) * reshape<1, 512>(load<512>(v, k));
        },
        full<DType::f32, 8, 512>(c<0.0>));
    return x.store(x.load() + reshape<8>(sum<1>(acc)));
  });
}

// y = (W v) * rsqrt(mean(v^2)): two carried sums, as the engine's products with a folded norm.
auto split_norm() {
  return kernel("split_norm", [](auto y, auto w, auto v) {
    auto r = for_range(
        (dim<0>(v) + c<511>) / c<512>,
        [=](auto k, auto acc, auto squares) {
          auto x = load<512>(v, k);
          return carry(acc + cast<DType::f32>(load<16, 512>(w, program_id<0>(), k)) * reshape<1, 512>(x),
                       squares + x * x);
        },
        full<DType::f32, 16, 512>(c<0.0>), full<DType::f32, 512>(c<0.0>));
    auto inv = rsqrt(sum<0>(get<1>(r)) / cast<DType::f32>(dim<0>(v)));
    return y.store(reshape<16>(sum<1>(get<0>(r))) * inv);
  });
}

// A sum that starts at one, not zero: not split; it runs as it is under the hint (W v + 512).
auto split_from_one() { return matvec_reference::matvec_rows<16, 1>("split_from_one"); }

// A launch on `target` with CompilerHints::split_k = `split`.
LaunchOptions split_launch(Target target, int split) {
  LaunchOptions o;
  o.target = target;
  o.hints.split_k = split;
  return o;
}

void split_results(Target target) {
  const std::pair<int64_t, int64_t> shapes[] = {{2560, 4096}, {37, 1000}, {64, 300}, {16, 9728}};
  for (auto [n, k] : shapes)
    for (int split : {0, 2, 4, 8}) {
      INFO("N = " << n << ", K = " << k << ", split_k = " << split);
      auto w = random_tensor<bfloat16, 2>({n, k}, -1, 1, 51);
      auto v = random_tensor<float, 1>({k}, -1, 1, 52);
      const LaunchOptions options = split_launch(target, split);
      const matvec_reference::Rows want = matvec_reference::product(w, v);

      Tensor<float, 1> y({n});
      split_matvec().launch(options, y.partition<16>(), w, v);
      CHECK(matvec_reference::mismatches(y, want.value, want.magnitude, k) == 0);

      auto x = random_tensor<float, 1>({n}, -1, 1, 53);
      std::vector<double> with_x(want.value), magnitude(want.magnitude);
      for (int64_t i = 0; i < n; ++i) {
        with_x[i] += x(i);
        magnitude[i] += std::abs(x(i));
      }
      split_residual().launch(options, x.partition<8>(), w, v);
      CHECK(matvec_reference::mismatches(x, with_x, magnitude, k + 1) == 0);

      double squares = 0;
      for (int64_t j = 0; j < k; ++j) squares += double(v(j)) * v(j);
      const double inv = 1.0 / std::sqrt(squares / double(k));
      std::vector<double> normed(want.value), normed_magnitude(want.magnitude);
      for (int64_t i = 0; i < n; ++i) {
        normed[i] *= inv;
        normed_magnitude[i] = (normed_magnitude[i] + std::abs(want.value[i])) * inv;
      }
      Tensor<float, 1> z({n});
      split_norm().launch(options, z.partition<16>(), w, v);
      // rsqrt's few ulps on top of the sums' rounding.
      CHECK(matvec_reference::mismatches(z, normed, normed_magnitude, 2 * k + 64) == 0);

      std::vector<double> plus_512(want.value);
      for (double& e : plus_512) e += 512;
      split_from_one().launch(options, y.partition<16>(), w, v);
      CHECK(matvec_reference::mismatches(y, plus_512, want.magnitude, k + 512) == 0);
    }
}

// out = a w^T + (with_gelu) GELU(. + bias), for a: M x K and w: N x K (its transposed view the
// K-major B), in 16 x 64 x 128 tiles: mma.sync on a GPU, whose k-tiles the split shares.
void split_mma_results(Target target) {
  using namespace matmul_reference;
  struct Shape {
    int64_t m, n, k;
  };
  // Whole tiles with a long K; M, N and K ragged; one k-tile (ranks past the last run none); K
  // below one tile. N a multiple of 8: the output's rows 16-byte aligned, as the lowering needs.
  for (const Shape& s : {Shape{16, 640, 2048}, Shape{13, 200, 1000}, Shape{16, 64, 128}, Shape{5, 88, 40}}) {
    auto a = random_tensor<bfloat16, 2>({s.m, s.k}, -1, 1, 61);
    auto w = random_tensor<bfloat16, 2>({s.n, s.k}, -1, 1, 62);
    auto bias = random_tensor<bfloat16, 1>({s.n}, -1, 1, 63);
    const Reference r = reference(s.m, s.n, s.k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                                  [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
    const double bound = product_bound(DType::bf16, s.k), rel = std::ldexp(1.0, -8);
    for (int split : {0, 2, 4, 8}) {
      INFO("M " << s.m << ", N " << s.n << ", K " << s.k << ", split_k = " << split);
      const LaunchOptions options = split_launch(target, split);
      Tensor<bfloat16, 2> out({s.m, s.n});
      auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
      matmul_kernels::matmul<16, 64, 128>().launch(options, out.partition<16, 64>(), a, w.transposed());
      CHECK(mismatches(r, s.m, s.n, bound, rel, got, [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
      matmul_kernels::matmul_bias_gelu<16, 64, 128>().launch(options, out.partition<16, 64>(), a, w.transposed(),
                                                             bias);
      CHECK(mismatches(r, s.m, s.n, 1.13 * bound, rel, got,
                       [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
    }
  }
}

// out = a b (+ GELU(. + bias)) in 128 x 128 x 64 tiles: on sm_90 the warp-specialized wgmma lowering,
// whose persistent CTAs run in clusters of S, each cluster sharing the k-tiles of a program of the
// last round; B row-major or K-major (the transposed view of N x K), bf16 (TMA-stored) and f32
// outputs, an epilogue that loads the bias.
void split_wgmma_results(Target target) {
  using namespace matmul_reference;
  struct Shape {
    int64_t m, n, k;
  };
  // Whole tiles with a long K; M, N and K ragged; one k-tile (ranks past the first run none); K
  // below one tile: fewer programs than clusters, all split. On GPUs also 160 and 288 programs
  // (ragged M, N and K), more than the 132 SMs of an H100 or H200: the persistent CTAs run one or
  // two rounds of whole programs, and the last round's (28 or 24 on 132 CTAs, more where fewer
  // clusters are resident) are split where they are no more than the clusters (at S = 8 they
  // are not: whole programs only). N a multiple of 8: the output's rows 16-byte aligned.
  const std::vector<int> splits = target == Target::cpu ? std::vector<int>{0} : std::vector<int>{0, 2, 4, 8};
  std::vector<Shape> shapes{Shape{256, 256, 2048}, Shape{200, 136, 1000}, Shape{128, 128, 64}, Shape{130, 64, 40}};
  if (target != Target::cpu) {
    shapes.push_back(Shape{1000, 2536, 256});
    shapes.push_back(Shape{1000, 4600, 200});
  }
  for (const Shape& s : shapes) {
    auto a = random_tensor<bfloat16, 2>({s.m, s.k}, -1, 1, 71);
    auto w = random_tensor<bfloat16, 2>({s.n, s.k}, -1, 1, 72);
    auto bias = random_tensor<bfloat16, 1>({s.n}, -1, 1, 73);
    const Tensor<bfloat16, 2> b = row_major_copy_of_transposed(w);
    const Reference r = reference_wt(a, w);
    const double bound = product_bound(DType::bf16, s.k), rel = std::ldexp(1.0, -8);
    for (int split : splits) {
      INFO("M " << s.m << ", N " << s.n << ", K " << s.k << ", split_k = " << split);
      const LaunchOptions options = split_launch(target, split);
      Tensor<bfloat16, 2> out({s.m, s.n});
      auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
      auto want = [&](int64_t i, int64_t j) { return r.at(i, j); };
      matmul_kernels::matmul<128, 128, 64>().launch(options, out.partition<128, 128>(), a, w.transposed());
      CHECK(mismatches(r, s.m, s.n, bound, rel, got, want) == 0);
      matmul_kernels::matmul<128, 128, 64>().launch(options, out.partition<128, 128>(), a, b);
      CHECK(mismatches(r, s.m, s.n, bound, rel, got, want) == 0);
      Tensor<float, 2> wide({s.m, s.n});
      matmul_kernels::matmul<128, 128, 64>().launch(options, wide.partition<128, 128>(), a, w.transposed());
      CHECK(mismatches(r, s.m, s.n, bound, 0, [&](int64_t i, int64_t j) { return double(wide(i, j)); }, want) == 0);
      matmul_kernels::matmul_bias_gelu<128, 128, 64>().launch(options, out.partition<128, 128>(), a, w.transposed(),
                                                               bias);
      CHECK(mismatches(r, s.m, s.n, 1.13 * bound, rel, got,
                       [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
    }
  }
}

// A one-row product with a row-major B (tile-vector-mma: the batch-1 form bench_matmul's tuner
// also runs split over clusters of 4 and 8), at 1 x 64 x 64 and 1 x 32 x 128: long K, ragged N
// and K, and K below one step, against the host reference.
void split_row_results(Target target) {
  using namespace matmul_reference;
  struct Shape {
    int64_t n, k;
  };
  const std::vector<int> splits = target == Target::cpu ? std::vector<int>{0} : std::vector<int>{0, 4, 8};
  for (const Shape& s : {Shape{2560, 9728}, Shape{100, 1000}, Shape{64, 40}}) {
    auto a = random_tensor<bfloat16, 2>({1, s.k}, -1, 1, 91);
    auto b = random_tensor<bfloat16, 2>({s.k, s.n}, -1, 1, 92);
    const Reference r = reference(1, s.n, s.k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                                  [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
    const double bound = product_bound(DType::bf16, s.k), rel = std::ldexp(1.0, -8);
    for (int split : splits) {
      INFO("N " << s.n << ", K " << s.k << ", split_k = " << split);
      const LaunchOptions options = split_launch(target, split);
      Tensor<bfloat16, 2> out({1, s.n});
      auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
      auto want = [&](int64_t i, int64_t j) { return r.at(i, j); };
      matmul_kernels::matmul<1, 64, 64>().launch(options, out.partition<1, 64>(), a, b);
      CHECK(mismatches(r, 1, s.n, bound, rel, got, want) == 0);
      matmul_kernels::matmul<1, 32, 128>().launch(options, out.partition<1, 32>(), a, b);
      CHECK(mismatches(r, 1, s.n, bound, rel, got, want) == 0);
    }
  }
}

// out = a b * gate and out = a b + skip: an epilogue that reads the output's own tile of another
// argument (an f32 gate, a bf16 skip), as the engine's SwiGLU and residual epilogues read theirs;
// on sm_90a TMA brings such a tile into shared memory while the consumers multiply, where its
// rows are 16-byte aligned. BM 128 has two consumer warpgroups, BM 64 one.
template <bool Gate, int BM = 128>
auto matmul_tile_epilogue() {
  const char* name = Gate ? (BM == 64 ? "matmul_gate_epilogue_64" : "matmul_gate_epilogue")
                          : (BM == 64 ? "matmul_skip_epilogue_64" : "matmul_skip_epilogue");
  return kernel(name, [](auto o, auto a, auto b, auto t) {
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto k, auto acc) { return mma(load<BM, 64>(a, program_id<0>(), k), load<64, 128>(b, k, program_id<1>()), acc); },
        full<DType::f32, BM, 128>(c<0.0>));
    if constexpr (Gate)
      return o.store(cast<DType::bf16>(acc * t.load_like(o)));
    else
      return o.store(cast<DType::bf16>(acc + cast<DType::f32>(t.load_like(o))));
  });
}

// matmul_tile_epilogue at S = 0, 2, 4, 8 (the GPU) against the host reference: whole tiles, ragged
// M, N and K, more programs than SMs (a split last round), and N = 68, whose bf16 rows are not
// 16-byte aligned (the skip and the output then go through global memory; the f32 gate's rows
// are aligned). 64 x 128 tiles (one consumer) at S = 0 and 2. TMA brings the bf16 skip's tiles at
// both tile shapes and the f32 gate's at 64 x 128 (at 128 x 128 they would leave 4 stages).
void tile_epilogue_results(Target target) {
  using namespace matmul_reference;
  struct Shape {
    int64_t m, n, k;
  };
  const std::vector<int> splits = target == Target::cpu ? std::vector<int>{0} : std::vector<int>{0, 2, 4, 8};
  std::vector<Shape> shapes{Shape{256, 256, 512}, Shape{200, 136, 1000}, Shape{130, 68, 40}};
  if (target != Target::cpu) shapes.push_back(Shape{1000, 2536, 256});
  for (const Shape& s : shapes) {
    auto a = random_tensor<bfloat16, 2>({s.m, s.k}, -1, 1, 81);
    auto w = random_tensor<bfloat16, 2>({s.n, s.k}, -1, 1, 82);
    auto gate = random_tensor<float, 2>({s.m, s.n}, -1, 1, 83);
    auto skip = random_tensor<bfloat16, 2>({s.m, s.n}, -1, 1, 84);
    const Reference r = reference(s.m, s.n, s.k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                                  [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
    const double bound = product_bound(DType::bf16, s.k), rel = std::ldexp(1.0, -8);
    for (int split : splits) {
      INFO("M " << s.m << ", N " << s.n << ", K " << s.k << ", split_k = " << split);
      Tensor<bfloat16, 2> out({s.m, s.n});
      auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
      matmul_tile_epilogue<true>().launch(split_launch(target, split), out.partition<128, 128>(), a, w.transposed(),
                                          gate);
      CHECK(mismatches(r, s.m, s.n, bound, rel, got,
                       [&](int64_t i, int64_t j) { return r.at(i, j) * double(gate(i, j)); }) == 0);
      matmul_tile_epilogue<false>().launch(split_launch(target, split), out.partition<128, 128>(), a, w.transposed(),
                                           skip);
      CHECK(mismatches(r, s.m, s.n, bound, rel, got,
                       [&](int64_t i, int64_t j) { return r.at(i, j) + d(skip(i, j)); }) == 0);
      if (split > 2) continue;
      matmul_tile_epilogue<true, 64>().launch(split_launch(target, split), out.partition<64, 128>(), a,
                                              w.transposed(), gate);
      CHECK(mismatches(r, s.m, s.n, bound, rel, got,
                       [&](int64_t i, int64_t j) { return r.at(i, j) * double(gate(i, j)); }) == 0);
      matmul_tile_epilogue<false, 64>().launch(split_launch(target, split), out.partition<64, 128>(), a,
                                               w.transposed(), skip);
      CHECK(mismatches(r, s.m, s.n, bound, rel, got,
                       [&](int64_t i, int64_t j) { return r.at(i, j) + d(skip(i, j)); }) == 0);
    }
  }
}

CompilerHints split(int s) {
  CompilerHints h;
  h.split_k = s;
  return h;
}

}  // namespace

TESSERA_TARGET_TEST_CASE("split_k: products whose K loop the CTAs of a cluster share equal the reference",
                         "[split-k]", split_results)

TEST_CASE("split_k: the sm_90 PTX runs clusters of S through distributed shared memory; below sm_90 it is ignored",
          "[split-k][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> w({2560, 4096});
  Tensor<float, 1> v({4096}), y({2560});
  for (int s : {2, 4, 8}) {
    INFO("split_k = " << s);
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints = split(s);
    const CompiledArtifact a = split_residual().compile(o, y.partition<8>(), w, v);
    CHECK(a.ptx.find(".reqnctapercluster " + std::to_string(s) + ", 1, 1") != std::string::npos);
    CHECK(a.ptx.find("barrier.cluster.arrive.release") != std::string::npos);
    CHECK(a.ptx.find("mapa.shared::cluster.u32") != std::string::npos);
    CHECK(a.ptx.find("ld.shared::cluster.f32") != std::string::npos);
    const std::string log = detail::ptx_to_cubin(a.ptx, "sm_90", std::vector<std::string>{"-verbose"}).info_log;
    INFO(log);
    CHECK(log.find(" 0 bytes spill stores") != std::string::npos);
  }
  LaunchOptions o;
  o.target = Target::sm_89;
  o.hints = split(4);
  CHECK(split_residual().compile(o, y.partition<8>(), w, v).ptx.find(".reqnctapercluster") == std::string::npos);
}

TESSERA_TARGET_TEST_CASE("split_k: 16-row GEMM kernels (mma.sync) whose k-tiles a cluster shares equal the reference",
                         "[split-k][mma_sync]", split_mma_results)

TEST_CASE("split_k: the sm_90 mma.sync GEMM runs clusters of S through distributed shared memory; sm_80 ignores it",
          "[split-k][compile][mma_sync]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> a({16, 9728}), w({2560, 9728}), out({16, 2560});
  for (int s : {2, 4, 8}) {
    INFO("split_k = " << s);
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints = split(s);
    const CompiledArtifact c = matmul_kernels::matmul<16, 64, 128>().compile(o, out.partition<16, 64>(), a, w.transposed());
    CHECK(c.ptx.find("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32") != std::string::npos);
    CHECK(c.ptx.find(".reqnctapercluster " + std::to_string(s) + ", 1, 1") != std::string::npos);
    // The launcher's grid: S CTAs per program.
    CHECK(c.ptx.find("// tessera.ctas_per_program " + std::to_string(s)) != std::string::npos);
    CHECK(c.ptx.find("barrier.cluster.arrive.release") != std::string::npos);
    CHECK(c.ptx.find("mapa.shared::cluster.u32") != std::string::npos);
    const std::string log = detail::ptx_to_cubin(c.ptx, "sm_90", std::vector<std::string>{"-verbose"}).info_log;
    INFO(log);
    CHECK(log.find(" 0 bytes spill stores") != std::string::npos);
  }
  LaunchOptions o;
  o.target = Target::sm_80;
  o.hints = split(4);
  const CompiledArtifact c = matmul_kernels::matmul<16, 64, 128>().compile(o, out.partition<16, 64>(), a, w.transposed());
  CHECK(c.ptx.find("mma.sync.aligned") != std::string::npos);
  CHECK(c.ptx.find(".reqnctapercluster") == std::string::npos);
}

TESSERA_TARGET_TEST_CASE("split_k: wgmma GEMM kernels whose k-tiles a cluster shares equal the reference",
                         "[split-k][matmul]", split_wgmma_results)

TESSERA_TARGET_TEST_CASE("split_k: one-row products with a row-major B whose K loop a cluster shares equal the reference",
                         "[split-k][matmul]", split_row_results)

TESSERA_TARGET_TEST_CASE("split_k: wgmma GEMM kernels whose epilogue reads tiles of other arguments equal the reference",
                         "[split-k][matmul]", tile_epilogue_results)

TEST_CASE("split_k: the sm_90a wgmma GEMM runs persistent clusters of S (none unsplit), with nothing spilled",
          "[split-k][compile][matmul]") {
  if (!exec_test::toolchain_present()) return;
  const std::string ptxas = ptxas_log::toolkit_ptxas_or_warn();
  Tensor<bfloat16, 2> a({1024, 4096}), w({2560, 4096}), out({1024, 2560}), skip({1024, 2560});
  Tensor<float, 2> wide({1024, 2560});
  for (int s : {0, 2, 4, 8}) {
    INFO("split_k = " << s);
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints = split(s);
    // The epilogue's tile of another argument comes through TMA where it leaves 5 stages: a fourth
    // tensor map (a 64-byte aligned parameter of 128 bytes) beside A's, B's and the output's for
    // the bf16 skip at 128 x 128 and the f32 gate at 64 x 128; the f32 gate at 128 x 128 (64 KiB
    // of tiles, 4 stages left) is read from global memory. Unsplit, one more: the K-major B's map
    // for the halves of the last round (test_tail_halves.cpp).
    const CompiledArtifact gated =
        matmul_tile_epilogue<true>().compile(o, out.partition<128, 128>(), a, w.transposed(), wide);
    const CompiledArtifact skipped =
        matmul_tile_epilogue<false>().compile(o, out.partition<128, 128>(), a, w.transposed(), skip);
    const CompiledArtifact gated_one =
        matmul_tile_epilogue<true, 64>().compile(o, out.partition<64, 128>(), a, w.transposed(), wide);
    const std::size_t halves = s == 0 ? 1 : 0;
    CHECK(occurrences(gated.ptx, ".param .align 64 .b8") == 3 + halves);
    CHECK(occurrences(skipped.ptx, ".param .align 64 .b8") == 4 + halves);
    CHECK(occurrences(gated_one.ptx, ".param .align 64 .b8") == 4 + halves);
    // One consumer (64 x 128): its warpgroup's barrier before the TMA store's writes, after them,
    // and before its leader releases the epilogue's tiles, each once; and the half program's two
    // around its TMA store's writes. A copy of the release's in the leader's branch (LLVM
    // threading the two tests of the leader through an asm barrier) made the warp's lanes meet the
    // aligned barrier at two instructions, and the kernel hung.
    if (s == 0) {
      const CompiledArtifact one =
          matmul_tile_epilogue<false, 64>().compile(o, out.partition<64, 128>(), a, w.transposed(), skip);
      CHECK(occurrences(one.ptx, "bar.sync \t1, 128;") == 5);
    }
    // The tile epilogues are checked for spills unsplit and where TMA loads their tiles only: an
    // epilogue that reads its tiles from global memory spills (ptxas: 12 bytes for the f32 gate at
    // 128 x 128 unsplit; 24-52 bytes in a split program's, after rank 0's loads of the partial
    // sums, at S = 2 and 4; docs/performance.md, sessions 50 and 51).
    std::vector<CompiledArtifact> checked{
        matmul_kernels::matmul<128, 128, 64>().compile(o, out.partition<128, 128>(), a, w.transposed()),
        matmul_kernels::matmul<128, 128, 64>().compile(o, wide.partition<128, 128>(), a, w.transposed())};
    if (s == 0) checked.insert(checked.end(), {skipped, gated_one});
    for (const CompiledArtifact& c : checked) {
      CHECK(c.ptx.find("wgmma.mma_async") != std::string::npos);
      CHECK((c.ptx.find(".reqnctapercluster " + std::to_string(s) + ", 1, 1") != std::string::npos) == (s > 0));
      CHECK((c.ptx.find("// tessera.ctas_per_program " + std::to_string(s)) != std::string::npos) == (s > 0));
      CHECK((c.ptx.find("mapa.shared::cluster.u32") != std::string::npos) == (s > 0));
      // As the driver compiles it: a whole program, where setmaxnreg counts (ptxas_log.h).
      ptxas_log::check_gemm_log(ptxas, c.ptx);
    }
  }
}

TEST_CASE("split_k: other than 0, 1, 2, 4 or 8 is an error naming the kernel", "[split-k]") {
  Tensor<bfloat16, 2> w({64, 1024});
  Tensor<float, 1> v({1024}), y({64});
  for (int s : {3, 16, -2}) {
    LaunchOptions o;
    o.target = Target::cpu;
    o.hints = split(s);
    CHECK_THROWS_WITH(split_matvec().launch(o, y.partition<16>(), w, v),
                      Catch::Contains("kernel 'split_matvec'") && Catch::Contains("split_k is " + std::to_string(s)));
  }
}
