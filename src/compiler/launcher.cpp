// launcher.cpp: detail::submit and detail::compile, the library side of Kernel::launch/compile.
//
// A launch (1) finds the compiled kernel in the process cache (single flight: concurrent first
// launches compile once) or compiles it, consulting the disk cache for cubins, (2) checks the
// arguments against the kernel's AST (kinds, dtypes, ranks, shapes of tiles loaded "like" an
// output, grid agreement between outputs, aliasing of outputs with anything else), and (3) hands
// a KernelWork to submit_work (runtime_glue/execution.h), which orders it after the work in
// flight on its tensors and runs the grid on a host thread or enqueues it on a GPU stream; a
// synchronous launch then waits. While a graph is captured on this thread the launch is recorded
// into it instead (runtime_glue/graph.cpp). Everything here is plain C++: MLIR and LLVM stay
// behind pipeline.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <future>
#include <new>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_map>
#include <vector>

#include "build_id.h"
#include "cache_key.h"
#include "codegen/mlir_gen.h"
#include "compiler/kernels.h"
#include "compiler/launch_record.h"
#include "compiler/occupancy.h"
#include "compiler/output_overlap.h"
#include "compiler/pipeline.h"
#include "compiler/register_cap.h"
#include "compiler/whole_tiles.h"
#include "cuda_compiler.h"
#include "cuda_driver.h"
#include "device_link.h"
#include "device_memory.h"
#include "disk_cache.h"
#include "frontend/ast.h"
#include "gpu_arch.h"
#include "llvm/ADT/DenseSet.h"
#include "nvjitlink.h"
#include "runtime_glue/execution.h"
#include "runtime_glue/graph_capture.h"
#include "runtime_glue/threads.h"
#include "tessera/kernel.h"
#include "tessera/version.h"

namespace tessera {
namespace detail {
namespace {

using Kind = ArgDesc::Kind;

// The most programs a launch may have along each grid axis, on every target (check_args).
constexpr int64_t kMaxGridX = 0x7fffffff;
constexpr int64_t kMaxGridYZ = 65535;

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::out: return "output";
    case Kind::in: return "input";
    case Kind::scalar: return "scalar";
  }
  return "?";
}
std::string_view kind_name(ParamInfo::Kind k) {
  switch (k) {
    case ParamInfo::Kind::out: return "output";
    case ParamInfo::Kind::in: return "input";
    case ParamInfo::Kind::scalar: return "scalar";
  }
  return "?";
}
std::string shape_str(const ArgDesc& a) {
  return fmt::format("[{}]", fmt::join(a.shape.begin(), a.shape.begin() + a.rank, " "));
}

}  // namespace

std::string target_str(Target t) { return std::string(target_name(t)); }
bool is_gpu(Target t) { return t != Target::cpu; }

bool waits_for_prerequisites(const GpuCode& code) {
  const GpuArch* arch = gpu_arch(code.arch);
  return arch && arch->grid_dependency_control;
}

std::span<const char> device_image(std::string_view kernel, const Compiled& compiled, const CudaDriver& driver) {
  const GpuCode& code = compiled.gpu;
  const GpuArch* arch = gpu_arch(code.arch);
  switch (arch ? device_load(*arch, driver.compute_capability()) : DeviceLoad::none) {
    case DeviceLoad::cubin: return code.cubin;
    case DeviceLoad::ptx:
      if (compiled.links_device_code)
        fail(kernel, fmt::format("compiled for {}, which the GPU ({}, {}) runs only through PTX, and it calls device "
                                 "functions that PTX alone does not hold; compile it for an older target the GPU runs "
                                 "as a cubin, or update tessera",
                                 code.arch, driver.device_name(), driver.arch()));
      return {code.ptx.c_str(), code.ptx.size() + 1};
    case DeviceLoad::none: break;
  }
  fail(kernel, fmt::format("compiled for {} but the GPU ({}) is {}, which runs neither its cubin nor its PTX; "
                           "launch for the GPU's own target (the default) or Target::cpu",
                           code.arch, driver.device_name(), driver.arch()));
}

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

void collect_load_like(const Sexp& n, std::vector<std::pair<int64_t, int64_t>>& out, llvm::DenseSet<const Sexp*>& seen);
std::string layouts_of(std::span<const ArgDesc> args, Target target);
std::string static_shapes_of(std::span<const ArgDesc> args);
Grid partition_grid(const ArgDesc& out);

// Outputs the body stores (every program stores its whole tile) and outputs it reads back. Visits
// each node of the DAG once (`seen`).
void collect_output_uses(const Sexp& n, std::vector<bool>& stored, std::vector<bool>& read,
                         llvm::DenseSet<const Sexp*>& seen) {
  if (!n.is_list || !seen.insert(&n).second) return;
  auto mark = [](std::vector<bool>& v, int64_t p) {
    if (p >= 0 && p < static_cast<int64_t>(v.size())) v[p] = true;
  };
  if (n.head() == "store" && n.items.size() == 3) mark(stored, n[1].as_int());
  // (own DTYPE [DIMS] Q PAD?): the output index follows the tile type (docs/ast-format.md).
  if (n.head() == "own" && unpadded_size(n) == 4) mark(read, n[3].as_int());
  for (const Sexp& c : n.children()) collect_output_uses(c, stored, read, seen);
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
std::optional<GpuCode> compile_variant(std::string_view kernel, const KernelAst& ast,
                                       const std::vector<DeviceFunctionUse>& calls, const std::string& arch,
                                       int threads, bool exp_range_test, bool rewiden) {
  GpuCode variant;
  try {
    variant = compile_ptx(kernel, ast, arch, threads, exp_range_test, rewiden);
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

// A kernel that widens a bf16 tile before a reduction and uses it again after it holds the f32
// values in registers across the reduction. When the kernel (after try_register_cap) leaves an SM
// half empty, it is compiled once more with tile-rewiden-after-reduce: the bf16 values, half the
// registers, are held instead and widened again after the reduction. That variant gets its own
// register cap and is kept if it fits more programs per SM. On the H200, RMSNorm over 32768-wide bf16 rows at
// 512 threads then fits two programs per SM in 64 registers, 4.25 TB/s against 3.84 with one
// (torch.compile: 4.16). A kernel the pass leaves unchanged (no such tile) keeps its first variant.
void try_rewidened(std::string_view kernel, const KernelAst& ast, const std::vector<DeviceFunctionUse>& calls,
                   GpuCode& code) {
  if (code.rewiden || code.exchange_free) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<GpuCode> variant = compile_variant(kernel, ast, calls, code.arch,
                                                   layout_chose_threads(code) ? 0 : code.block_size,
                                                   code.exp_range_test, /*rewiden=*/true);
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
void try_fewer_threads(std::string_view kernel, const KernelAst& ast, const std::vector<DeviceFunctionUse>& calls,
                       GpuCode& code) {
  if (layout_chose_threads(code)) return;
  const std::optional<int> blocks = programs_if_half_empty(code);
  if (!blocks) return;
  auto t0 = std::chrono::steady_clock::now();
  std::optional<GpuCode> half =
      compile_variant(kernel, ast, calls, code.arch, code.block_size / 2, code.exp_range_test, code.rewiden);
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
void try_more_threads(std::string_view kernel, const KernelAst& ast, const std::vector<DeviceFunctionUse>& calls,
                      GpuCode& code) {
  const bool tested = !code.static_shapes && !code.whole_tiles;  // a bounds test per program
  if (tested || code.reduces != 1 || layout_chose_threads(code) || code.exchange_free || code.block_size != 256)
    return;
  auto t0 = std::chrono::steady_clock::now();
  auto done = [&] { code.stage_ms.emplace_back("more-threads", ms_since(t0)); };
  const int threads = 2 * code.block_size;
  // Only the PTX: the variant is linked under its cap below.
  GpuCode variant;
  try {
    variant = compile_ptx(kernel, ast, code.arch, threads, code.exp_range_test, code.rewiden);
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
  PlainExpVariant(std::string_view kernel, const KernelAst& ast, const std::vector<DeviceFunctionUse>& calls,
                  const GpuCode& first)
      : kernel_(kernel), ast_(ast), calls_(calls), arch_(first.arch), t0_(std::chrono::steady_clock::now()) {
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
    return compile_variant(kernel_, ast_, calls_, arch_, threads, /*exp_range_test=*/false, /*rewiden=*/false);
  }

  std::string_view kernel_;
  const KernelAst& ast_;
  const std::vector<DeviceFunctionUse>& calls_;
  std::string arch_;
  int threads_ = 0;
  std::chrono::steady_clock::time_point t0_;
  std::optional<GpuCode> variant_;
  bool inline_ = false;  // no thread could be started for it: compiled by keep_if_faster
  std::unique_ptr<StackThread> compiling_;  // compiles variant_; joined by its destructor, also on an exception
};

// Appended to the layout letters in the cache key of a launch whose tiles are all whole
// (LaunchOptions::whole_tiles): the kernel is compiled with tile.whole_tiles.
constexpr std::string_view kWholeTilesMark = "/whole";

// The process-wide cache of compiled kernels. Never destroyed: work in flight at exit may still
// run its code (the exit drain in runtime_glue/streams.cpp waits for it after the statics made
// later are gone).
class KernelCache {
 public:
  static KernelCache& get() {
    static KernelCache* cache = new KernelCache();
    return *cache;
  }

  // The compiled kernel a launch runs. Its cache key is the launch's layout letters, then "|" and
  // its shapes for LaunchOptions::static_shapes. A key other than static holds two variants: the
  // kernel that tests its bounds per program, and the one for whole tiles (compiled with
  // kWholeTilesMark appended to the key), which a launch runs where its WholeTiles check holds and
  // LaunchOptions::whole_tiles is on. The check, made from the AST when the key is first met, is
  // kept beside the variants: a launch takes the lock and looks up its key once.
  std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& r, Target target) {
    const bool fixed = r.options && r.options->static_shapes;
    const bool whole_allowed = !fixed && !(r.options && !r.options->whole_tiles);
    std::string layouts = layouts_of(r.args, target);
    if (fixed) layouts += static_shapes_of(r.args);
    // Fast path: the AST text of a Kernel<Fn> instantiation is a constant with a fixed address, so
    // (address, size, name, layouts, target) finds a compiled kernel without hashing the text.
    const FastKeyView fast{r.ast.data(), r.ast.size(), r.kernel, layouts, target};
    std::shared_ptr<const WholeTiles> check;
    {
      std::lock_guard lock(mutex_);
      if (auto it = fast_.find(fast); it != fast_.end()) {
        const FastEntry& e = it->second;
        const bool whole = whole_allowed && whole_tiles_hold(e.check.get(), r.args);
        if (const std::shared_ptr<const Compiled>& c = e.variants[whole]) {
          stats_.memory_hits++;
          return c;
        }
        check = e.check;
      }
    }
    // The parse, the AST walks and the compile run on a stack of known size (kCompilerStackBytes);
    // the system refusing that thread fails the launch (tessera::Error).
    const std::string compiling = fmt::format("compiling kernel '{}'", r.kernel);
    if (!check && !fixed)
      run_with_stack(
          kCompilerStackBytes,
          [&] { check = std::make_shared<const WholeTiles>(r.kernel, parse_ast(r.kernel, r.ast)); }, compiling);
    const bool whole = whole_allowed && whole_tiles_hold(check.get(), r.args);
    const std::string variant = whole ? layouts + std::string(kWholeTilesMark) : layouts;
    std::string key = fmt::format("{}\n{}\n{}\n{}", target_str(target), r.kernel, variant, r.ast);
    std::shared_future<std::shared_ptr<const Compiled>> future;
    std::promise<std::shared_ptr<const Compiled>> promise;
    bool owner = false;
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        future = it->second;
        stats_.memory_hits++;
      } else {
        future = promise.get_future().share();
        entries_.emplace(key, future);
        owner = true;
      }
    }
    if (!owner) return future.get();  // rethrows the compile error, if any
    try {
      std::shared_ptr<const Compiled> compiled;
      run_with_stack(kCompilerStackBytes, [&] { compiled = compile(r.kernel, r.ast, variant, target); }, compiling);
      promise.set_value(compiled);
      std::lock_guard lock(mutex_);
      FastEntry& e = fast_[FastKey{r.ast.data(), r.ast.size(), std::string(r.kernel), layouts, target}];
      if (!e.check) e.check = check;
      e.variants[whole] = compiled;
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard lock(mutex_);
      entries_.erase(key);  // a later launch may try again (e.g. after fixing the environment)
    }
    return future.get();
  }

  CacheStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
    fast_.clear();
  }

 private:
  struct FastKeyView {
    const char* ast;
    std::size_t ast_size;
    std::string_view kernel;
    std::string_view layouts;
    Target target;
    bool operator==(const FastKeyView&) const = default;
  };
  struct FastKey {
    const char* ast;
    std::size_t ast_size;
    std::string kernel;
    std::string layouts;
    Target target;
    FastKeyView view() const { return {ast, ast_size, kernel, layouts, target}; }
  };
  static FastKeyView view_of(const FastKeyView& k) { return k; }
  static FastKeyView view_of(const FastKey& k) { return k.view(); }
  struct FastHash {
    using is_transparent = void;
    template <class K>
    std::size_t operator()(const K& key) const {
      FastKeyView k = view_of(key);
      std::size_t h = std::hash<const void*>()(k.ast) ^ (k.ast_size * 0x9e3779b97f4a7c15ull);
      h ^= std::hash<std::string_view>()(k.kernel) + 0x9e3779b9 + (h << 6) + (h >> 2);
      h ^= std::hash<std::string_view>()(k.layouts) + 0x9e3779b9 + (h << 6) + (h >> 2);
      return h ^ static_cast<std::size_t>(k.target);
    }
  };
  struct FastEq {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view_of(a) == view_of(b);
    }
  };
  // What a fast key holds: the kernel's whole-tiles check (null for static shapes) and the
  // variants compiled so far, [0] the one that tests its bounds (or the static one), [1] the one
  // for whole tiles.
  struct FastEntry {
    std::shared_ptr<const WholeTiles> check;
    std::array<std::shared_ptr<const Compiled>, 2> variants;
  };

  // Whether every tile of the launch is whole (`check` null: never), over the grid of its first
  // output (check_args rejects launches whose outputs disagree).
  static bool whole_tiles_hold(const WholeTiles* check, std::span<const ArgDesc> args) {
    if (!check) return false;
    auto out = std::find_if(args.begin(), args.end(), [](const ArgDesc& a) { return a.kind == Kind::out; });
    return out != args.end() && check->holds(args, partition_grid(*out).dims);
  }

  std::shared_ptr<const Compiled> compile(std::string_view kernel, std::string_view ast_text,
                                          const std::string& layouts, Target target) {
    auto c = std::make_shared<Compiled>();
    c->text = std::make_unique<std::string>(ast_text);
    c->ast = parse_ast(kernel, *c->text);
    // The layout letters, then "|" and the launch's shapes for LaunchOptions::static_shapes, or
    // kWholeTilesMark for a launch whose tiles are all whole.
    std::string_view letters = layouts;
    if (letters.ends_with(kWholeTilesMark)) {
      letters.remove_suffix(kWholeTilesMark.size());
      c->ast.whole_tiles = true;
    }
    std::size_t bar = letters.find('|');
    c->ast.layouts = std::string(letters.substr(0, bar));
    if (bar != std::string_view::npos) parse_static_shapes(kernel, letters.substr(bar + 1), c->ast);
    c->label = std::make_shared<const std::string>(fmt::format("kernel '{}'", kernel));
    std::vector<bool> stored(c->ast.params.size()), read(c->ast.params.size());
    naming_kernel(kernel, [&] {
      llvm::DenseSet<const Sexp*> seen;
      collect_load_like(*c->ast.body, c->load_likes, seen);
      seen.clear();
      collect_output_uses(*c->ast.body, stored, read, seen);
    });
    c->overwrites.resize(c->ast.params.size());
    for (std::size_t i = 0; i < c->overwrites.size(); ++i)
      c->overwrites[i] = c->ast.params[i].kind == ParamInfo::Kind::out && stored[i] && !read[i];
    if (target == Target::cpu) {
      c->cpu = compile_cpu(kernel, c->ast);
      std::lock_guard lock(mutex_);
      stats_.compiles++;
      return c;
    }
    std::string arch = target_str(target);
    std::vector<DeviceFunctionUse> calls = device_functions(kernel, c->ast);
    c->links_device_code = !calls.empty();
    bool uses_nvrtc = std::any_of(calls.begin(), calls.end(), [](const DeviceFunctionUse& f) { return !f.is_ptx; });
    // self_build_id(): cubins of one build of the compiler are never served to another.
    const CacheKeyMaterial key{std::string(kernel), sha256_hex(ast_text), arch, layouts, TESSERA_VERSION_STRING,
                               self_build_id(), llvm_version(), nvjitlink_version(),
                               uses_nvrtc ? nvrtc_version() : ""};
    // While TESSERA_DUMP_DIR is set, a kernel the disk cache holds is compiled all the same, so
    // that its stages are written; the new cubin then replaces the cached one. Otherwise a miss
    // takes the key's compile lock, held until the cubin is stored, so that of several processes
    // compiling the kernel at once one compiles and the others load its cubin.
    // An entry is the cubin, its PTX and its launch record (launch_record.h); one whose record does
    // not parse or names another target is recompiled.
    DiskCache disk(DiskCache::default_dir());
    std::optional<std::vector<char>> cubin, ptx;
    std::optional<LaunchRecord> record;
    int bad_records = 0;
    CompileLock compiling;
    auto load_entry = [&] {
      cubin = disk.load(key, "cubin");
      ptx = cubin ? disk.load(key, "ptx") : std::nullopt;
      std::optional<std::vector<char>> launch = ptx ? disk.load(key, "launch") : std::nullopt;
      record = launch ? parse_launch_record(std::string_view(launch->data(), launch->size())) : std::nullopt;
      if (launch && (!record || record->arch != arch)) {
        record.reset();
        ++bad_records;
      }
      return cubin && ptx && record;
    };
    if (dump_dir().empty() && !load_entry()) {
      compiling = disk.lock_for_compile(key);
      load_entry();
    }
    {
      std::lock_guard lock(mutex_);
      stats_.disk_corrupt += disk.stats().corrupt + bad_records;
    }
    if (cubin && ptx && record) {
      apply_launch_record(*record, c->gpu);
      c->gpu.symbol = kernel_symbol(kernel);
      c->gpu.ptx.assign(ptx->begin(), ptx->end());
      c->gpu.cubin = std::move(*cubin);
      c->from_disk_cache = true;
      std::lock_guard lock(mutex_);
      stats_.disk_hits++;
      return c;
    }
    c->gpu = compile_ptx(kernel, c->ast, arch);
    PlainExpVariant plain(kernel, c->ast, calls, c->gpu);
    auto t0 = std::chrono::steady_clock::now();
    c->gpu.cubin = link_kernel(kernel, c->gpu.ptx, calls, arch);
    c->gpu.stage_ms.emplace_back("cubin", ms_since(t0));
    try_register_cap(kernel, calls, c->gpu);
    try_rewidened(kernel, c->ast, calls, c->gpu);
    try_fewer_threads(kernel, c->ast, calls, c->gpu);
    try_more_threads(kernel, c->ast, calls, c->gpu);
    plain.keep_if_faster(c->gpu);
    dump_cubin(c->gpu);
    const std::string launch = to_json(launch_record_of(c->gpu));
    disk.store(key, "launch", std::span<const char>(launch.data(), launch.size()));
    disk.store(key, "ptx", std::span<const char>(c->gpu.ptx.data(), c->gpu.ptx.size()));
    disk.store(key, "cubin", std::span<const char>(c->gpu.cubin.data(), c->gpu.cubin.size()));
    std::lock_guard lock(mutex_);
    stats_.compiles++;
    return c;
  }

  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Compiled>>> entries_;
  std::unordered_map<FastKey, FastEntry, FastHash, FastEq> fast_;
  CacheStats stats_;
};

// Whether a tensor argument is its whole storage: dense, row-major, from its start. Only then may
// a launch that overwrites it skip the storage's previous contents (a view's neighbours must be
// kept).
bool covers_storage(const ArgDesc& a) {
  const auto rank = static_cast<std::size_t>(a.rank);
  if (a.offset != 0 || !dense_row_major({a.shape.data(), rank}, {a.strides.data(), rank})) return false;
  int64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= a.shape[d];
  return static_cast<std::size_t>(n) * dtype_size(a.dtype) == a.storage->bytes();
}

// The layout letter of each argument (see KernelAst::layouts). Our device and host allocations
// are at least 64-byte aligned; a view's offset into its storage and foreign device memory are
// checked (the latter on GPU targets).
std::string layouts_of(std::span<const ArgDesc> args, Target target) {
  std::string s;
  for (const ArgDesc& a : args) {
    if (a.kind == Kind::scalar) {
      s += '-';
      continue;
    }
    if (a.strides[a.rank - 1] != 1) {
      s += 's';
      continue;
    }
    bool aligned = (a.offset * dtype_size(a.dtype)) % 16 == 0;
    if (is_gpu(target) && a.storage->foreign_device())
      aligned = aligned && a.storage->mirror->address() % 16 == 0;
    for (int d = 0; d + 1 < a.rank; ++d) aligned = aligned && (a.strides[d] * dtype_size(a.dtype)) % 16 == 0;
    s += aligned ? 'a' : 'c';
  }
  return s;
}

// The programs of an output partition along each grid axis: its shape over its tile, rounded up
// without overflow (1 along an axis whose tile size is not positive, which check_args rejects).
Grid partition_grid(const ArgDesc& out) {
  Grid g;
  for (int d = 0; d < out.rank && d < 3; ++d)
    if (out.tile[d] > 0) g.dims[d] = out.shape[d] / out.tile[d] + (out.shape[d] % out.tile[d] != 0);
  return g;
}

// "|" and the text of the arguments' shapes (see parse_static_shapes), appended to their layout
// letters in the cache key of a launch with LaunchOptions::static_shapes. The grid is that of the
// first output (check_args rejects launches whose outputs disagree).
std::string static_shapes_of(std::span<const ArgDesc> args) {
  std::string s = "|";
  const ArgDesc* first_out = nullptr;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (i) s += ';';
    if (a.kind == Kind::scalar) {
      s += '-';
      continue;
    }
    const auto rank = static_cast<std::size_t>(a.rank);
    s += fmt::format("{}:{}:{}", a.offset, fmt::join(a.shape.begin(), a.shape.begin() + rank, "x"),
                     fmt::join(a.strides.begin(), a.strides.begin() + rank, "x"));
    if (a.kind == Kind::out && !first_out) first_out = &a;
  }
  // tile.grid counts at least one program per axis (an empty launch runs none anyway).
  std::array<int64_t, 3> grid = first_out ? partition_grid(*first_out).dims : std::array<int64_t, 3>{1, 1, 1};
  for (int64_t& g : grid) g = std::max<int64_t>(g, 1);
  return s + fmt::format("@{}", fmt::join(grid, ","));
}

// Collects (input P, output Q) pairs from (load_like TYPE P Q PAD?) nodes, visiting each node once.
void collect_load_like(const Sexp& n, std::vector<std::pair<int64_t, int64_t>>& out, llvm::DenseSet<const Sexp*>& seen) {
  if (!n.is_list || !seen.insert(&n).second) return;
  if (n.head() == "load_like" && unpadded_size(n) == 5) out.emplace_back(n[3].as_int(), n[4].as_int());
  for (const Sexp& c : n.children()) collect_load_like(c, out, seen);
}

}  // namespace

[[noreturn]] void fail(std::string_view kernel, const std::string& what) {
  throw Error(fmt::format("tessera: kernel '{}': {}", kernel, what));
}

std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& r, Target target) {
  return KernelCache::get().lookup_or_compile(r, target);
}

Grid check_args(std::string_view kernel, const Compiled& compiled, std::span<const ArgDesc> args) {
  const KernelAst& ast = compiled.ast;
  if (args.size() != ast.params.size())
    fail(kernel, fmt::format("expected {} arguments, got {}", ast.params.size(), args.size()));
  Grid grid;
  int first_out = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    const ParamInfo& p = ast.params[i];
    if (kind_name(a.kind) != kind_name(p.kind) || a.dtype != p.dtype ||
        (a.kind != Kind::scalar && a.rank != p.rank))
      fail(kernel, fmt::format("parameter {}: expected {} {} of rank {}, got {} {} of rank {}", i, kind_name(p.kind),
                               dtype_name(p.dtype), p.rank, kind_name(a.kind), dtype_name(a.dtype), a.rank));
    if (a.kind != Kind::out) continue;
    if (a.rank > 3) fail(kernel, fmt::format("parameter {}: outputs have rank 1 to 3 (one grid axis per dim)", i));
    for (int d = 0; d < a.rank; ++d)
      if (a.tile[d] <= 0) fail(kernel, fmt::format("parameter {}: tile sizes must be positive", i));
    // The grid comes from the partition's tile, the kernel's accesses from the AST's.
    if (!std::equal(p.tile.begin(), p.tile.end(), a.tile.begin(), a.tile.begin() + a.rank))
      fail(kernel, fmt::format("parameter {}: the partition's tile [{}] is not the kernel's tile [{}]", i,
                               fmt::join(a.tile.begin(), a.tile.begin() + a.rank, " "), fmt::join(p.tile, " ")));
    const Grid g = partition_grid(a);
    if (first_out < 0) {
      first_out = static_cast<int>(i);
      grid = g;
    } else if (g.dims != grid.dims) {
      fail(kernel, fmt::format("output parameter {} has grid [{}] but output parameter {} has grid [{}]; all outputs "
                               "of a launch must have the same grid",
                               i, fmt::join(g.dims, " "), first_out, fmt::join(grid.dims, " ")));
    }
  }
  if (first_out < 0) fail(kernel, "a kernel needs at least one output partition");
  // Program ids are i32 (num_programs too); the GPU's limits hold on every target, so that a launch
  // that runs on the CPU runs on the GPU too (cuda_grid checks the CTAs a program may take).
  if (grid.dims[0] > kMaxGridX || grid.dims[1] > kMaxGridYZ || grid.dims[2] > kMaxGridYZ) {
    const ArgDesc& out = args[first_out];
    fail(kernel, fmt::format("output parameter {} ({} in tiles of [{}]) makes a grid of [{}] programs, more than the "
                             "limits of 2^31-1 along x (its first dimension) and 65535 along y and z; use larger tiles",
                             first_out, shape_str(out), fmt::join(out.tile.begin(), out.tile.begin() + out.rank, " "),
                             fmt::join(grid.dims, " ")));
  }
  // Outputs are exclusive: no other argument may name the same memory.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != Kind::out) continue;
    for (std::size_t j = 0; j < args.size(); ++j) {
      if (j == i || args[j].kind == Kind::scalar || args[j].storage != args[i].storage) continue;
      fail(kernel, fmt::format("output parameter {} aliases {} parameter {}: an output must not be passed twice or "
                               "also read as an input",
                               i, kind_name(args[j].kind), j));
    }
  }
  // Nor may an output reach one element twice, or share foreign memory with another argument.
  check_output_overlap(kernel, args);
  for (auto [p, q] : compiled.load_likes) {
    const ArgDesc& in = args[p];
    const ArgDesc& out = args[q];
    if (in.rank != out.rank || !std::equal(in.shape.begin(), in.shape.begin() + in.rank, out.shape.begin()))
      fail(kernel, fmt::format("input parameter {} has shape {} but is loaded like output parameter {} of shape {}; "
                               "they must have the same shape",
                               p, shape_str(in), q, shape_str(out)));
  }
  return grid;
}

// The flattened parameter list (see kernels.h).
std::vector<int64_t> flatten_args(std::span<const ArgDesc> args, std::span<const int64_t> pointers) {
  std::vector<int64_t> slots;
  flatten_args_into(args, pointers, slots);
  return slots;
}

void flatten_args_into(std::span<const ArgDesc> args, std::span<const int64_t> pointers, std::vector<int64_t>& slots) {
  slots.clear();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (a.kind == Kind::scalar) {
      int64_t v = 0;
      std::memcpy(&v, a.scalar.data(), sizeof(v));
      slots.push_back(v);
      continue;
    }
    int64_t p = pointers[i];
    slots.push_back(p);
    slots.push_back(p);
    slots.push_back(a.offset);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.shape[d]);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.strides[d]);
  }
}

void append_grid_slots(const Compiled& compiled, const Grid& grid, std::vector<int64_t>& slots) {
  if (compiled.gpu.programs_per_cta > 1) slots.push_back(grid.dims[0]);
}

unsigned cuda_block(const Compiled& compiled, const Grid& grid) {
  const int64_t threads = compiled.gpu.block_size / compiled.gpu.programs_per_cta;
  return static_cast<unsigned>(threads * programs_per_cta_of_launch(compiled.gpu.programs_per_cta, grid.dims[0]));
}

std::array<int64_t, 3> cuda_grid(std::string_view kernel, const Compiled& compiled, const Grid& grid) {
  std::array<int64_t, 3> dims = grid.dims;
  const int64_t ctas = compiled.gpu.ctas_per_program;
  if (ctas > 1 && dims[0] > 0x7fffffff / ctas)
    throw Error(fmt::format("tessera: kernel '{}': {} programs along grid x, each run as {} CTAs, exceed the GPU's "
                            "limit of 2^31-1 CTAs",
                            kernel, dims[0], ctas));
  dims[0] *= ctas;
  // Programs sharing CTAs: program ids (i32, like the count the kernel takes) must still fit.
  const int64_t shared = programs_per_cta_of_launch(compiled.gpu.programs_per_cta, grid.dims[0]);
  if (shared > 1 && dims[0] > 0x7fffffff)
    throw Error(fmt::format("tessera: kernel '{}': {} programs along grid x exceed the limit of 2^31-1", kernel,
                            dims[0]));
  dims[0] = (dims[0] + shared - 1) / shared;
  check_grid(kernel, dims);
  return dims;
}

namespace {

// A program's workspace (CpuKernel::workspace_bytes): 64-byte aligned, freed at the end of the
// scope; none for 0 bytes. Throws std::bad_alloc.
class Workspace {
 public:
  explicit Workspace(std::size_t bytes)
      : bytes_(bytes), data_(bytes ? ::operator new(bytes, std::align_val_t{64}) : nullptr) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (data_) ::operator delete(data_, std::align_val_t{64});
  }
  // The five int64 of its descriptor (see CpuKernel::run).
  std::array<int64_t, 5> descriptor() const {
    const auto address = reinterpret_cast<int64_t>(data_);
    return {address, address, 0, static_cast<int64_t>(bytes_), 1};
  }

 private:
  std::size_t bytes_;
  void* data_;
};

// Stack that run_programs' own frames take below a program's (the loop over programs).
constexpr std::size_t kRunnerStackBytes = std::size_t{16} << 10;
// Smallest stack of the threads run_programs starts.
constexpr std::size_t kMinWorkerStackBytes = std::size_t{1} << 20;

}  // namespace

// Programs run on the calling thread (all of them when there are few) when its stack has room for
// a program's frames (CpuKernel::stack_bytes), else on a thread started with that much stack (the
// caller's may be small: a user's thread pool, a low RLIMIT_STACK); the other workers' threads
// too. Each thread has a workspace of its own.
void run_programs(const CpuKernel& k, std::span<const int64_t> base, const Grid& grid) {
  const int64_t programs = grid.count();
  if (programs == 0) return;
  static const unsigned cores = std::thread::hardware_concurrency();  // reads sysfs: once
  unsigned workers = std::max(1u, std::min<unsigned>(cores, 16));
  if (programs < 64) workers = 1;
  const std::size_t workspace_bytes = k.workspace_bytes();
  const std::size_t stack = k.stack_bytes() + kRunnerStackBytes;
  auto work = [&](int64_t begin, int64_t end) {
    Workspace workspace(workspace_bytes);
    std::vector<int64_t> slots(base.begin(), base.end());
    std::array<int32_t, 6> ids{0, 0, 0, static_cast<int32_t>(grid.dims[0]), static_cast<int32_t>(grid.dims[1]),
                               static_cast<int32_t>(grid.dims[2])};
    std::array<int64_t, 5> workspace_slots = workspace.descriptor();
    std::vector<void*> argv;
    for (auto& s : slots) argv.push_back(&s);
    for (auto& id : ids) argv.push_back(&id);
    for (auto& w : workspace_slots) argv.push_back(&w);
    for (int64_t p = begin; p < end; ++p) {
      ids[0] = static_cast<int32_t>(p % grid.dims[0]);
      ids[1] = static_cast<int32_t>((p / grid.dims[0]) % grid.dims[1]);
      ids[2] = static_cast<int32_t>(p / (grid.dims[0] * grid.dims[1]));
      k.run(argv.data());
    }
  };
  // Programs run on the calling thread only if its stack has room for a program's frames.
  const bool room_here = stack_left() >= stack;
  const std::size_t thread_stack = std::max(stack, kMinWorkerStackBytes);
  auto run_here = [&](int64_t begin, int64_t end) {
    if (room_here) return work(begin, end);
    run_with_stack(thread_stack, [&] { work(begin, end); }, "the CPU target's programs");  // or Error
  };
  if (workers == 1) return run_here(0, programs);
  // Chunks 0..workers-2 on threads of their own, the last on the calling thread. If the system
  // refuses a thread (threads.h), the calling thread runs every chunk from that one on: fewer
  // threads, same result. The threads are destroyed (joined) before `work` if run_here throws.
  std::vector<std::unique_ptr<StackThread>> threads;
  threads.reserve(workers);
  const int64_t chunk = (programs + workers - 1) / workers;
  int64_t here = 0;  // the first program the calling thread runs
  while (here + chunk < programs && threads.size() + 1 < workers) {
    try {
      threads.push_back(std::make_unique<StackThread>(
          thread_stack, [&work, b = here, e = here + chunk] { work(b, e); }, "the CPU target's programs",
          /*injectable=*/true));
    } catch (const Error&) {
      break;
    }
    here += chunk;
  }
  run_here(here, programs);
  // An exception on a worker (std::bad_alloc for its workspace) is rethrown once all have ended.
  std::exception_ptr failure;
  for (auto& t : threads) {
    try {
      t->join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

namespace {

// One launch of a compiled tessera kernel, for submit_work.
class KernelWork final : public Work {
 public:
  KernelWork(std::string_view kernel, std::shared_ptr<const Compiled> compiled, std::span<const ArgDesc> args,
             const Grid& grid, double* elapsed_ms)
      : kernel_(kernel), compiled_(std::move(compiled)), args_(args), grid_(grid), elapsed_ms_(elapsed_ms) {}
  ~KernelWork() override {
    for (CUevent e : timing_)
      if (e) CudaDriver::get().cuEventDestroy_v2(e);
  }

  std::function<void()> cpu_task() override {
    std::vector<int64_t> pointers(args_.size(), 0);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].kind != Kind::scalar) pointers[i] = reinterpret_cast<int64_t>(args_[i].storage->host_raw());
    return [compiled = compiled_, slots = flatten_args(args_, pointers), grid = grid_, ms = elapsed_ms_] {
      auto t0 = std::chrono::steady_clock::now();
      run_programs(*compiled->cpu, slots, grid);
      if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
  }

  void enqueue_gpu(CudaDriver& driver, CUstream stream) override {
    if (elapsed_ms_) *elapsed_ms_ = 0;
    if (grid_.count() == 0) return;
    const std::vector<int64_t>& slots = parameter_slots(driver);
    const std::array<unsigned, 3> grid = cuda_grid_of_launch();
    thread_local std::vector<void*> params;  // not re-entered, like parameter_slots
    params.clear();
    for (const int64_t& s : slots) params.push_back(const_cast<int64_t*>(&s));
    CUfunction fn = function(driver);
    if (elapsed_ms_) {
      for (CUevent& e : timing_) driver.check(driver.cuEventCreate(&e, 0), "cuEventCreate");
      driver.check(driver.cuEventRecord(timing_[0], stream), "cuEventRecord");
    }
    try {
      tessera::launch(fn, grid, {block(), 1, 1}, shared_bytes(), stream, params.data(),
                      waits_for_prerequisites(compiled_->gpu));
    } catch (const Error& e) {
      fail(kernel_, e.what());
    }
    if (elapsed_ms_) driver.check(driver.cuEventRecord(timing_[1], stream), "cuEventRecord");
  }

  bool describe_launch(CudaDriver& driver, DeferredLaunch& d) override {
    if (elapsed_ms_ || grid_.count() == 0) return false;
    const std::vector<int64_t>& slots = parameter_slots(driver);
    if (slots.size() > DeferredLaunch::kMaxSlots) return false;
    d.function = function(driver);
    d.grid = cuda_grid_of_launch();
    d.block = block();
    d.shared_bytes = shared_bytes();
    d.programmatic = waits_for_prerequisites(compiled_->gpu);
    d.count = static_cast<std::uint32_t>(slots.size());
    std::copy(slots.begin(), slots.end(), d.slots.begin());
    d.keep_alive = compiled_;
    d.label = compiled_->label;
    return true;
  }

  std::shared_ptr<const void> keep_alive() const override { return compiled_; }

  // After the launch has been waited for: the GPU time between the timing events.
  void read_gpu_time(CudaDriver& driver) {
    if (!elapsed_ms_ || !timing_[0]) return;
    float ms = 0;
    driver.check(driver.cuEventElapsedTime_v2(&ms, timing_[0], timing_[1]), "cuEventElapsedTime");
    *elapsed_ms_ = ms;
  }

 private:
  // Checks the GPU and flattens the arguments (device addresses included) into per-thread
  // scratch, valid until the next call on this thread (enqueue_gpu and describe_launch are not
  // re-entered).
  const std::vector<int64_t>& parameter_slots(CudaDriver& driver) {
    device_image(kernel_, *compiled_, driver);  // throws when the GPU cannot run the kernel
    thread_local std::vector<int64_t> pointers, slots;
    pointers.assign(args_.size(), 0);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].kind != Kind::scalar) pointers[i] = static_cast<int64_t>(device_address(driver, *args_[i].storage));
    flatten_args_into(args_, pointers, slots);
    append_grid_slots(*compiled_, grid_, slots);
    return slots;
  }
  // The CUDA grid (checked against the GPU's limits: throws naming the kernel).
  std::array<unsigned, 3> cuda_grid_of_launch() const {
    std::array<int64_t, 3> dims = cuda_grid(kernel_, *compiled_, grid_);
    return {static_cast<unsigned>(dims[0]), static_cast<unsigned>(dims[1]), static_cast<unsigned>(dims[2])};
  }
  unsigned block() const { return cuda_block(*compiled_, grid_); }
  // The scratch over 48 KiB, in dynamic shared memory (see Passes.td); 0 for the others.
  unsigned shared_bytes() const { return static_cast<unsigned>(compiled_->gpu.dynamic_shared_bytes); }
  // The loaded kernel, opted into its dynamic shared memory (once, at its first launch).
  CUfunction function(CudaDriver& driver) const {
    try {
      return compiled_->loaded.function(driver, device_image(kernel_, *compiled_, driver), compiled_->gpu.symbol,
                                        shared_bytes());
    } catch (const Error& e) {
      fail(kernel_, e.what());
    }
  }

  std::string_view kernel_;
  std::shared_ptr<const Compiled> compiled_;
  std::span<const ArgDesc> args_;
  Grid grid_;
  double* elapsed_ms_;
  std::array<CUevent, 2> timing_{};
};

}  // namespace

CompletionPtr submit(const LaunchRequest& r, Target target) {
  if (GraphCapture* capture = current_capture()) {
    capture->record_kernel(r, target);
    return nullptr;
  }
  auto compiled = lookup_or_compile(r, target);
  Grid grid = check_args(r.kernel, *compiled, r.args);
  Submission sub;
  sub.label = compiled->label;
  sub.gpu = is_gpu(target);
  sub.options = r.options;
  sub.wait = r.wait || r.elapsed_ms;
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    const ArgDesc& a = r.args[i];
    if (a.kind != Kind::scalar)
      sub.uses.push_back({a.storage.get(), a.kind == Kind::out,
                          a.kind == Kind::out && compiled->overwrites[i] && covers_storage(a)});
  }
  if (sub.gpu && !CudaDriver::get_if_available())
    fail(r.kernel, fmt::format("cannot run on {}: no usable GPU ({}); use TESSERA_TARGET=cpu", target_str(target),
                               CudaDriver::unavailable_reason()));
  KernelWork work(r.kernel, std::move(compiled), r.args, grid, r.elapsed_ms);
  CompletionPtr done = submit_work(sub, work);
  if (sub.gpu && r.elapsed_ms) work.read_gpu_time(CudaDriver::get());
  return done;
}

void launch(const LaunchRequest& r, Target target) {
  LaunchRequest sync = r;
  sync.wait = true;
  submit(sync, target);
}

CompiledArtifact compile(const LaunchRequest& r, Target target) {
  auto compiled = lookup_or_compile(r, target);
  check_args(r.kernel, *compiled, r.args);
  CompiledArtifact a;
  a.target = target_str(target);
  a.ptx = compiled->gpu.ptx;
  a.cubin = compiled->gpu.cubin;
  a.from_disk_cache = compiled->from_disk_cache;
  a.stage_ms = compiled->gpu.stage_ms;
  return a;
}

}  // namespace detail

CacheStats cache_stats() { return detail::KernelCache::get().stats(); }
void clear_memory_cache() { detail::KernelCache::get().clear(); }

std::string_view to_string(Target target) { return detail::target_name(target); }

std::span<const Target> gpu_targets() {
  static const std::vector<Target> targets = [] {
    std::vector<Target> v;
    for (const detail::GpuArch& a : detail::gpu_archs()) v.push_back(a.target);
    return v;
  }();
  return targets;
}

Target default_target() {
  if (const char* t = std::getenv("TESSERA_TARGET"); t && *t) {
    if (std::optional<Target> named = detail::target_named(t)) return *named;
    throw Error(fmt::format("tessera: TESSERA_TARGET='{}' is not one of {}", t, detail::target_names()));
  }
  CudaDriver* driver = CudaDriver::get_if_available();
  if (!driver) return Target::cpu;
  if (std::optional<Target> gpu = detail::default_gpu_target(driver->compute_capability())) return *gpu;
  throw Error(fmt::format("tessera: the GPU ({}, compute capability {}.{}) is older than tessera's oldest target, "
                          "sm_80; use TESSERA_TARGET=cpu or LaunchOptions::target = Target::cpu",
                          driver->device_name(), driver->compute_capability() / 10, driver->compute_capability() % 10));
}

}  // namespace tessera
