// test_matmul_mma_sync.cpp: the mma.sync lowering of matmul kernels (convert-tile-matmul-to-mma-sync,
// issue #22 item 3), which every NVIDIA target from sm_80 takes for the GEMM kernels that sm_90a's
// wgmma lowering does not.
//
// Compile tests (no GPU needed): the PTX for sm_80, sm_86, sm_89, sm_100a and sm_120, and for
// sm_90 where the wgmma lowering rejects the tile, holds cp.async, ldmatrix and mma.sync, and
// nvJitLink's ptxas reports no spills.
//
// Results: random bf16, f16 and f32 (tf32) products against the host reference
// (matmul_reference.h), whole and ragged M, N and K, K below one tile, B row-major and B as the
// transposed view of an N x K matrix (K-major), plain and with a fused bias + GELU + bf16
// epilogue, in several tile shapes (4 and 8 warps, BK 16 to 128; 4 or 8 warps by
// CompilerHints::threads). On the GPU they launch for Target::sm_80, whatever the GPU: its PTX runs
// on every GPU from sm_80 (an sm_90 GPU through the driver's compile of the PTX), and on sm_80 the
// matmul class has no other tensor-core lowering, so the mma.sync code is what runs; each case
// also checks that the sm_80 PTX it launches holds mma.sync. On the CPU target the same kernels
// take the loop lowering, as before.
#include "driver/nvjitlink.h"
#include "execution_helpers.h"
#include "matmul_kernels.h"
#include "matmul_reference.h"
#include "scoped_env.h"

#include <string>
#include <tuple>
#include <vector>

using namespace tessera;
using namespace matmul_reference;

namespace {

using exec_test::random_tensor;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// What the PTX of an mma.sync kernel holds: 16-byte cp.async copies with commit and wait groups,
// ldmatrix x4 (transposed for a row-major B of 16-bit elements) and m16n8k16 mma.sync of `inputs`
// ("bf16", "f16"); for "tf32" (f32 inputs), m16n8k8 with every element rounded by cvt.rna first,
// and no transposed ldmatrix (a row-major B is read one f32 at a time).
void check_mma_sync_ptx(const std::string& ptx, const std::string& inputs, bool b_k_major) {
  CHECK(has(ptx, "cp.async.cg.shared.global"));
  CHECK(has(ptx, "cp.async.commit_group"));
  CHECK(has(ptx, "cp.async.wait_group"));
  CHECK(has(ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
  const bool tf32 = inputs == "tf32";
  CHECK(has(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16") == (!b_k_major && !tf32));
  CHECK(has(ptx, std::string("mma.sync.aligned.") + (tf32 ? "m16n8k8" : "m16n8k16") + ".row.col.f32." + inputs + "." +
                     inputs + ".f32"));
  CHECK(has(ptx, "cvt.rna.tf32.f32") == tf32);
  CHECK(!has(ptx, "wgmma"));
}

// nvJitLink's ptxas log of `ptx` for `arch`: no spills.
void check_no_spills(const std::string& ptx, const std::string& arch) {
  const std::string log = detail::ptx_to_cubin(ptx, arch, std::vector<std::string>{"-verbose"}).info_log;
  INFO(log);
  CHECK(has(log, " 0 bytes spill stores"));
  CHECK(has(log, " 0 bytes spill loads"));
}

// The tile shapes and kernels that the compile and result tests share.
template <class T, int BM, int BN, int BK>
CompiledArtifact compile_plain(Target t, bool b_k_major) {
  Tensor<T, 2> a({256, 256}), b({256, 512}), w({512, 256}), out({256, 512});
  auto k = matmul_kernels::matmul<BM, BN, BK>();
  return b_k_major ? k.compile(t, out.template partition<BM, BN>(), a, w.transposed())
                   : k.compile(t, out.template partition<BM, BN>(), a, b);
}

template <int BM, int BN, int BK>
CompiledArtifact compile_gelu(Target t, bool b_k_major) {
  Tensor<bfloat16, 2> a({256, 256}), b({256, 512}), w({512, 256}), out({256, 512});
  Tensor<bfloat16, 1> bias({512});
  auto k = matmul_kernels::matmul_bias_gelu<BM, BN, BK>();
  return b_k_major ? k.compile(t, out.partition<BM, BN>(), a, w.transposed(), bias)
                   : k.compile(t, out.partition<BM, BN>(), a, b, bias);
}

// c = a b (T inputs, T output) for random a: m x k and b: k x n, B row-major or (b_k_major) the
// transposed view of an n x k matrix, with BM x BN x BK tiles; and with the bias + GELU epilogue
// (bf16 only: the kernel stores bf16).
template <class T, int BM, int BN, int BK>
void check_shape(Target target, int64_t m, int64_t n, int64_t k, bool b_k_major, unsigned seed) {
  INFO(dtype_name(dtype_v<T>) << " " << BM << "x" << BN << "x" << BK << " tiles, M " << m << ", N " << n << ", K "
                              << k << (b_k_major ? ", K-major B" : ", row-major B"));
  auto a = random_tensor<T, 2>({m, k}, -1, 1, seed);
  auto b = random_tensor<T, 2>({k, n}, -1, 1, seed + 1);
  Tensor<T, 2> w({n, k});  // B's transpose, for the K-major case
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) w(j, kk) = b(kk, j);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  const double bound = product_bound(dtype_v<T>, k);
  // The output's rounding: 2^-8 of the result for bf16 (round to nearest: 2^-9), 2^-11 for f16,
  // 2^-24 for f32.
  const double rel = std::ldexp(1.0, std::is_same_v<T, bfloat16> ? -8 : std::is_same_v<T, half> ? -11 : -24);
  Tensor<T, 2> out({m, n});
  auto got = [&](int64_t i, int64_t j) { return d(out(i, j)); };
  auto plain = matmul_kernels::matmul<BM, BN, BK>();
  if (b_k_major)
    plain.launch_on(target, out.template partition<BM, BN>(), a, w.transposed());
  else
    plain.launch_on(target, out.template partition<BM, BN>(), a, b);
  CHECK(mismatches(r, m, n, bound, rel, got, [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
  if constexpr (std::is_same_v<T, bfloat16>) {
    auto bias = random_tensor<bfloat16, 1>({n}, -1, 1, seed + 2);
    auto gelu = matmul_kernels::matmul_bias_gelu<BM, BN, BK>();
    if (b_k_major)
      gelu.launch_on(target, out.template partition<BM, BN>(), a, w.transposed(), bias);
    else
      gelu.launch_on(target, out.template partition<BM, BN>(), a, b, bias);
    // GELU's slope is under 1.13; its own f32 roundings fall within the bf16 output's 2^-8.
    CHECK(mismatches(r, m, n, 1.13 * bound, rel, got,
                     [&](int64_t i, int64_t j) { return gelu_tanh(r.at(i, j) + d(bias(j))); }) == 0);
  }
}

// Sizes (M x N x K): whole tiles; M, N and K ragged (K a multiple of 8: rows of 16 bytes, as
// cp.async reads them, for every dtype); K below one tile; M and N below one tile with K of one
// chunk (of two for f32).
template <class T, int BM, int BN, int BK>
void check_sizes(Target target, bool b_k_major) {
  check_shape<T, BM, BN, BK>(target, 2 * BM, 2 * BN, 4 * BK, b_k_major, 1);
  check_shape<T, BM, BN, BK>(target, 2 * BM + 37, BN + 24, 3 * BK + 40, b_k_major, 3);
  check_shape<T, BM, BN, BK>(target, BM + 5, 3 * BN - 8, 8, b_k_major, 5);
  check_shape<T, BM, BN, BK>(target, 3, 8, 8, b_k_major, 7);
}

// On the GPU, the sm_80 code (see the top of the file); on the CPU, the loop lowering.
Target mma_sync_target(Target target) { return target == Target::cpu ? Target::cpu : Target::sm_80; }

void products_bf16(Target gpu) {
  const Target t = mma_sync_target(gpu);
  for (bool k_major : {false, true}) {
    if (t != Target::cpu) check_mma_sync_ptx(compile_plain<bfloat16, 64, 64, 32>(t, k_major).ptx, "bf16", k_major);
    check_sizes<bfloat16, 64, 64, 32>(t, k_major);
    check_sizes<bfloat16, 128, 128, 32>(t, k_major);
    check_sizes<bfloat16, 128, 256, 64>(t, k_major);
    check_sizes<bfloat16, 64, 128, 128>(t, k_major);
    check_sizes<bfloat16, 32, 32, 16>(t, k_major);
  }
}

void products_f16(Target gpu) {
  const Target t = mma_sync_target(gpu);
  for (bool k_major : {false, true}) {
    if (t != Target::cpu) check_mma_sync_ptx(compile_plain<half, 128, 128, 64>(t, k_major).ptx, "f16", k_major);
    check_sizes<half, 64, 64, 32>(t, k_major);
    check_sizes<half, 128, 128, 64>(t, k_major);
    check_sizes<half, 16, 64, 16>(t, k_major);
  }
}

// f32 inputs: tf32 tensor cores, within matmul_reference.h's tf32 bound.
void products_f32(Target gpu) {
  const Target t = mma_sync_target(gpu);
  for (bool k_major : {false, true}) {
    if (t != Target::cpu) check_mma_sync_ptx(compile_plain<float, 64, 64, 32>(t, k_major).ptx, "tf32", k_major);
    check_sizes<float, 64, 64, 32>(t, k_major);
    check_sizes<float, 128, 128, 32>(t, k_major);
    check_sizes<float, 128, 256, 16>(t, k_major);
    check_sizes<float, 32, 32, 8>(t, k_major);
    // B rows of 4 chunks (BN 16 f32): the swizzle by 128-byte line, the row-major B's general path.
    check_sizes<float, 64, 16, 16>(t, k_major);
  }
}

// The CTAs walk the programs in groups of rows (CompilerHints::group_rows; by default, 0, in the
// launch's order): on a grid of 22 x 5 programs (ragged M and N) every program runs once whatever
// the group, the last one ragged (22 = 2 x 8 + 6, 3 x 7 + 1) or holding every row (64), and the
// hint reaches the PTX (the grid's size is read for the grouped order only).
void grouped_order(Target gpu) {
  const Target t = mma_sync_target(gpu);
  const int64_t m = 21 * 32 + 5, n = 5 * 32 - 3 - 5, k = 104;
  auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 11);
  auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 12);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  auto mm = matmul_kernels::matmul<32, 32, 32>();
  for (const int group : {0, 1, 7, 8, 64}) {
    INFO("group_rows " << group);
    LaunchOptions o;
    o.target = t;
    o.hints.group_rows = group;
    Tensor<bfloat16, 2> out({m, n});
    mm.launch(o, out.partition<32, 32>(), a, b);
    CHECK(mismatches(r, m, n, product_bound(DType::bf16, k), std::ldexp(1.0, -8),
                     [&](int64_t i, int64_t j) { return d(out(i, j)); },
                     [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
    if (t != Target::cpu) CHECK(has(mm.compile(o, out.partition<32, 32>(), a, b).ptx, "%nctaid.y") == (group != 0));
  }
}

// Warps by CompilerHints::threads: 128 x 128 bf16 tiles take 4 warps of 64 x 64 (the compiler's
// choice, and 128 threads) or 8 (256 threads), both run whole and ragged; 128 x 256 tiles cannot
// take 4 (256 accumulators a thread) and keep 8.
void warps_by_threads(Target gpu) {
  const Target t = mma_sync_target(gpu);
  const int64_t m = 2 * 128 + 37, n = 128 + 24, k = 3 * 32 + 40;
  auto a = random_tensor<bfloat16, 2>({m, k}, -1, 1, 21);
  auto b = random_tensor<bfloat16, 2>({k, n}, -1, 1, 22);
  const auto r = reference(m, n, k, [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                           [&](int64_t kk, int64_t j) { return d(b(kk, j)); });
  auto check = [&](Tensor<bfloat16, 2>& out) {
    CHECK(mismatches(r, m, n, product_bound(DType::bf16, k), std::ldexp(1.0, -8),
                     [&](int64_t i, int64_t j) { return d(out(i, j)); },
                     [&](int64_t i, int64_t j) { return r.at(i, j); }) == 0);
  };
  for (const int threads : {0, 128, 256}) {
    INFO("threads " << threads);
    LaunchOptions o;
    o.target = t;
    o.hints.threads = threads;
    Tensor<bfloat16, 2> out({m, n});
    auto mm = matmul_kernels::matmul<128, 128, 32>();
    mm.launch(o, out.partition<128, 128>(), a, b);
    check(out);
    if (t != Target::cpu)
      CHECK(has(mm.compile(o, out.partition<128, 128>(), a, b).ptx,
                threads == 256 ? ".maxntid 256," : ".maxntid 128,"));
    auto wide = matmul_kernels::matmul<128, 256, 32>();
    Tensor<bfloat16, 2> out2({m, n});
    wide.launch(o, out2.partition<128, 256>(), a, b);
    check(out2);
    if (t != Target::cpu) CHECK(has(wide.compile(o, out2.partition<128, 256>(), a, b).ptx, ".maxntid 256,"));
  }
}

#define MMA_SYNC_TEST_CASE(name, fn)                                                    \
  TEST_CASE(name " (cpu)", "[cpu][mma][matmul][mma_sync]") { fn(Target::cpu); }         \
  TEST_CASE(name " (gpu, sm_80 code)", "[gpu][mma][matmul][mma_sync]") {                \
    if (!gpu_available()) {                                                             \
      WARN("no GPU on this machine: skipped");                                          \
      return;                                                                           \
    }                                                                                   \
    /* mma.sync PTX run through the driver: the NVVM backend's, whatever the default */ \
    test_env::EnvGuard env;                                                             \
    env.set("TESSERA_BACKEND", "nvvm");                                                 \
    fn(Target::sm_80);                                                                  \
  }

}  // namespace

MMA_SYNC_TEST_CASE("mma.sync matmul, bf16: whole and ragged, both B layouts, fused epilogue", products_bf16)
MMA_SYNC_TEST_CASE("mma.sync matmul, f16: whole and ragged, both B layouts", products_f16)
MMA_SYNC_TEST_CASE("mma.sync matmul, f32 as tf32: whole and ragged, both B layouts", products_f32)
MMA_SYNC_TEST_CASE("mma.sync matmul: programs in grouped order, each once", grouped_order)
MMA_SYNC_TEST_CASE("mma.sync matmul: 4 or 8 warps by CompilerHints::threads", warps_by_threads)

TEST_CASE("mma.sync kernels compile for sm_80, sm_86, sm_89, sm_100a and sm_120 with no spills",
          "[mma][matmul][compile][mma_sync]") {
  if (!exec_test::toolchain_present()) return;
  for (Target t : {Target::sm_80, Target::sm_86, Target::sm_89, Target::sm_100a, Target::sm_120}) {
    const std::string arch(to_string(t));
    for (bool k_major : {false, true}) {
      // Name, mma input type, code.
      const std::vector<std::tuple<std::string, std::string, CompiledArtifact>> kernels = {
          {"bf16 64x64x32", "bf16", compile_plain<bfloat16, 64, 64, 32>(t, k_major)},
          {"bf16 128x128x32", "bf16", compile_plain<bfloat16, 128, 128, 32>(t, k_major)},
          {"bf16 128x256x64", "bf16", compile_plain<bfloat16, 128, 256, 64>(t, k_major)},
          {"bf16 64x128x128", "bf16", compile_plain<bfloat16, 64, 128, 128>(t, k_major)},
          {"f16 128x128x64", "f16", compile_plain<half, 128, 128, 64>(t, k_major)},
          {"f32 128x128x32", "tf32", compile_plain<float, 128, 128, 32>(t, k_major)},
          {"f32 128x256x16", "tf32", compile_plain<float, 128, 256, 16>(t, k_major)},
          {"bias + GELU 128x128x64", "bf16", compile_gelu<128, 128, 64>(t, k_major)},
          {"bias + GELU 128x256x64", "bf16", compile_gelu<128, 256, 64>(t, k_major)}};
      for (const auto& [name, inputs, artifact] : kernels) {
        INFO(arch << " " << name << (k_major ? ", K-major B" : ", row-major B"));
        check_mma_sync_ptx(artifact.ptx, inputs, k_major);
        CHECK(has(artifact.ptx, ".target " + arch));
        CHECK(!artifact.cubin.empty());
        check_no_spills(artifact.ptx, arch);
      }
    }
  }
}

TEST_CASE("on sm_90 the tiles and dtypes the wgmma lowering rejects take mma.sync, the others wgmma",
          "[mma][matmul][compile][mma_sync]") {
  if (!exec_test::toolchain_present()) return;
  for (bool k_major : {false, true}) {
    INFO((k_major ? "K-major B" : "row-major B"));
    // BK 32: not a wgmma tile.
    const CompiledArtifact small = compile_plain<bfloat16, 64, 64, 32>(Target::sm_90, k_major);
    check_mma_sync_ptx(small.ptx, "bf16", k_major);
    CHECK(has(small.ptx, ".target sm_90\n"));
    check_no_spills(small.ptx, "sm_90");
    const CompiledArtifact big = compile_plain<bfloat16, 128, 256, 64>(Target::sm_90, k_major);
    CHECK(has(big.ptx, "wgmma.mma_async"));
    CHECK(!has(big.ptx, "mma.sync.aligned"));
    // f32 inputs in a wgmma tile take wgmma, with a row-major B as the transposed product
    // (test_matmul.cpp checks that code); BK 16 (64 bytes) is not a wgmma tile: mma.sync.
    for (const CompiledArtifact& f32 : {compile_plain<float, 128, 128, 64>(Target::sm_90, k_major),
                                        compile_plain<float, 128, 128, 32>(Target::sm_90, k_major)})
      CHECK(has(f32.ptx, "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32"));
    const CompiledArtifact f32 = compile_plain<float, 128, 256, 16>(Target::sm_90, k_major);
    check_mma_sync_ptx(f32.ptx, "tf32", k_major);
    check_no_spills(f32.ptx, "sm_90");
  }
}

// Outside the GEMM class the kernel keeps the loop lowering (no cp.async pipeline, no ldmatrix),
// whose mma runs on mma.sync from shared memory where its operands and product fit there
// (docs/compiler.md, "mma"), else element by element.
TEST_CASE("tiles outside the mma.sync lowering's shapes keep the loop lowering", "[mma][matmul][compile][mma_sync]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 2> a({256, 256}), b({256, 512}), out({256, 512}), odd({256, 500}), out_odd({256, 500});
  auto loop_lowering = [](const std::string& ptx) { return !has(ptx, "cp.async") && !has(ptx, "ldmatrix"); };
  // 256 x 256: 256 accumulators per thread over 8 warps; its f32 product (264 KiB) does not fit
  // in shared memory: element by element.
  const std::string big =
      matmul_kernels::matmul<256, 256, 32>().compile(Target::sm_80, out.partition<256, 256>(), a, b).ptx;
  CHECK(loop_lowering(big));
  CHECK(!has(big, "mma.sync"));
  // BM 8: below one m16 fragment (the fragment's rows past 8 repeat row 7).
  const std::string narrow =
      matmul_kernels::matmul<8, 64, 32>().compile(Target::sm_80, out.partition<8, 64>(), a, b).ptx;
  CHECK(loop_lowering(narrow));
  CHECK(has(narrow, "mma.sync"));
  // B's rows of 500 bf16 (1000 bytes) are not 16-byte aligned: cp.async cannot read them.
  const std::string unaligned =
      matmul_kernels::matmul<64, 64, 32>().compile(Target::sm_80, out_odd.partition<64, 64>(), a, odd).ptx;
  CHECK(loop_lowering(unaligned));
  CHECK(has(unaligned, "mma.sync"));
}
