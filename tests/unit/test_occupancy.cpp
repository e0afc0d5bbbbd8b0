// test_occupancy.cpp: the block size of GPU kernels follows the registers ptxas gave them
// (compiler/occupancy.h, variant_search.cpp). Without a GPU: resident-block arithmetic against the
// numbers ncu reported on the H200, a cubin's recorded resources, a row kernel that keeps
// its row in registers compiled with fewer threads when that fits more programs per SM, and a
// versioned kernel whose registers are capped at what its interior copy needs
// (compiler/register_cap.h), a matrix-vector product unrolled less or capped at the occupancy its
// launch asks for, and exp range tests dropped where they cost occupancy.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include "execution_helpers.h"

#include "compiler/occupancy.h"
#include "compiler/pipeline.h"
#include "compiler/register_cap.h"
#include "driver/nvjitlink.h"
#include "row_kernels.h"
#include "text_count.h"
#include "two_rows_kernel.h"

using text_count::occurrences;
using namespace tessera;
using tessera::detail::KernelResources;

namespace {
// The H200's SM, and one of an RTX 30xx.
const detail::GpuArch& sm90 = *detail::gpu_arch(Target::sm_90);
const detail::GpuArch& sm86 = *detail::gpu_arch(Target::sm_86);

int resident_blocks(const KernelResources& r, int block_size) { return detail::resident_blocks(sm90, r, block_size); }
int register_cap(int blocks, int block_size) { return detail::register_cap(sm90, blocks, block_size); }

int threads_of(const CompiledArtifact& a) {
  auto at = a.ptx.find(".maxntid ");
  return at == std::string::npos ? 0 : std::stoi(a.ptx.substr(at + 9));
}

// Checks that the compile of `a` ran the launcher step `stage` (not checkable when it came from the
// disk cache).
void check_stage_ran(const CompiledArtifact& a, std::string_view stage) {
  if (a.from_disk_cache) {
    WARN("compiled earlier (disk cache): the stages are not rerun");
    return;
  }
  bool ran = false;
  for (const auto& [name, ms] : a.stage_ms) ran = ran || name == stage;
  CHECK(ran);
}

// Checks that `a` runs `threads` threads per program and fits `programs` per SM, and that its
// compile ran the launcher step `stage`.
void check_programs_per_sm(const CompiledArtifact& a, int threads, int programs, std::string_view stage) {
  CHECK(threads_of(a) == threads);
  auto r = detail::cubin_resources(a.cubin);
  REQUIRE(r);
  CHECK(resident_blocks(*r, threads) == programs);
  check_stage_ran(a, stage);
}
}  // namespace

TEST_CASE("resident blocks per SM: registers, threads and shared memory", "[compile][occupancy]") {
  // ncu's "Block Limit Registers" on the H200 for these kernels.
  CHECK(resident_blocks(KernelResources{85, 0}, 256) == 2);   // LayerNorm, 256 threads
  CHECK(resident_blocks(KernelResources{149, 0}, 128) == 3);  // LayerNorm, 128 threads
  CHECK(resident_blocks(KernelResources{80, 0}, 256) == 3);   // RMSNorm
  CHECK(resident_blocks(KernelResources{16, 0}, 128) == 16);  // threads: 64 warps per SM
  CHECK(resident_blocks(KernelResources{16, 0}, 32) == 32);   // blocks: 32 per SM
  CHECK(resident_blocks(KernelResources{32, 100 * 1024}, 128) == 2);  // shared memory
  CHECK(resident_blocks(KernelResources{255, 0}, 1024) == 0);  // cannot launch at all
  // An sm_86 SM holds 48 warps, 16 blocks and 100 KiB of shared memory.
  CHECK(detail::resident_blocks(sm86, KernelResources{16, 0}, 128) == 12);
  CHECK(detail::resident_blocks(sm86, KernelResources{16, 0}, 32) == 16);
  CHECK(detail::resident_blocks(sm86, KernelResources{32, 40 * 1024}, 128) == 2);
  CHECK(detail::resident_blocks(sm86, KernelResources{80, 0}, 256) == 3);
}

TEST_CASE("a cubin's registers, stack frame and shared memory are read from its ELF sections", "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  Tensor<float, 2> x({64, 4096}), y({64, 4096});
  auto k = kernel("occupancy_rows", [](auto o, auto a) {
    auto t = a.load_like(o);
    return o.store(t - max<1>(t));
  });
  CompiledArtifact art = k.compile(exec_test::bounds_tested(Target::sm_90), y.partition<1, 4096>(), x);  // 128 threads
  auto r = detail::cubin_resources(art.cubin);
  REQUIRE(r);
  CHECK(r->registers > 0);
  CHECK(r->registers <= 255);
  CHECK(r->shared_bytes > 0);  // the cross-warp scratch of the row reduction
  // Its stack frame (EIATTR_FRAME_SIZE): the edge copy stages ragged rows through local memory.
  // try_register_cap compares the interior's frame under a cap with its frame without one.
  CHECK(r->frame_bytes > 0);
  CHECK(r->frame_bytes % 8 == 0);
  std::vector<char> junk(art.cubin.begin(), art.cubin.begin() + 64);
  CHECK_FALSE(detail::cubin_resources(junk));
  // An elementwise kernel keeps everything in registers: no frame.
  Tensor<float, 1> p({1 << 16}), q({1 << 16});
  CompiledArtifact add = kernel("occupancy_frame_add", [](auto o, auto a) {
                           return o.store(a.load_like(o) * c<2.0>);
                         }).compile(Target::sm_90, q.partition<2048>(), p);
  auto flat = detail::cubin_resources(add.cubin);
  REQUIRE(flat);
  CHECK(flat->frame_bytes == 0);
  CHECK_FALSE(detail::cubin_resources(std::vector<char>{}));
}

TEST_CASE("a row kernel that leaves an SM half empty gets more programs per SM", "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  Tensor<bfloat16, 2> x({64, 8192}), y({64, 8192});
  Tensor<bfloat16, 1> w({8192}), b({8192});
  // LayerNorm over 8192-wide rows: at 256 threads (32 elements each) about 90 registers, 2
  // programs per SM. Its interior copy compiles capped at 64 registers without spilling: 4
  // programs per SM at 256 threads (at 128 threads it would need about 150 registers, 3).
  auto ln = row_kernels::layernorm();
  CompiledArtifact art = ln.compile(Target::sm_90, y.partition<1, 8192>(), x, w, b);
  check_programs_per_sm(art, 256, 4, "register-cap");
  // Two f16 rows live across two reductions: capped at 80 registers (3 programs per SM) the
  // interior does not spill, at 64 it would. The kernel is compiled once more with 128 threads,
  // which fit no more programs, so the 256 threads stay.
  Tensor<half, 2> xh({64, 8192}), yh({64, 8192});
  CompiledArtifact art2 =
      test_kernels::two_rows<DType::f16>("occupancy_two_rows").compile(Target::sm_90, yh.partition<1, 8192>(), xh, xh);
  check_programs_per_sm(art2, 256, 3, "fewer-threads");
  // The rewiden variant was tried and had nothing to do (f16 rows): no second PTX.
  check_stage_ran(art2, "rewiden");
  // The same with bf16 rows: the launcher's variant that keeps the bf16 rows across the first
  // reduction each feeds and widens them again after it (tile-rewiden-after-reduce) fits 4.
  CompiledArtifact art3 =
      test_kernels::two_rows<DType::bf16>("occupancy_two_bf16_rows").compile(Target::sm_90, y.partition<1, 8192>(), x, x);
  check_programs_per_sm(art3, 256, 4, "rewiden");
  // An elementwise kernel has registers to spare: compiled once, at the lowering's block size (its
  // programs split into CTAs of 128 threads).
  Tensor<float, 1> p({1 << 20}), q({1 << 20});
  CompiledArtifact add = kernel("occupancy_add", [](auto o, auto a) { return o.store(a.load_like(o) + c<1>); })
                             .compile(Target::sm_90, q.partition<8192>(), p);
  CHECK(threads_of(add) == 128);
  for (const auto& [stage, ms] : add.stage_ms) CHECK(stage != "fewer-threads");
}

TEST_CASE("a matrix-vector product whose unrolled K loop leaves an SM half empty is unrolled less",
          "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  // y = W (x * inv * g) (an RMSNorm fused into a product, as a decode step's QKV), 16 x 512 bf16 weight
  // tiles at 512 threads: unrolled by 4 (four 16 KiB tiles in flight per program) it needs over
  // 64 registers, one program per SM, and capped at 64 it spills; unrolled by 2, capped, two
  // programs fit, and that variant is kept.
  auto mv = kernel("occupancy_normed_matvec", [](auto out, auto w, auto x, auto g, auto inv_rms) {
    auto inv = load<1>(inv_rms, c<0>);
    auto acc = for_range(
        (dim<0>(x) + c<511>) / c<512>,
        [=](auto k, auto acc) {
          auto n = reshape<1, 512>(load<512>(x, k) * inv * cast<DType::f32>(load<512>(g, k)));
          return acc + cast<DType::f32>(load<16, 512>(w, program_id<0>(), k)) * n;
        },
        full<DType::f32, 16, 512>(c<0.0>));
    return out.store(reshape<16>(sum<1>(acc)));
  });
  Tensor<float, 1> y({6144}), x({2560}), inv({1});
  Tensor<bfloat16, 1> g({2560});
  Tensor<bfloat16, 2> w({6144, 2560});
  CompiledArtifact art = mv.compile(Target::sm_90, y.partition<16>(), w, x, g, inv);
  check_programs_per_sm(art, 512, 2, "fewer-in-flight");

  // The launch's own occupancy (CompilerHints::occupancy): at 256 threads and 3 programs per SM the
  // registers are capped at 80, at the threads asked for. Unrolled by 4 the capped kernel would
  // spill; it is compiled with less unroll until it does not, and no other variant is tried.
  LaunchOptions o;
  o.target = Target::sm_90;
  o.hints.threads = 256;
  o.hints.occupancy = 3;
  CompiledArtifact three = mv.compile(o, y.partition<16>(), w, x, g, inv);
  CHECK(three.ptx.find(".maxnreg 80") != std::string::npos);
  auto r = detail::cubin_resources(three.cubin);
  REQUIRE(r);
  CHECK(r->registers <= 80);
  CHECK(r->frame_bytes == 0);
  CHECK(resident_blocks(*r, 256) >= 3);
  CHECK(threads_of(three) == 256);
  check_stage_ran(three, "occupancy");
  for (const auto& [stage, ms] : three.stage_ms) CHECK((stage != "fewer-in-flight" && stage != "register-cap"));
}

TEST_CASE("the PTX of a split kernel marks its CTAs per program", "[compile][occupancy]") {
  // For readers of the PTX (the launcher takes the split from the launch record: test_launch_record).
  using tessera::detail::ctas_per_program_of_ptx;
  CHECK(ctas_per_program_of_ptx(".version 9.0\n\n// tessera.ctas_per_program 4\n\n.visible .entry k(") == 4);
  CHECK(ctas_per_program_of_ptx(".version 9.0\n.visible .entry k(") == 1);
  CHECK(ctas_per_program_of_ptx("// tessera.ctas_per_program x") == 1);
  CHECK(ctas_per_program_of_ptx("// tessera.ctas_per_program 99999999") == 1);
  // 4096 bf16 per tile, elementwise: 2 CTAs of 128 threads per program; a row sum is not split.
  Tensor<bfloat16, 1> p({1 << 16}), q({1 << 16});
  CompiledArtifact add = kernel("occupancy_split_add", [](auto o, auto a) { return o.store(a.load_like(o) + c<1>); })
                             .compile(Target::sm_90, q.partition<4096>(), p);
  CHECK(threads_of(add) == 128);
  CHECK(ctas_per_program_of_ptx(add.ptx) == 2);
  Tensor<bfloat16, 2> x({64, 8192});
  Tensor<float, 2> s({64, 1});
  CompiledArtifact sum = row_kernels::row_sum().compile(Target::sm_90, s.partition<1, 1>(), x);
  CHECK(ctas_per_program_of_ptx(sum.ptx) == 1);
}

TEST_CASE("register caps: the PTX edits and the cap for an occupancy", "[compile][occupancy]") {
  using detail::ptx_with_register_cap;
  using detail::ptx_without_edge_branch;
  // The most registers that fit 4 blocks of 256 threads (64K registers per SM): 64; 5 blocks of
  // 128 threads: 102, in units of 8: 96; one block of 32 threads: capped at 255.
  CHECK(register_cap(4, 256) == 64);
  CHECK(register_cap(5, 128) == 96);
  CHECK(register_cap(1, 32) == 255);
  CHECK(resident_blocks(KernelResources{register_cap(4, 256), 0}, 256) == 4);
  CHECK(resident_blocks(KernelResources{register_cap(5, 128), 0}, 128) == 5);
  const std::string ptx =
      ".version 9.0\n.visible .entry k(\n)\n.maxntid 256, 1, 1\n{\n"
      "\tsetp.ne.b64 \t%p1, %rd1, 0;\n\t@%p1 bra \t$L__BB0_4;\n\tst.global.b32 \t[%rd2], %r1;\n"
      "$L__BB0_4:\n\t@!%p2 bra \t$L__BB0_5;\n$L__BB0_5:\n\tret;\n}\n";
  const std::string probe = ptx_without_edge_branch(ptx);
  CHECK(probe.find("@%p1 bra") == std::string::npos);  // the first conditional branch, only
  CHECK(probe.find("@!%p2 bra") != std::string::npos);
  CHECK(probe.find("st.global.b32") != std::string::npos);
  CHECK(ptx_without_edge_branch(".version 9.0\n") == ".version 9.0\n");
  const std::string capped = ptx_with_register_cap(ptx, 64);
  CHECK(capped.find(".maxntid 256, 1, 1\n.maxnreg 64\n{") != std::string::npos);
  CHECK(ptx_with_register_cap(".version 9.0\n", 64) == ".version 9.0\n");
}

TEST_CASE("a versioned row kernel gets the registers of its interior copy", "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  // RMSNorm over 8192-wide bf16 rows at 256 threads: the copy for the tensors' edges (staging
  // ragged rows through local memory) needs about 80 registers, 3 programs per SM; the interior
  // copy about 63. The kernel is capped at 64 registers: 4 programs per SM.
  Tensor<bfloat16, 2> x({64, 8192}), y({64, 8192});
  Tensor<bfloat16, 1> w({8192});
  CompiledArtifact art = row_kernels::rmsnorm().compile(exec_test::bounds_tested(Target::sm_90), y.partition<1, 8192>(), x, w);
  check_stage_ran(art, "register-cap");
  CHECK(threads_of(art) == 256);
  CHECK(art.ptx.find(".maxnreg 64") != std::string::npos);
  auto r = detail::cubin_resources(art.cubin);
  REQUIRE(r);
  CHECK(r->registers <= 64);
  CHECK(resident_blocks(*r, 256) == 4);
  // An elementwise kernel with half an SM resident already is not capped.
  Tensor<float, 1> p({1 << 20}), q({1 << 20});
  CompiledArtifact add = kernel("occupancy_add_uncapped", [](auto o, auto a, auto b) {
                           return o.store(a.load_like(o) + b.load_like(o));
                         }).compile(Target::sm_90, q.partition<8192>(), p, p);
  CHECK(add.ptx.find(".maxnreg") == std::string::npos);
}

TEST_CASE("a row kernel with one reduction compiled for static shapes or whole tiles gets 512 threads when they fill the SM", "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  Tensor<bfloat16, 2> x({64, 8192}), y({64, 8192});
  Tensor<float, 2> s({64, 1});
  Tensor<bfloat16, 1> w({8192}), b({8192});
  LaunchOptions o;
  o.target = Target::sm_90;
  o.static_shapes = true;
  // The static row sum fills the SM at 256 threads already (8 programs of 29 registers) and takes
  // 512 (4 programs of at most 32 registers: four rows in flight per SM instead of eight).
  CompiledArtifact sum = row_kernels::row_sum().compile(o, s.partition<1, 1>(), x);
  check_programs_per_sm(sum, 512, 4, "more-threads");
  CHECK(sum.ptx.find(".maxnreg 32") != std::string::npos);
  // The row sum read in 2048-element chunks by a loop: at 512 threads its chunks would be 8 bytes
  // per thread instead of 16, so it keeps 256 threads.
  CompiledArtifact looped = row_kernels::row_sum_loop().compile(o, s.partition<1, 1>(), x);
  check_stage_ran(looped, "more-threads");
  CHECK(threads_of(looped) == 256);
  // RMSNorm (one reduction, then the row stored) also fits 4 programs of 512 at 32 registers.
  CompiledArtifact rms = row_kernels::rmsnorm().compile(o, y.partition<1, 8192>(), x, w);
  check_programs_per_sm(rms, 512, 4, "more-threads");
  CHECK(rms.ptx.find(".maxnreg 32") != std::string::npos);
  // The same for launches of the generic kernels whose tiles are all whole (LaunchOptions::whole_tiles,
  // on by default): their variant has no bounds test and no edge copy either.
  CompiledArtifact whole_sum = row_kernels::row_sum().compile(Target::sm_90, s.partition<1, 1>(), x);
  check_programs_per_sm(whole_sum, 512, 4, "more-threads");
  CompiledArtifact whole_rms = row_kernels::rmsnorm().compile(Target::sm_90, y.partition<1, 8192>(), x, w);
  check_programs_per_sm(whole_rms, 512, 4, "more-threads");
  CHECK(whole_rms.ptx.find(".maxnreg 32") != std::string::npos);
  // No attempt for kernels with two reductions (LayerNorm, softmax: a max then a sum), nor for
  // kernels that test their bounds per program: ragged launches, and whole ones with
  // LaunchOptions::whole_tiles off.
  auto no_attempt = [](const CompiledArtifact& a, int threads) {
    for (const auto& [stage, ms] : a.stage_ms) CHECK(stage != "more-threads");
    CHECK(threads_of(a) == threads);
  };
  no_attempt(row_kernels::layernorm().compile(o, y.partition<1, 8192>(), x, w, b), 256);
  no_attempt(row_kernels::softmax_fast().compile(o, y.partition<1, 8192>(), x), 256);
  no_attempt(row_kernels::row_sum().compile(exec_test::bounds_tested(Target::sm_90), s.partition<1, 1>(), x), 256);
  no_attempt(row_kernels::rmsnorm().compile(exec_test::bounds_tested(Target::sm_90), y.partition<1, 8192>(), x, w), 256);
  Tensor<bfloat16, 2> xr({64, 8000}), yr({64, 8000});
  Tensor<bfloat16, 1> wr({8000});
  no_attempt(row_kernels::row_sum().compile(Target::sm_90, s.partition<1, 1>(), xr), 256);
  no_attempt(row_kernels::rmsnorm().compile(Target::sm_90, yr.partition<1, 8192>(), xr, wr), 256);
}

TEST_CASE("exp range tests are kept only when they cost no occupancy", "[compile][occupancy]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  // The accurate softmax over 8192-wide bf16 rows: its exps behind range tests (ex2.approx.ftz, no
  // per-element range select) fit as many programs per SM as without them, so they are kept.
  Tensor<bfloat16, 2> x({64, 8192}), y({64, 8192});
  CompiledArtifact soft = row_kernels::softmax().compile(Target::sm_90, y.partition<1, 8192>(), x);
  CHECK(soft.ptx.find("ex2.approx.ftz.f32") != std::string::npos);
  // The accurate fused chain of the elementwise benchmark (an exp among tanh, sqrt and products):
  // with the tests it needs more registers and fits fewer programs per SM, so the launcher keeps
  // the variant compiled without them.
  Tensor<bfloat16, 1> a({1 << 20}), b({1 << 20}), o({1 << 20});
  auto chain = kernel("occupancy_fused_chain", [](auto out, auto p_in, auto q_in) {
    auto p = cast<DType::f32>(p_in.load_like(out));
    auto q = cast<DType::f32>(q_in.load_like(out));
    auto r = tanh(p * q + c<0.5>) * p + exp(q * c<-0.5>) - sqrt(abs(p) + c<1.0>);
    return out.store(cast<DType::bf16>(r));
  });
  CompiledArtifact art = chain.compile(Target::sm_90, o.partition<4096>(), a, b);
  check_stage_ran(art, "plain-exp");
  // tanh takes ex2.approx.ftz, exp's plain form ex2.approx: one each per element. With the tests
  // exp would add an ex2.approx.ftz per element.
  CHECK(occurrences(art.ptx, "ex2.approx.f32") > 0);
  CHECK(occurrences(art.ptx, "ex2.approx.ftz.f32") == occurrences(art.ptx, "ex2.approx.f32"));
}
