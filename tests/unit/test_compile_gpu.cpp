// test_compile_gpu.cpp: every example-style kernel compiles to PTX and a cubin for sm_90 and
// sm_100a (nvJitLink accepts them) without a GPU, each waiting for the grids it depends on before
// touching memory; the second compile is a cache hit; TESSERA_DUMP_DIR writes every stage, even of a
// kernel the disk cache holds.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include "execution_helpers.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "example_kernels.h"
#include "row_kernels.h"
#include "scoped_env.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;

namespace {
// A 16-byte load from a read-only parameter, with the L2 policy evict_last (llvm-load-cache-hints).
constexpr const char* kHintedVectorLoad = "ld.global.nc.L2::cache_hint.v4.b32";

bool is_elf(const std::vector<char>& b) { return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'; }

// Every kernel waits for the grids it depends on (griddepcontrol.wait) before its first access to
// global memory, so that programmatic launches and graph edges cannot let it read or write early.
bool waits_before_memory(const std::string& ptx) {
  std::size_t wait = ptx.find("griddepcontrol.wait;");
  if (wait == std::string::npos) return false;
  for (const char* access : {"ld.global", "st.global", "ld.b", "st.b", "ld.v", "st.v", "atom.", "red."})
    if (ptx.find(access) < wait) return false;
  return ptx.find("griddepcontrol.launch_dependents;") < wait;
}

template <class K, class... A>
void check_compiles(const K& k, A&&... args) {
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    CompiledArtifact art = k.compile(t, std::forward<A>(args)...);
    INFO(k.name() << " for " << art.target);
    CHECK(art.ptx.find(".version 9.0") != std::string::npos);
    CHECK(art.ptx.find(".entry") != std::string::npos);
    CHECK(is_elf(art.cubin));
    CHECK(waits_before_memory(art.ptx));
  }
}
}  // namespace

TEST_CASE("the examples' kernels compile to PTX and cubins for sm_90 and sm_100a", "[compile][ptx]") {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  check_compiles(examples::vector_add(), z.partition<128>(), x, y);
  Tensor<float, 2> m({10, 1000}), s({10, 1000});
  check_compiles(examples::softmax(), s.partition<1, 1024>(), m);
  Tensor<bfloat16, 2> xq({300, 256}), yq({300, 512});
  Tensor<float8_e4m3, 2> qx({300, 256}), qw({512, 256});
  Tensor<float, 2> partial({5, 1});
  check_compiles(examples::tile_abs_max(), partial.partition<1, 1>(), xq);
  check_compiles(examples::quantize_e4m3(), qx.partition<1, 1024>(), xq, 2.0f);
  check_compiles(examples::fp8_linear(), yq.partition<128, 128>(), qx, qw.transposed(), 0.5f, 0.25f);
  // On sm_90 the fp8 product is wgmma of e4m3.
  CHECK(examples::fp8_linear()
            .compile(Target::sm_90, yq.partition<128, 128>(), qx, qw.transposed(), 0.5f, 0.25f)
            .ptx.find("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3") != std::string::npos);
}

TEST_CASE("kernels compile to PTX and cubins for sm_90 and sm_100a", "[compile][ptx]") {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  check_compiles(kernel("gpu_add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); }),
                 z.partition<128>(), x, y);
  Tensor<float, 2> m({64, 1000}), s({64, 1000});
  check_compiles(kernel("gpu_softmax", [](auto o, auto a) {
                   auto t = a.load_like(o);
                   auto e = exp(t - max<1>(t));
                   return o.store(e / sum<1>(e));
                 }),
                 s.partition<1, 1024>(), m);
  Tensor<half, 2> a({128, 128}), b({128, 128});
  Tensor<float, 2> cm({128, 128});
  check_compiles(kernel("gpu_gemm", [](auto o, auto p, auto q) {
                   auto acc = for_range(
                       (dim<1>(p) + c<15.0>) / c<16.0>,
                       [=](auto k, auto acc) {
                         return mma(load<16, 16>(p, program_id<0>(), k), load<16, 16>(q, k, program_id<1>()), acc);
                       },
                       full<DType::f32, 16, 16>(c<0.0>));
                   return o.store(acc);
                 }),
                 cm.partition<16, 16>(), a, b);
}

TEST_CASE("the second compile of a kernel is served from the in-process cache", "[compile][cache]") {
  Tensor<float, 1> x({10}), z({10});
  auto k = kernel("gpu_cache_twice", [](auto o, auto a) { return o.store(a.load_like(o) * c<3.0>); });
  k.compile(Target::sm_90, z.partition<128>(), x);
  CacheStats before = cache_stats();
  k.compile(Target::sm_90, z.partition<128>(), x);
  CacheStats after = cache_stats();
  CHECK(after.memory_hits == before.memory_hits + 1);
  CHECK(after.compiles == before.compiles);
}

TEST_CASE("TESSERA_DUMP_DIR writes every stage, also of a kernel the disk cache holds", "[compile][cache]") {
  test_env::TempDir cache, dump;
  test_env::EnvGuard env;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  env.set("TESSERA_DUMP_DIR", nullptr);
  Tensor<float, 1> x({10}), z({10});
  auto k = kernel("gpu_dumped", [](auto o, auto a) { return o.store(a.load_like(o) + c<1.0>); });
  k.compile(Target::sm_90, z.partition<128>(), x);
  clear_memory_cache();
  CHECK(k.compile(Target::sm_90, z.partition<128>(), x).from_disk_cache);

  clear_memory_cache();
  env.set("TESSERA_DUMP_DIR", dump.path.c_str());
  CacheStats before = cache_stats();
  CompiledArtifact art = k.compile(Target::sm_90, z.partition<128>(), x);
  CHECK_FALSE(art.from_disk_cache);
  CHECK(cache_stats().compiles == before.compiles + 1);
  for (const char* stage : {"ast.txt", "tile.mlir", "loops.mlir", "llvm-dialect.mlir", "ll", "ptx", "cubin"}) {
    INFO(stage);
    CHECK(std::filesystem::file_size(dump.path / (std::string("tessera_gpu_dumped.sm_90.") + stage)) > 0);
  }
  std::ifstream ptx(dump.path / "tessera_gpu_dumped.sm_90.ptx");
  std::stringstream text;
  text << ptx.rdbuf();
  CHECK(text.str() == art.ptx);

  k.compile(Target::cpu, z.partition<128>(), x);
  for (const char* stage : {"ast.txt", "tile.mlir", "loops.mlir", "llvm-dialect.mlir", "ll"}) {
    INFO(stage);
    CHECK(std::filesystem::file_size(dump.path / (std::string("tessera_gpu_dumped.cpu.") + stage)) > 0);
  }
}

namespace {
}  // namespace

TEST_CASE("gpu code: multiply-adds contract to fma, interior tiles load without checks", "[compile][ptx]") {
  // a * b + c: one fma.rn.f32 per element, no separate mul.rn/add.rn (as nvcc --fmad=true).
  Tensor<float, 1> x({1 << 20}), y({1 << 20}), z({1 << 20});
  auto fma_k = kernel("gpu_fma_shape", [](auto o, auto a, auto b) {
    return o.store(a.load_like(o) * b.load_like(o) + c<1.5>);
  });
  std::string ptx = fma_k.compile(Target::sm_90, z.partition<2048>(), x, y).ptx;
  CHECK(occurrences(ptx, "fma.rn.f32") > 0);
  CHECK(occurrences(ptx, "mul.rn.f32") == 0);
  // 2048 elements, no exchange between threads: 256 threads in 2 CTAs of 128 (8 elements each),
  // i.e. two 16-byte chunks per input. In the copy of the body for programs wholly in bounds
  // (tile-version-interior; first in the PTX), both inputs' loads are issued back to back, all
  // 16-byte vectors, with no branch between them (a branch per load used to make ptxas wait for
  // one input's loads before issuing the other's).
  CHECK(ptx.find(".maxntid 128, 1, 1") != std::string::npos);
  CHECK(ptx.find("// tessera.ctas_per_program 2") != std::string::npos);
  size_t first = ptx.find("ld.global.nc");
  REQUIRE(first != std::string::npos);
  size_t branch = ptx.find("bra", first);
  std::string block = ptx.substr(first, branch - first);
  CHECK(occurrences(block, "ld.global.nc") == 4);
  CHECK(occurrences(block, kHintedVectorLoad) == 4);
}

TEST_CASE("gpu code: a weight load shared by all programs is issued after the row reduction", "[compile][ptx]") {
  Tensor<bfloat16, 2> xs({64, 8192}), ys({64, 8192});
  Tensor<bfloat16, 1> w({8192});
  auto rms = row_kernels::rmsnorm();
  std::string ptx = rms.compile(exec_test::bounds_tested(Target::sm_90), ys.partition<1, 8192>(), xs, w).ptx;
  // T threads (256, or 128 where the block-size retry halved it), 8192 / T bf16 each: 1024 / T
  // vector loads per operand. In the copy of the body for programs wholly in bounds
  // (tile-version-interior; first in the PTX), the row's loads come before the barrier of the
  // reduction and the weight's after it.
  size_t maxntid = ptx.find(".maxntid ");
  REQUIRE(maxntid != std::string::npos);
  const int threads = std::stoi(ptx.substr(maxntid + 9));
  CHECK((threads == 128 || threads == 256));
  size_t barrier = ptx.find("bar.sync");
  REQUIRE(barrier != std::string::npos);
  size_t interior_end = ptx.find("bra.uni", barrier);
  REQUIRE(interior_end != std::string::npos);
  CHECK(occurrences(ptx.substr(0, barrier), kHintedVectorLoad) == static_cast<size_t>(1024 / threads));
  CHECK(occurrences(ptx.substr(barrier, interior_end - barrier), kHintedVectorLoad) ==
        static_cast<size_t>(1024 / threads));
}

TEST_CASE("gpu code: RMSNorm over 32768-wide bf16 rows keeps its row in bf16 across the reduction", "[compile][ptx]") {
  // 512 threads of 64 elements each: widened once and held as f32 across the reduction, the row
  // takes 128 registers, one program per SM. The launcher keeps the variant made with
  // tile-rewiden-after-reduce (variant_search.cpp, try_rewidened): the bf16 row lives across the
  // reduction, each chunk is widened again next to its store (tessera-sink-pure-ops), and the
  // kernel fits two programs per SM in 64 registers. The 8192-wide RMSNorm, four programs of 256
  // threads per SM under its register cap (half an SM), keeps its first variant.
  Tensor<bfloat16, 2> xs({4, 32768}), ys({4, 32768});
  Tensor<bfloat16, 1> w({32768});
  const LaunchOptions tested = exec_test::bounds_tested(Target::sm_90);
  std::string ptx = row_kernels::rmsnorm_of<32768>().compile(tested, ys.partition<1, 32768>(), xs, w).ptx;
  CHECK(ptx.find(".maxntid 512, 1, 1") != std::string::npos);
  CHECK(ptx.find(".maxnreg 64") != std::string::npos);
  Tensor<bfloat16, 2> xn({4, 8192}), yn({4, 8192});
  Tensor<bfloat16, 1> wn({8192});
  std::string narrow = row_kernels::rmsnorm().compile(tested, yn.partition<1, 8192>(), xn, wn).ptx;
  // In the interior copy (first in the PTX, up to its branch past the edge copy), the widening after
  // the barrier: the row's elements by cvt.f32.bf16 (64 per thread), the weight's from its words.
  auto widened_after_barrier = [](const std::string& p) {
    size_t barrier = p.find("bar.sync");
    size_t end = p.find("bra.uni", barrier);
    if (barrier == std::string::npos || end == std::string::npos) return size_t{0};
    return occurrences(p.substr(barrier, end - barrier), "cvt.f32.bf16");
  };
  CHECK(widened_after_barrier(ptx) == 64);
  CHECK(widened_after_barrier(narrow) == 0);
}

TEST_CASE("gpu code: fast_ functions use the hardware approximations", "[compile][ptx]") {
  Tensor<float, 1> x({4096}), y({4096}), z({4096});
  auto k = kernel("gpu_fast_shape", [](auto o, auto a, auto b) {
    auto p = a.load_like(o);
    auto q = b.load_like(o);
    return o.store(fast_div(fast_exp(p), q) + fast_tanh(p) * fast_sqrt(q));
  });
  std::string ptx = k.compile(Target::sm_90, z.partition<128>(), x, y).ptx;
  CHECK(ptx.find("ex2.approx.ftz.f32") != std::string::npos);
  CHECK(ptx.find("div.full.f32") != std::string::npos);
  CHECK(ptx.find("tanh.approx.f32") != std::string::npos);
  CHECK(ptx.find("sqrt.approx.f32") != std::string::npos);
  CHECK(ptx.find("div.rn.f32") == std::string::npos);
}

TEST_CASE("gpu code: loads from inputs carry an L2 policy (evict_first for a reduction's streams), loads from outputs do not", "[compile][ptx]") {
  // o += a: the output is read and written, so its loads are plain (neither the read-only data path
  // nor a cache policy); the input's 16-byte loads are ld.global.nc with the policy made once.
  Tensor<float, 1> a({1 << 16}), o({1 << 16});
  auto acc = kernel("gpu_accumulate_hints", [](auto out, auto x) { return out.store(out.load() + x.load_like(out)); });
  std::string ptx = acc.compile(Target::sm_90, o.partition<2048>(), a).ptx;
  CHECK(occurrences(ptx, "createpolicy.fractional.L2::evict_last.b64") == 1);
  CHECK(occurrences(ptx, kHintedVectorLoad) > 0);
  CHECK(occurrences(ptx, "ld.global.v4") > 0);
  CHECK(occurrences(ptx, "ld.global.nc.v4") == 0);
  // A row sum writes a 32nd of a byte per byte it reads (a reduction): its loads of the rows, whose
  // addresses depend on the program, get the policy evict_first instead (each byte is read once).
  // Its partial sums go to a shared scratch array through an aligned pointer computed with ptrtoint
  // and inttoptr, which is no parameter's. Whether a kernel is a reduction is counted per program,
  // on its tiles: a row sum over short rows (32 threads of two 16-byte loads each) and one reading
  // its row in a loop of 1 x 2048 chunks (one load per thread and iteration) are reductions too.
  Tensor<bfloat16, 2> x({64, 8192}), shortx({64, 512});
  Tensor<float, 2> s({64, 1});
  auto check_streamed = [&](const auto& k, auto& in) {
    std::string ptx = k.compile(Target::sm_90, s.partition<1, 1>(), in).ptx;
    INFO(k.name());
    CHECK(occurrences(ptx, "createpolicy.fractional.L2::evict_first.b64") == 1);
    CHECK(occurrences(ptx, "createpolicy.fractional.L2::evict_last") == 0);
    CHECK(occurrences(ptx, kHintedVectorLoad) > 0);
    CHECK(occurrences(ptx, "ld.global.nc.v4") == 0);
  };
  check_streamed(row_kernels::row_sum(), x);
  check_streamed(row_kernels::row_sum_of<512>(), shortx);
  check_streamed(row_kernels::row_sum_loop(), x);
  // A weighted row sum reads a weight vector that every program reads alike: its loads keep the
  // read-only data path without a policy, the rows' loads take evict_first.
  Tensor<bfloat16, 1> w({8192});
  auto weighted = kernel("gpu_weighted_row_sum", [](auto o, auto a, auto wt) {
    return o.store(sum<1>(cast<DType::f32>(load<1, 8192>(a, program_id<0>(), c<0>)) *
                          cast<DType::f32>(load<8192>(wt, c<0>))));
  });
  std::string wptx = weighted.compile(Target::sm_90, s.partition<1, 1>(), x, w).ptx;
  CHECK(occurrences(wptx, "createpolicy.fractional.L2::evict_first.b64") == 1);
  CHECK(occurrences(wptx, kHintedVectorLoad) > 0);
  CHECK(occurrences(wptx, "ld.global.nc.v4.b32") > 0);
  // A matrix product of 16 x 16 f32 tiles stores an eighth of what it loads (a reduction: otherwise
  // its loads would take evict_last), but a row of programs reads each left tile and a column each
  // right tile: neither is a stream, so no policy.
  Tensor<float, 2> ga({128, 128}), gb({128, 128});
  Tensor<float, 2> cm({128, 128});
  auto gemm = kernel("gpu_gemm_hints", [](auto o, auto p, auto q) {
    auto acc = for_range(
        (dim<1>(p) + c<15.0>) / c<16.0>,
        [=](auto k, auto acc) { return mma(load<16, 16>(p, program_id<0>(), k), load<16, 16>(q, k, program_id<1>()), acc); },
        full<DType::f32, 16, 16>(c<0.0>));
    return o.store(acc);
  });
  std::string gptx = gemm.compile(Target::sm_90, cm.partition<16, 16>(), ga, gb).ptx;
  CHECK(occurrences(gptx, "createpolicy") == 0);
}

TEST_CASE("gpu code: small programs that exchange no data share a CTA", "[compile][ptx]") {
  // A row sum over 1024-wide bf16 rows runs one warp per program, reduced by shuffles alone: eight
  // programs share a CTA of 256 threads. A row of 8192 (256 threads) keeps a CTA of its own, and
  // so does a short row whose two warps exchange partials through shared memory.
  Tensor<bfloat16, 2> x({64, 1024}), wide({64, 8192});
  Tensor<float, 2> s({64, 1}), x2048({64, 2048});
  std::string shared = row_kernels::row_sum_of<1024>().compile(Target::sm_90, s.partition<1, 1>(), x).ptx;
  CHECK(shared.find("// tessera.programs_per_cta 8") != std::string::npos);
  CHECK(shared.find(".maxntid 256, 1, 1") != std::string::npos);
  CHECK(shared.find("bar.sync") == std::string::npos);
  std::string own = row_kernels::row_sum().compile(Target::sm_90, s.partition<1, 1>(), wide).ptx;
  CHECK(own.find("tessera.programs_per_cta") == std::string::npos);
  auto f32_sum = kernel("gpu_two_warp_row_sum", [](auto out, auto in) {
    return out.store(sum<1>(load<1, 2048>(in, program_id<0>(), c<0>)));
  });
  std::string two_warps = f32_sum.compile(Target::sm_90, s.partition<1, 1>(), x2048).ptx;
  CHECK(two_warps.find("tessera.programs_per_cta") == std::string::npos);
  CHECK(two_warps.find(".maxntid 64, 1, 1") != std::string::npos);
}

TEST_CASE("gpu code: a row divided by one value shares one correctly rounded reciprocal", "[compile][ptx]") {
  // 1 x 1024 f32 tiles: 32 threads of 32 elements, each divided by the row's divisor. The
  // divisions become one correctly rounded reciprocal (rcp.rn.f32) and two fma per quotient, with
  // the plain divisions (div.rn.f32) left on the fallback branch (tessera-share-divisors).
  Tensor<float, 2> x({64, 1024}), d({64, 1}), y({64, 1024});
  auto k = kernel("gpu_shared_divisor_shape", [](auto o, auto a, auto div) {
    return o.store(load<1, 1024>(a, program_id<0>(), c<0>) / load<1, 1>(div, program_id<0>(), c<0>));
  });
  std::string ptx = k.compile(Target::sm_90, y.partition<1, 1024>(), x, d).ptx;
  CHECK(occurrences(ptx, "rcp.rn.f32") >= 1);
  CHECK(occurrences(ptx, "fma.rn.f32") >= 64);
}

TEST_CASE("gpu code: bf16 pairs widen to f32 from their 32-bit words", "[compile][ptx]") {
  // 1 x 2048 bf16 tiles read in 16-byte vectors: in the interior copy each pair's upper element is
  // its word with the lower half cleared (and.b32 with 0xffff0000) and the lower one the word
  // shifted up (tessera-widen-bf16-pairs), instead of a split and two cvt.f32.bf16. Only the
  // edge copy, which reads single elements, keeps cvt.f32.bf16.
  Tensor<bfloat16, 2> x({64, 2048});
  Tensor<float, 2> y({64, 2048});
  auto k = kernel("gpu_bf16_widening_shape", [](auto o, auto a) {
    return o.store(cast<DType::f32>(a.load_like(o)) * c<2.0>);
  });
  std::string ptx = k.compile(Target::sm_90, y.partition<1, 2048>(), x).ptx;
  CHECK(occurrences(ptx, "-65536;") >= 4);
  CHECK(occurrences(ptx, "16;") >= 4);
  CHECK(occurrences(ptx, "cvt.f32.bf16") < occurrences(ptx, "-65536;"));
}
