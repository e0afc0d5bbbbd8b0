// kernels.h: compiled tessera kernels and what the compiler's launch path does with them
// (kernel_cache.cpp, launch_args.cpp, launcher.cpp): the process cache, the argument checks, the
// CUDA grid and block of a launch, and the launch plan a launch or a graph capture hands to the
// execution layer (execution/launch_plan.h). Internal to libtessera.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "execution/launch_plan.h"
#include "frontend/ast.h"
#include "tessera/kernel.h"

namespace tessera::detail {

// Everything compiled for one (kernel, AST, target, Specialization).
struct Compiled {
  KernelAst ast;                      // parsed once; views into `text`
  Specialization spec;                // what it is compiled for
  std::unique_ptr<std::string> text;  // owns the AST text the views point into
  std::unique_ptr<CpuKernel> cpu;
  GpuCode gpu;
  Backend backend = Backend::nvvm;    // GPU targets: the back end that compiled gpu
  // Why the tileir backend could not compile it, where the NVVM backend did instead (a launch
  // under TESSERA_BACKEND=tileir); a launch that asks for tileir gets this as its error.
  std::string tileir_unsupported;
  bool from_disk_cache = false;
  std::vector<std::pair<int64_t, int64_t>> load_likes;  // (input, output) of each load_like node
  // What launches need (its label, per-parameter assumptions, the GPU architecture and whether
  // device code is linked in are set by the compile; set_launch_code fills in the rest once it is
  // done).
  KernelCode code;
  // The cubin nvJitLink makes of a kernel the GPU loads as PTX (which has none of its own), for
  // CompiledArtifacts: made at the first detail::compile that asks for it.
  mutable std::once_flag artifact_cubin_once;
  mutable std::vector<char> artifact_cubin;
};

// Fills in c.code from the compiled kernel (called once, at the end of its compile).
void set_launch_code(Compiled& c);

// The process cache (single flight: concurrent first launches compile once) for the kernel and
// arguments of `request`. With its options' static_shapes the kernel is compiled for the shapes,
// strides, offsets and grid of the arguments (LaunchOptions::static_shapes), once per distinct set;
// otherwise a launch whose tiles are all whole (LaunchOptions::whole_tiles, whole_tiles.h) runs
// the variant compiled without bounds tests, the others the kernel that tests. On GPU targets its
// options' back end (else default_backend()) compiles it; kernels of both back ends are cached apart.
// Under the default back end tileir a kernel Tile IR cannot express is compiled by the NVVM backend
// (and kept under the tileir keys); a request whose options ask for tileir gets TileIrUnsupported.
std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& request, Target target);

// The programs of an output partition along each grid axis: its shape over its tile, rounded up
// (1 along an axis whose tile size is not positive, which check_args rejects).
Grid partition_grid(const ArgDesc& out);

// Checks the arguments against the kernel (kinds, dtypes, ranks, shapes of tiles loaded like an
// output, grid agreement, aliasing); returns the launch grid. Throws tessera::Error.
Grid check_args(std::string_view kernel, const Compiled& compiled, std::span<const ArgDesc> args);

// The CUDA grid that runs the programs of `grid` with `compiled`'s GPU code: x times its CTAs per
// program, or x divided by the programs per CTA of the launch (programs_per_cta_of_launch,
// pipeline.h), rounded up; persistent code at most one CTA per SM, and split persistent code
// (clusters of S CTAs) at most `resident_clusters` clusters (0: the SMs / S). Throws, naming
// `kernel`, when it exceeds the GPU's limits.
std::array<int64_t, 3> cuda_grid(std::string_view kernel, const Compiled& compiled, const Grid& grid,
                                 int64_t resident_clusters = 0);

// The CUDA block size of that launch: the compiled block size, divided by G and multiplied by the
// programs per CTA of the launch when programs share CTAs.
unsigned cuda_block(const Compiled& compiled, const Grid& grid);

// The plan of a launch of `compiled` over `grid` (check_args's): the CUDA grid and block on GPU
// targets (cuda_grid, throwing as it does). Takes the owner: allocates nothing.
LaunchPlan plan_launch(std::string_view kernel, std::shared_ptr<const Compiled> compiled, const Grid& grid);

[[noreturn]] void fail(std::string_view kernel, const std::string& what);

// A function called with every launch and compile request whose arguments passed check_args, and
// its target, before the launch runs (or is recorded into a graph). The test runners set one to
// compile every kernel their tests launch for other targets as well (tests/unit/tileir_targets.h,
// --tileir-targets); nullptr, the default, calls none. Requests that the observer makes itself
// (on the same thread) are not observed again.
using LaunchObserver = void (*)(const LaunchRequest& request, Target target);
void set_launch_observer(LaunchObserver observer);

// Throws, naming `kernel`, for hints out of their ranges (CompilerHints).
void check_hints(std::string_view kernel, const CompilerHints& hints);

}  // namespace tessera::detail
