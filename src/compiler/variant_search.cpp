// variant_search.cpp: see variant_search.h. Everything here is plain C++ over compile_ptx and
// nvJitLink; each variant is a full compile and link judged by its cubin's resources.
#include "compiler/variant_search.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <span>
#include <thread>

#include "compiler/occupancy.h"
#include "compiler/ptxas.h"
#include "compiler/register_cap.h"
#include "driver/device_link.h"
#include "driver/gpu_arch.h"
#include "driver/nvjitlink.h"
#include "execution/threads.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

// Writes the cubin next to the other stages when TESSERA_DUMP_DIR is set.
void dump_cubin(const GpuCode& code) {
  const std::string dir = dump_dir();
  if (dir.empty()) return;
  const char* variant = code.static_shapes ? ".static" : code.whole_tiles ? ".whole" : "";
  std::string path = fmt::format("{}/{}.{}{}.cubin", dir, code.symbol, code.arch, variant);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(code.cubin.data(), 1, code.cubin.size(), f);
    std::fclose(f);
  }
}

// The kernel's cubin: its PTX alone, or linked with the device functions it calls.
std::vector<char> link_kernel(std::string_view kernel, const std::string& ptx,
                              const std::vector<DeviceFunctionUse>& calls, const std::string& arch) {
  if (calls.empty()) return ptx_to_cubin(ptx, arch).cubin;
  std::vector<DeviceCodeInput> code;
  for (const DeviceFunctionUse& f : calls) code.push_back({f.is_ptx, f.code, f.name});
  try {
    return link_device_code(ptx, std::string(kernel), code, arch);
  } catch (const Error& e) {
    throw Error(fmt::format("tessera: kernel '{}': {}", kernel, e.what()));
  }
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The SM of the architecture `code` was compiled for (compile_ptx accepts no other).
const GpuArch& sm_of(const GpuCode& code) { return *gpu_arch(code.arch); }
int half_an_sm(const GpuArch& sm) { return sm.threads_per_sm / 2; }

// The resources of a kernel linked from `ptx` into `cubin`, its dynamic shared memory (the scratch
// over 48 KiB, which the PTX states: dynamic_shared_bytes_of_ptx) counted as shared memory per
// block beside the static one that the cubin records.
std::optional<KernelResources> resources_of(std::span<const char> cubin, std::string_view ptx) {
  std::optional<KernelResources> r = cubin_resources(cubin);
  if (r) r->shared_bytes += dynamic_shared_bytes_of_ptx(ptx);
  return r;
}

// Whether the lowering chose the kernel's threads for its CTA layout (a program split over several
// CTAs, or programs sharing CTAs: see ThreadMapping.h), so that a variant with other threads would
// not be the same layout.
bool layout_chose_threads(const GpuCode& code) { return code.ctas_per_program > 1 || code.programs_per_cta > 1; }

// The programs per SM of a compiled kernel of 128 threads or more that leaves fewer than half of
// an SM's threads resident (the case where try_fewer_threads and try_register_cap compile a
// variant); nullopt otherwise. Smaller blocks meet the 32 blocks per SM first.
std::optional<int> programs_if_half_empty(const GpuArch& sm, const KernelResources& resources, int block_size) {
  if (block_size < 128) return std::nullopt;
  const int blocks = resident_blocks(sm, resources, block_size);
  if (blocks * block_size >= half_an_sm(sm)) return std::nullopt;
  return blocks;
}
std::optional<int> programs_if_half_empty(const GpuCode& code) {
  auto resources = resources_of(code.cubin, code.ptx);
  return resources ? programs_if_half_empty(sm_of(code), *resources, code.block_size) : std::nullopt;
}

// Another variant of a kernel, compiled (compile_ptx's options) and linked; nullopt if that fails
// (an optimization that fails only keeps the variant the kernel has) or, with `rewiden`, if
// tile-rewiden-after-reduce found nothing to change (compile_ptx then stops before LLVM IR).
std::optional<GpuCode> compile_variant(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                                       const std::vector<DeviceFunctionUse>& calls, const std::string& arch,
                                       int threads, bool exp_range_test, bool rewiden, int unroll_bytes) {
  GpuCode variant;
  try {
    variant = compile_ptx(kernel, ast, spec, arch, threads, exp_range_test, rewiden, unroll_bytes);
    if (rewiden && !variant.rewidened) return std::nullopt;
    variant.cubin = link_kernel(kernel, variant.ptx, calls, arch);
  } catch (const Error&) {
    return std::nullopt;
  }
  return variant;
}

// Puts `variant` in place of `code`, keeping the stage times measured so far.
void adopt_variant(GpuCode& code, GpuCode&& variant) {
  variant.stage_ms = std::move(code.stage_ms);
  code = std::move(variant);
}

// The resources of `ptx` linked for `arch`; nullopt if linking fails (an optimization that fails
// only keeps the kernel as it is).
std::optional<KernelResources> linked_resources(std::string_view kernel, const std::string& ptx,
                                                const std::vector<DeviceFunctionUse>& calls, const std::string& arch) {
  try {
    return resources_of(link_kernel(kernel, ptx, calls, arch), ptx);
  } catch (const Error&) {
    return std::nullopt;
  }
}

// `ptx` with its registers capped at `cap` and its cubin; nullopt if linking fails.
std::optional<std::pair<std::string, std::vector<char>>> linked_with_cap(std::string_view kernel, const std::string& ptx,
                                                                         int cap,
                                                                         const std::vector<DeviceFunctionUse>& calls,
                                                                         const std::string& arch) {
  std::string capped = ptx_with_register_cap(ptx, cap);
  try {
    std::vector<char> cubin = link_kernel(kernel, capped, calls, arch);
    return std::pair{std::move(capped), std::move(cubin)};
  } catch (const Error&) {
    return std::nullopt;
  }
}

// What the register probes measure of a kernel: a versioned kernel's interior copy alone (its
// branch to the edge copy cut off, see register_cap.h), else the whole kernel (a kernel compiled
// for static shapes counts as unversioned, see compile_ptx; one compiled for whole tiles has no
// edge copy).
std::string probed_ptx(const GpuCode& code) { return code.versioned ? ptx_without_edge_branch(code.ptx) : code.ptx; }

// A versioned kernel that leaves an SM half empty (programs_if_half_empty) is compiled once more
// without its branch to the edge copy (see register_cap.h), to learn what its interior copy alone
// needs (a kernel compiled for static shapes or whole tiles is measured whole). Starting from the
// programs per SM that the interior fits, the interior is compiled with its registers capped
// (register_cap, occupancy.h) for one more program at a time, up to half an SM's threads, as long
// as it keeps its stack frame (ptxas spills nothing there). The kernel is
// then compiled under the last such cap and kept if it fits more programs than before; its edge
// copy may spill, which only the programs on the edges pay. Softmax, LayerNorm and the accurate
// fused chain climbed this way to 64 registers (on the H200: softmax 3.63 -> 4.04 TB/s, LayerNorm
// 3.90 -> 4.24, fused chain 2.52 -> 3.15). The cap stops at half an SM's threads because a cap up
// to a whole SM's threads slowed the row sum and RMSNorm. RMSNorm over 8192-wide bf16 rows at
// 256 threads needed 80 registers, its interior 63; capped at 64 (4 programs per SM instead of 3)
// it ran 4.27 TB/s instead of 4.14; the accurate fused chain 105 -> 96 registers, 2.21 -> 2.50
// TB/s. Kernels with half an SM resident already are left alone (the adds, capped from 1536 to
// 2048 resident threads, lost 0.3%).
void try_register_cap(std::string_view kernel, const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  if (!code.versioned && !code.static_shapes && !code.whole_tiles) return;
  // Small elementwise programs sharing CTAs are left alone, as when each had a CTA of its own
  // (under 128 threads): the attempt took 60-80 ms of an elementwise kernel's cold compile. Small
  // programs that reduce are capped: softmax over 1024-wide bf16 rows, eight programs per CTA,
  // ran 4.26-4.29 TB/s capped against 3.66 on the H200.
  if (code.programs_per_cta > 1 && code.exchange_free) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&] { code.stage_ms.emplace_back("register-cap", ms_since(t0)); };
  // A kernel compiled for static shapes is measured whole (probed_ptx): where its launch has
  // ragged tiles, its edge copy must then keep its frame under the cap too.
  const std::string interior_ptx = probed_ptx(code);
  auto resources = [&](const std::string& ptx) { return linked_resources(kernel, ptx, calls, code.arch); };
  const std::optional<KernelResources> interior = resources(interior_ptx);
  if (!interior) return done();
  // The interior's own occupancy, then one more program at a time while its interior compiled
  // under the cap keeps its stack frame, up to half an SM's threads.
  const GpuArch& sm = sm_of(code);
  int wanted = std::max(resident_blocks(sm, *interior, code.block_size), *blocks);
  while ((wanted + 1) * code.block_size <= half_an_sm(sm)) {
    const std::optional<KernelResources> squeezed =
        resources(ptx_with_register_cap(interior_ptx, register_cap(sm, wanted + 1, code.block_size)));
    if (!squeezed || squeezed->frame_bytes > interior->frame_bytes ||
        resident_blocks(sm, *squeezed, code.block_size) <= wanted)
      break;
    ++wanted;
  }
  if (wanted <= *blocks) return done();
  auto capped = linked_with_cap(kernel, code.ptx, register_cap(sm, wanted, code.block_size), calls, code.arch);
  done();
  if (!capped) return;
  auto second = resources_of(capped->second, capped->first);
  if (!second || resident_blocks(sm, *second, code.block_size) <= *blocks) return;
  code.ptx = std::move(capped->first);
  code.cubin = std::move(capped->second);
}

// A kernel whose loops tile-unroll-streaming-loops unrolled holds each stream's unrolled tiles in
// registers. When that leaves an SM half empty (after try_register_cap), the kernel is compiled once
// more with half the unroll budget, gets its own register cap, and that variant is kept if it fits
// more programs per SM: two programs that overlap each other's waits keep more bytes in flight than
// one program with twice the loads. Measured on the H200 (bench_matvec, Qwen3-4B shapes, one run):
// the fused RMSNorm + matrix-vector product at 16 x 512 tiles needs 126 registers at 512 threads
// unrolled by 4 (one program per SM) and 64 unrolled by 2 (two): QKV 0.49 -> 0.54 of the copy
// bandwidth, the LM head 0.75 -> 0.93; the gate/up product with SwiGLU (1.01 unrolled by 2, 0.93
// by 1) fits one program per SM either way and keeps its unroll.
void try_fewer_in_flight(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                         const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  if (!code.unrolled_streams || code.unroll_bytes != kUnrollBytes) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<GpuCode> variant =
      compile_variant(kernel, ast, spec, calls, code.arch, layout_chose_threads(code) ? 0 : code.block_size,
                      code.exp_range_test, code.rewiden, kUnrollBytes / 2);
  if (variant) try_register_cap(kernel, calls, *variant);
  auto second = variant ? resources_of(variant->cubin, variant->ptx) : std::nullopt;
  code.stage_ms.emplace_back("fewer-in-flight", ms_since(t0));
  if (second && resident_blocks(sm_of(*variant), *second, variant->block_size) > *blocks)
    adopt_variant(code, std::move(*variant));
}

// A launch that fixes the programs per SM (CompilerHints::occupancy): the kernel's registers are
// capped to fit them, at the threads compile_ptx chose. Where the capped kernel spills (its stack
// frame grows) and tile-unroll-streaming-loops unrolled a loop, it is compiled again with half the
// unroll budget, down to no unroll: the loads held in flight are what a smaller register budget
// gives up first, before local memory. No other variant is tried: the launch made the choice.
void fit_occupancy(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                   const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  auto t0 = std::chrono::steady_clock::now();
  const GpuArch& sm = sm_of(code);
  const int blocks = std::min(spec.hints.occupancy, std::max(1, sm.threads_per_sm / code.block_size));
  const int cap = register_cap(sm, blocks, code.block_size);
  auto capped = [&](GpuCode& c) {
    c.ptx = ptx_with_register_cap(c.ptx, cap);
    c.cubin = link_kernel(kernel, c.ptx, calls, c.arch);
    const std::optional<KernelResources> r = resources_of(c.cubin, c.ptx);
    return r ? r->frame_bytes : 0;
  };
  const std::string uncapped_ptx = code.ptx;
  int frame = capped(code);
  // A frame the kernel has uncapped too (private arrays) is no spill; learnt only where the capped
  // kernel has one.
  int own_frame = 0;
  if (frame > 0)
    if (std::optional<KernelResources> uncapped = linked_resources(kernel, uncapped_ptx, calls, code.arch))
      own_frame = uncapped->frame_bytes;
  for (int unroll = code.unroll_bytes / 2; frame > own_frame && code.unrolled_streams && unroll >= kUnrollBytes / 8;
       unroll /= 2) {
    std::optional<GpuCode> variant = compile_variant(kernel, ast, spec, calls, code.arch, code.block_size,
                                                     code.exp_range_test, code.rewiden, unroll);
    if (!variant) break;
    const int variant_frame = capped(*variant);
    if (variant_frame >= frame) break;
    adopt_variant(code, std::move(*variant));
    frame = variant_frame;
  }
  code.stage_ms.emplace_back("occupancy", ms_since(t0));
}

// A kernel that widens a bf16 tile before a reduction and uses it again after it holds the f32
// values in registers across the reduction. When the kernel (after try_register_cap) leaves an SM
// half empty, it is compiled once more with tile-rewiden-after-reduce: the bf16 values, half the
// registers, are held instead and widened again after the reduction. That variant gets its own
// register cap and is kept if it fits more programs per SM. On the H200, RMSNorm over 32768-wide bf16 rows at
// 512 threads then fits two programs per SM in 64 registers, 4.25 TB/s against 3.84 with one
// (torch.compile: 4.16). A kernel the pass leaves unchanged (no such tile) keeps its first variant.
void try_rewidened(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                   const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  if (code.rewiden || code.exchange_free) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<GpuCode> variant = compile_variant(kernel, ast, spec, calls, code.arch,
                                                   layout_chose_threads(code) ? 0 : code.block_size,
                                                   code.exp_range_test, /*rewiden=*/true, code.unroll_bytes);
  if (variant) try_register_cap(kernel, calls, *variant);
  auto second = variant ? resources_of(variant->cubin, variant->ptx) : std::nullopt;
  code.stage_ms.emplace_back("rewiden", ms_since(t0));
  if (second && resident_blocks(sm_of(*variant), *second, variant->block_size) > *blocks) adopt_variant(code, std::move(*variant));
}

// The lowering gives each thread about 32 elements of the largest tile. When the registers (or the
// shared memory) that takes leave fewer than half of an SM's threads resident, as for a row kernel
// that keeps a long row in registers, a kernel of 128 threads or more is compiled once more with
// half as many threads, each with twice the elements: the per-thread registers (indices, addresses)
// are then paid by fewer threads, so more programs, i.e. more tiles in flight, may fit on an SM.
// The second variant is kept if it fits at least a quarter more programs per SM. Measured on the
// H200 (LayerNorm over 8192-wide bf16 rows): 85 registers x 256 threads fit 2 programs per SM,
// 149 x 128 fit 3, and the kernel ran 25% faster. It runs after try_register_cap, which now gives
// that LayerNorm 4 programs of 256 threads (4.24 TB/s against 3.90 with 128 threads),
// so the retry is no longer taken there; it stays for kernels whose interior spills under the cap.
// Kernels with registers to spare (elementwise ones) are compiled once.
void try_fewer_threads(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                       const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  if (layout_chose_threads(code) || spec.hints.threads) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<GpuCode> half =
      compile_variant(kernel, ast, spec, calls, code.arch, code.block_size / 2, code.exp_range_test, code.rewiden,
                      code.unroll_bytes);
  if (!half) return;
  auto second = resources_of(half->cubin, half->ptx);
  code.stage_ms.emplace_back("fewer-threads", ms_since(t0));
  if (second && 4 * resident_blocks(sm_of(*half), *second, half->block_size) >= 5 * *blocks) adopt_variant(code, std::move(*half));
}

// The widest vector access to global memory in `ptx` in bytes (`ld.global.nc.v4.b32`: 16), 0 if
// it has none.
int widest_global_vector_bytes(std::string_view ptx) {
  int widest = 0;
  for (std::size_t at = ptx.find(".global"); at != std::string_view::npos; at = ptx.find(".global", at + 1)) {
    std::size_t end = ptx.find_first_of(" \t", at);
    std::string_view op = ptx.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    std::size_t v = op.find(".v");
    std::size_t b = op.find(".b", v == std::string_view::npos ? 0 : v + 2);
    if (v == std::string_view::npos || b == std::string_view::npos) continue;
    int lanes = 0, bits = 0;
    std::from_chars(op.data() + v + 2, op.data() + op.size(), lanes);
    std::from_chars(op.data() + b + 2, op.data() + op.size(), bits);
    widest = std::max(widest, lanes * bits / 8);
  }
  return widest;
}

// A row kernel with one reduction (one tile.reduce: a row sum or max, RMSNorm) compiled for static
// shapes or whole tiles (neither has a bounds test), at the 256 threads the lowering gives rows of
// 8192 elements, is compiled once more with
// twice the threads (16 elements each instead of 32) and its registers capped at what fills the SM
// (32 at 512 threads: 4 programs); that variant is kept if its interior under the cap keeps its
// stack frame (ptxas spills nothing there), it then fills the SM, and its widest global access is
// as wide (a row read in 2048-element chunks by a loop would get 8-byte chunks: 3.1 TB/s against
// 4.4). Without its bounds test the static row sum needs 29 registers at 256 threads,
// 8 programs per SM, and gains nothing from the static shapes; with 4 programs of 512, fewer rows
// at once per SM (as in Inductor's and a hand-written row sum), it does. Measured on the H200 in
// one process beside torch.compile's kernels on the same tensors (medians of paired ratios over
// 12-25 alternating rounds over 32768 x 8192 bf16): the static row sum at 256 threads -0.05%, at 512 +0.11-0.14% against the
// generic one, Inductor +0.14%; static RMSNorm at 256 +0.02-0.08%, at 512 +0.17-0.22%, Inductor
// +0.17-0.19%. softmax_fast (two reductions, a max and a sum) lost 0.3% at 512 threads, so kernels
// with more than one reduction are left alone (LayerNorm and the accurate softmax would spill under
// the cap anyway). The generic row sum at 512 threads, with its bounds test, gained +0.03%: not
// worth one more compile at every first launch. Compiled for whole tiles
// (whole_tiles.h), the row sum and RMSNorm at 512 threads ran within 0.06% of the static ones and
// of Inductor's.
void try_more_threads(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                      const std::vector<DeviceFunctionUse>& calls, GpuCode& code) {
  const bool tested = !code.static_shapes && !code.whole_tiles;  // a bounds test per program
  if (tested || code.reduces != 1 || layout_chose_threads(code) || code.exchange_free || code.block_size != 256 ||
      spec.hints.threads)
    return;
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&] { code.stage_ms.emplace_back("more-threads", ms_since(t0)); };
  const int threads = 2 * code.block_size;
  // Only the PTX: the variant is linked under its cap below.
  GpuCode variant;
  try {
    variant = compile_ptx(kernel, ast, spec, code.arch, threads, code.exp_range_test, code.rewiden, code.unroll_bytes);
  } catch (const Error&) {
    return done();
  }
  // Tiles smaller than the largest (a row read in chunks by a loop) would get narrower chunks.
  if ((code.rewiden && !variant.rewidened) || variant.block_size != threads ||
      widest_global_vector_bytes(variant.ptx) < widest_global_vector_bytes(code.ptx))
    return done();
  const GpuArch& sm = sm_of(code);
  const int cap = register_cap(sm, sm.threads_per_sm / threads, threads);
  const std::string interior = probed_ptx(variant);
  const std::optional<KernelResources> plain = linked_resources(kernel, interior, calls, code.arch);
  const std::optional<KernelResources> squeezed =
      linked_resources(kernel, ptx_with_register_cap(interior, cap), calls, code.arch);
  if (!plain || !squeezed || squeezed->frame_bytes > plain->frame_bytes) return done();
  auto capped = linked_with_cap(kernel, variant.ptx, cap, calls, code.arch);
  done();
  if (!capped) return;
  const std::optional<KernelResources> second = resources_of(capped->second, capped->first);
  if (!second || resident_blocks(sm, *second, threads) * threads < sm.threads_per_sm) return;
  variant.ptx = std::move(capped->first);
  variant.cubin = std::move(capped->second);
  adopt_variant(code, std::move(variant));
}

// A kernel whose accurate exps the lowering grouped behind range tests (tile.exp_in_range: no
// per-element handling of the float range's ends, see LowerElementwise.cpp) is compiled once more
// without them, with the same threads and its own register cap (try_register_cap); that variant
// is kept if it fits more programs per SM. The tests are a branch the compiler schedules around:
// measured on the H200, softmax (exp alone between a max and a sum) went 3.49 -> 3.71 TB/s at the
// same occupancy, but the accurate fused chain (exp among tanh, sqrt and products) went from 94
// to 106 registers, 5 to 4 programs per SM, 2.50 -> 2.24 TB/s. Comparing after the caps matters:
// softmax over 8192-wide bf16 rows at 256 threads needs 95 registers with the tests and 78
// without, but both run capped at 64 without spilling, and then the tests win (4.03 TB/s against
// 3.75).
//
// The variant is compiled and linked on its own thread while the first one is linked and tuned
// (PlainExpVariant): softmax's first compile went from 1.35-1.59 s to 0.75-0.86 s on 2
// cores. Its register cap asks for at most half an SM, so when the first variant has half an SM
// resident already, the capped variant would not fit more (unless ptxas used fewer registers than
// the cap allows): it is then compared uncapped, and capped only if the first leaves an SM half
// empty.
//
// PlainExpVariant holds that variant of a kernel just compiled to PTX (compile_ptx), started on a
// thread of its own if the kernel has exp range tests; keep_if_faster then waits for it and keeps
// it in place of the first variant if it fits more programs per SM.
class PlainExpVariant {
 public:
  PlainExpVariant(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                  const std::vector<DeviceFunctionUse>& calls, const GpuCode& first)
      : kernel_(kernel), ast_(ast), spec_(spec), calls_(calls), arch_(first.arch),
        t0_(std::chrono::steady_clock::now()) {
    if (!first.has_exp_range_tests) return;
    // The same threads, or the lowering's own choice where its CTA layout chose them.
    threads_ = layout_chose_threads(first) ? 0 : first.block_size;
    try {
      compiling_ = std::make_unique<StackThread>(
          kCompilerStackBytes, [this] { variant_ = compile_plain_exps(threads_); }, "a kernel's variant's compile");
    } catch (const Error&) {
      inline_ = true;  // no thread to be had: keep_if_faster compiles it on this one
    }
  }

  void keep_if_faster(GpuCode& code) {
    if (!compiling_ && !inline_) return;
    if (inline_ && threads_ != 0) threads_ = code.block_size;  // as below, without compiling twice
    std::optional<GpuCode> plain;
    if (inline_) {
      plain = compile_plain_exps(threads_);
    } else {
      compiling_->join();
      plain = std::move(variant_);
    }
    // The first variant took half the threads (try_fewer_threads): the variant is compiled again
    // with those, as before the two were compiled side by side.
    if (plain && threads_ != 0 && code.block_size != threads_)
      plain = compile_plain_exps(code.block_size);
    auto first = resources_of(code.cubin, code.ptx);
    if (plain && first && programs_if_half_empty(sm_of(code), *first, code.block_size)) try_register_cap(kernel_, calls_, *plain);
    code.stage_ms.emplace_back("plain-exp", ms_since(t0_));
    auto second = plain ? resources_of(plain->cubin, plain->ptx) : std::nullopt;
    if (!first || !second ||
        resident_blocks(sm_of(*plain), *second, plain->block_size) <= resident_blocks(sm_of(code), *first, code.block_size))
      return;
    adopt_variant(code, std::move(*plain));
  }

 private:
  std::optional<GpuCode> compile_plain_exps(int threads) const {
    return compile_variant(kernel_, ast_, spec_, calls_, arch_, threads, /*exp_range_test=*/false, /*rewiden=*/false,
                           kUnrollBytes);
  }

  std::string_view kernel_;
  const KernelAst& ast_;
  const Specialization& spec_;
  const std::vector<DeviceFunctionUse>& calls_;
  std::string arch_;
  int threads_ = 0;
  std::chrono::steady_clock::time_point t0_;
  std::optional<GpuCode> variant_;
  bool inline_ = false;  // no thread could be started for it: compiled by keep_if_faster
  std::unique_ptr<StackThread> compiling_;  // compiles variant_; joined by its destructor, also on an exception
};

}  // namespace

GpuCode compile_gpu_code(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                         const std::vector<DeviceFunctionUse>& calls, const std::string& arch) {
  GpuCode code = compile_ptx(kernel, ast, spec, arch, spec.hints.threads);
  if (code.persistent || code.mma_sync) {
    // The tensor-core lowerings: their CTA layouts and register budgets are their own; no variants.
    // Code for an architecture-specific target needs a whole-program compile: the toolkit's ptxas
    // makes it here where it can stand in for the driver (ptxas.h: compiles on the caller's
    // thread, so a tuner's options compile at once), else the code is loaded as PTX, which the
    // driver compiles (KernelCode::loads_ptx). nvJitLink's relocatable cubin would not run as
    // well and is made only for a CompiledArtifact (detail::compile) or the dump directory, not on
    // a launch's first compile.
    if (!code.isa.empty() && calls.empty()) {
      auto t0 = std::chrono::steady_clock::now();
      if (std::optional<std::vector<char>> cubin = cubin_for_this_gpu(code.ptx, code.isa)) {
        code.cubin = std::move(*cubin);
        code.whole_program_cubin = true;
        code.stage_ms.emplace_back("ptxas", ms_since(t0));
        dump_cubin(code);
        return code;
      }
      if (dump_dir().empty()) return code;
    }
    auto t0 = std::chrono::steady_clock::now();
    code.cubin = link_kernel(kernel, code.ptx, calls, code.link_arch());
    code.stage_ms.emplace_back("cubin", ms_since(t0));
    dump_cubin(code);
    return code;
  }
  if (spec.hints.occupancy > 0) {
    fit_occupancy(kernel, ast, spec, calls, code);
    dump_cubin(code);
    return code;
  }
  PlainExpVariant plain(kernel, ast, spec, calls, code);
  auto t0 = std::chrono::steady_clock::now();
  code.cubin = link_kernel(kernel, code.ptx, calls, arch);
  code.stage_ms.emplace_back("cubin", ms_since(t0));
  try_register_cap(kernel, calls, code);
  try_fewer_in_flight(kernel, ast, spec, calls, code);
  try_rewidened(kernel, ast, spec, calls, code);
  try_fewer_threads(kernel, ast, spec, calls, code);
  try_more_threads(kernel, ast, spec, calls, code);
  plain.keep_if_faster(code);
  dump_cubin(code);
  return code;
}

}  // namespace tessera::detail
