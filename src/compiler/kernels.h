// kernels.h: compiled tessera kernels and their arguments, shared by launches (launcher.cpp, kernel_cache.cpp, launch_args.cpp) and
// graphs (runtime_glue/graph.cpp). Internal to libtessera.
#pragma once

#include <array>
#include <utility>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "device_memory.h"
#include "frontend/ast.h"
#include "gpu_arch.h"
#include "tessera/kernel.h"

namespace tessera::detail {

// Everything compiled for one (kernel, AST, target, Specialization).
struct Compiled {
  KernelAst ast;                      // parsed once; views into `text`
  Specialization spec;                // what it is compiled for
  std::unique_ptr<std::string> text;  // owns the AST text the views point into
  std::unique_ptr<CpuKernel> cpu;
  GpuCode gpu;
  bool from_disk_cache = false;
  std::vector<std::pair<int64_t, int64_t>> load_likes;  // (input, output) of each load_like node
  std::vector<bool> overwrites;  // per parameter: an output stored whole and never read ((own ..))
  std::shared_ptr<const std::string> label;              // "kernel 'name'", for messages
  const GpuArch* target = nullptr;  // GPU targets: the architecture compiled for, resolved once
  bool links_device_code = false;  // its cubin links device functions (cuda_function, ptx_function)
  mutable LoadedKernel loaded;  // the cubin in the GPU's context, loaded at the first GPU launch
};

// The process cache (single flight: concurrent first launches compile once) for the kernel and
// arguments of `request`. With its options' static_shapes the kernel is compiled for the shapes,
// strides, offsets and grid of the arguments (LaunchOptions::static_shapes), once per distinct set;
// otherwise a launch whose tiles are all whole (LaunchOptions::whole_tiles, whole_tiles.h) runs
// the variant compiled without bounds tests, the others the kernel that tests.
std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& request, Target target);

struct Grid {
  std::array<int64_t, 3> dims{1, 1, 1};
  int64_t count() const { return dims[0] * dims[1] * dims[2]; }
};

// The programs of an output partition along each grid axis: its shape over its tile, rounded up
// (1 along an axis whose tile size is not positive, which check_args rejects).
Grid partition_grid(const ArgDesc& out);

// Whether a tensor argument is its whole storage: dense, row-major, from its start. Only then may
// a launch that overwrites it skip the storage's previous contents (a view's neighbours stay).
bool covers_storage(const ArgDesc& a);

// Checks the arguments against the kernel (kinds, dtypes, ranks, shapes of tiles loaded like an
// output, grid agreement, aliasing); returns the launch grid. Throws tessera::Error.
Grid check_args(std::string_view kernel, const Compiled& compiled, std::span<const ArgDesc> args);

// The flattened parameter list of a lowered kernel: per tensor (allocated ptr, aligned ptr,
// offset, sizes[rank], strides[rank]) as MLIR's memref descriptor; per scalar its value.
// pointers[i] is tensor argument i's address (host or device).
std::vector<int64_t> flatten_args(std::span<const ArgDesc> args, std::span<const int64_t> pointers);
// The same into `slots` (cleared first), reusing its capacity.
void flatten_args_into(std::span<const ArgDesc> args, std::span<const int64_t> pointers, std::vector<int64_t>& slots);

// Appends the GPU parameters that follow the arguments: for programs sharing a CTA
// (programs_per_cta > 1) the number of programs along x of `grid`, which the CUDA grid does not
// tell (a trailing i32 parameter, see ThreadMapping.h).
void append_grid_slots(const Compiled& compiled, const Grid& grid, std::vector<int64_t>& slots);

// The CUDA grid that runs the programs of `grid` with `compiled`'s GPU code: x times its CTAs per
// program, or x divided by the programs per CTA of the launch (programs_per_cta_of_launch,
// pipeline.h), rounded up. Throws, naming
// `kernel`, when it exceeds the GPU's limits.
std::array<int64_t, 3> cuda_grid(std::string_view kernel, const Compiled& compiled, const Grid& grid);

// The CUDA block size of that launch: the compiled block size, divided by G and multiplied by the
// programs per CTA of the launch when programs share CTAs.
unsigned cuda_block(const Compiled& compiled, const Grid& grid);

// Runs every program of `grid` on host threads (the CPU target): up to 16, the calling thread
// among them, or fewer where the system refuses threads (then the calling thread runs the rest).
void run_programs(const CpuKernel& k, std::span<const int64_t> slots, const Grid& grid);

bool is_gpu(Target t);

// Whether `compiled` waits for the grids it depends on (griddepcontrol.wait: targets of sm_90 and
// newer), so that its launches and the graph edges into it may be programmatic.
inline bool waits_for_prerequisites(const Compiled& compiled) {
  return compiled.target && compiled.target->grid_dependency_control;
}

// What a launch of `compiled` loads on `driver`'s GPU (device_image in device_memory.h).
inline std::span<const char> device_image(const Compiled& compiled, const CudaDriver& driver) {
  return device_image(*compiled.label, *compiled.target, compiled.gpu.cubin, compiled.gpu.ptx,
                      compiled.links_device_code, driver);
}
[[noreturn]] void fail(std::string_view kernel, const std::string& what);

}  // namespace tessera::detail
