// launch_plan.h: what a launch needs, in the one type that every kind of launch fills in: a tile
// kernel's (the compiler, src/compiler/launcher.cpp), an unsafe CUDA kernel's (unsafe_kernels.cpp)
// and, through the launches recorded while it is captured, each node of a graph (graph.cpp). The
// execution layer runs plans (launch_work.cpp, graph.cpp) without knowing how their code was
// compiled, so it never includes the compiler: the compiler depends on it, not the reverse (the
// CMake targets tessera_runtime and tessera_compiler enforce it).
//
//   KernelCode  what a compile leaves for launching, the same for every launch of the kernel: the
//               CPU program or the GPU code (cubin, PTX, entry point, loaded on first use), how
//               arguments become parameters, what the code assumes of them, and its label. Owned by
//               the compiled kernel (a tile kernel's Compiled, an UnsafeCompiled).
//   LaunchPlan  one launch of that code: its programs, the CUDA grid, block and dynamic shared
//               memory, and the owner that keeps the code alive while the launch needs it.
//
// Filling in a plan allocates nothing: the code is referenced and the owner moved in. Internal to
// libtessera.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "driver/cuda_driver.h"
#include "driver/gpu_arch.h"
#include "execution/device_memory.h"
#include "tessera/kernel.h"

namespace tessera::detail {

// The programs of a launch along x, y and z.
struct Grid {
  std::array<int64_t, 3> dims{1, 1, 1};
  int64_t count() const { return dims[0] * dims[1] * dims[2]; }
};

// How a launch's arguments become the kernel's parameters: 8-byte slots, one pointer to each in
// the driver's parameter array.
enum class ArgumentAbi : std::uint8_t {
  // Tile kernels (MLIR's calling convention): per tensor its memref descriptor (allocated
  // pointer, aligned pointer, offset, sizes[rank], strides[rank]), per scalar its value; on GPU
  // targets, where programs share a CTA (KernelCode::programs_slot), the number of programs along
  // x last, which the CUDA grid does not tell (ThreadMapping.h).
  memref,
  // Unsafe kernels: per tensor the address of its first element, per scalar its value.
  pointer,
};

// A TMA tensor map that a kernel takes by value after its other parameters (ArgumentAbi::memref):
// the launch encodes it for a 2-d tensor argument of 16-bit or 32-bit floats, its contiguous
// dimension first (the columns of a row-major view, the rows of one with contiguous columns), with boxes of box_inner x box_outer elements swizzled over swizzle_bytes (0 for
// none); elements outside the tensor read as zeros. Set by the compiler's tensor-core lowering
// (tile.tensor_maps).
struct TensorMapSpec {
  int param = 0;
  unsigned box_inner = 0, box_outer = 0;
  unsigned swizzle_bytes = 0;
  friend bool operator==(const TensorMapSpec&, const TensorMapSpec&) = default;
};
// Parameter slots a tensor map takes (128 bytes).
inline constexpr std::size_t kTensorMapSlots = sizeof(TensorMapBytes) / sizeof(int64_t);

// A kernel compiled for the host, as the CPU target runs it (run_programs, cpu_programs.h).
struct CpuProgram {
  // Runs one program of `code`. argv holds one pointer per parameter slot (ArgumentAbi::memref),
  // then pid0..2 and nprog0..2 (int32), then the program's workspace as five int64: its address
  // twice, 0, workspace_bytes, 1 (a 64-byte aligned block that no other program uses meanwhile).
  void (*run)(const void* code, void** argv) = nullptr;
  const void* code = nullptr;
  std::size_t workspace_bytes = 0;  // per program: its private arrays that a stack cannot hold
  std::size_t stack_bytes = 0;      // the stack a program needs below its caller's frame
};

// What one compiled kernel offers its launches (see the file comment). Built once per compile,
// then only read, apart from `loaded`.
struct KernelCode {
  std::shared_ptr<const std::string> label;  // "kernel 'add'", "unsafe kernel 'scatter'"
  ArgumentAbi abi = ArgumentAbi::memref;

  // Per parameter (empty: none for any), what the code assumes of its argument beyond its kind,
  // dtype and rank.
  struct Param {
    // An output the kernel stores whole and never reads: a launch that covers its storage need not
    // make the storage's previous contents current first.
    bool overwritten = false;
    // Compiled for memory aligned to 16 bytes (ArgLayout::aligned): a graph rebind must keep it.
    bool aligned = false;
    // Compiled for a frozen input (Specialization::frozen), which the kernel may read before the
    // grids it follows end: a graph rebind must bind a frozen tensor there.
    bool frozen = false;
  };
  std::vector<Param> params;
  // Compiled for one launch's shapes, strides and offsets (LaunchOptions::static_shapes): a graph
  // may not move a parameter to another offset.
  bool static_shapes = false;
  // Whether a launch's arguments were checked for outputs that overlap (output_overlap.h), which a
  // graph rebind must then check again; unsafe kernels are the opt-out.
  bool checks_overlap = true;

  // CPU target.
  CpuProgram cpu;

  // GPU targets.
  const GpuArch* target = nullptr;  // the architecture compiled for; null on the CPU target
  std::span<const char> cubin;
  std::string_view ptx;             // followed by a NUL (a GPU newer than target loads the PTX)
  std::string symbol;               // the entry point
  bool linked = false;              // device code was linked in: the PTX alone does not hold it
  // The kernel waits for the grids it depends on (griddepcontrol.wait, sm_90 and newer), so its
  // launches and the graph edges into it may be programmatic (cuda_driver.h).
  bool programmatic = false;
  // ArgumentAbi::memref: the number of programs along x follows the arguments.
  bool programs_slot = false;
  // The tensor maps that follow them, each kTensorMapSlots slots passed as one parameter.
  std::vector<TensorMapSpec> tensor_maps;
  // The GPU loads the PTX, which the driver compiles as a whole program, even where the cubin
  // would run: nvJitLink compiles PTX as relocatable code, where ptxas ignores setmaxnreg (the
  // tensor-core lowering's register budgets of its warpgroups).
  bool loads_ptx = false;
  // Its launches may be handed to a pool stream's launcher thread (execution.h), which reports a
  // failed launch at a later wait. Unsafe kernels, whose launch configuration is the user's, are
  // launched by the submitting thread, so that a bad one throws where it was made.
  bool deferrable = true;
  mutable LoadedKernel loaded;

  bool gpu() const { return target != nullptr; }
  // What a launch loads on `driver`'s GPU: the cubin, or on a GPU newer than the target the PTX,
  // which the driver compiles. Throws tessera::Error naming the label when the GPU runs neither,
  // or when the PTX alone does not hold the kernel (`linked`). A few integer compares: it runs at
  // every launch.
  std::span<const char> image(const CudaDriver& driver) const;
  // The loaded entry point, opted into `shared_bytes` of dynamic shared memory (LoadedKernel).
  // Throws tessera::Error "tessera: <label>: ...".
  CUfunction function(CudaDriver& driver, unsigned shared_bytes) const;
  // The clusters of `cluster` CTAs of this code that `driver`'s GPU holds at once, loading it
  // first (LoadedKernel::resident_clusters); after the first call one atomic load. Throws as
  // function() does.
  int resident_clusters(CudaDriver& driver, unsigned block, unsigned shared_bytes, unsigned cluster) const;
};

// One launch of a kernel's code.
struct LaunchPlan {
  const KernelCode* code = nullptr;
  std::shared_ptr<const void> owner;   // keeps *code alive (the compiled kernel)
  Grid programs;                       // the programs (the CPU target runs them one by one)
  // GPU targets: the CUDA launch that runs the programs.
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned shared_bytes = 0;           // dynamic shared memory per CTA

  bool empty() const { return programs.count() == 0; }
  // The parameter slots of a launch with `args` (KernelCode::abi), into `slots` (cleared first, its
  // capacity reused). addresses[i] is tensor argument i's storage address on the host or the
  // device (ignored for scalars). The tensor maps are encoded here (the driver's
  // cuTensorMapEncodeTiled; throws tessera::Error naming the label and argument if it refuses).
  void fill_slots(std::span<const ArgDesc> args, std::span<const int64_t> addresses,
                  std::vector<int64_t>& slots) const;
  // The driver's parameter array for `slots` (fill_slots's), into `params` (cleared first): a
  // pointer to each slot, or to the first slot of each tensor map.
  void parameter_pointers(std::vector<int64_t>& slots, std::vector<void*>& params) const;

 private:
  void encode_tensor_map(const TensorMapSpec& map, std::span<const ArgDesc> args, std::span<const int64_t> addresses,
                         TensorMapBytes* out) const;
};

// Whether a tensor argument is its whole storage: dense, row-major, from its start. Only then may
// a launch that overwrites it skip the storage's previous contents (a view's neighbours stay).
bool covers_storage(const ArgDesc& a);

// Submits one launch of `plan` with `args` as one piece of work (submit_work, execution.h): the
// programs on host threads, or the kernel enqueued on a GPU stream (launch_work.cpp). `wait`: the
// caller waits for it. `elapsed_ms`: if not null, set to the launch's time once it has been waited
// for (GPU targets: between events recorded around it). Throws tessera::Error.
CompletionPtr submit_launch(const LaunchPlan& plan, std::span<const ArgDesc> args, const LaunchOptions* options,
                            bool wait, double* elapsed_ms);

}  // namespace tessera::detail
