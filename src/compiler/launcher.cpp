// launcher.cpp: detail::submit, detail::launch, detail::compile and detail::prepare, the library
// side of Kernel::launch/compile/prepare, and the choice of target.
//
// A launch (1) finds the compiled kernel in the process cache or compiles it (kernel_cache.cpp),
// (2) checks the arguments against the kernel's AST (launch_args.cpp), (3) fills in its launch plan
// (plan_launch: the code, the programs, the CUDA grid and block; execution/launch_plan.h) and (4)
// hands the plan to the execution layer: submit_launch orders it after the work in flight on its
// tensors and runs the programs on host threads or enqueues the kernel on a GPU stream
// (execution/launch_work.cpp); a synchronous launch then waits. While a graph is captured on this
// thread the plan is recorded into it instead (execution/graph.cpp). The compiler depends on the
// execution layer, never the reverse. Everything here is plain C++: MLIR and LLVM stay behind
// pipeline.h. Both GPU back ends (Backend) leave code with the same parameters (ArgumentAbi::memref);
// a tileir kernel runs one program per CTA of one thread and does not wait for the grids it depends
// on, so its launches are never programmatic.
#include <fmt/format.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <vector>

#include "compiler/kernels.h"
#include "compiler/tileiras.h"
#include "driver/cuda_driver.h"
#include "driver/gpu_arch.h"
#include "driver/nvjitlink.h"
#include "execution/graph_capture.h"
#include "execution/launch_plan.h"
#include "tessera/kernel.h"

namespace tessera {
namespace detail {

void set_launch_code(Compiled& c) {
  KernelCode& code = c.code;
  code.abi = ArgumentAbi::memref;
  code.static_shapes = c.spec.shapes.has_value();
  if (c.cpu) {
    code.cpu.run = [](const void* kernel, void** argv) { static_cast<const CpuKernel*>(kernel)->run(argv); };
    code.cpu.code = c.cpu.get();
    code.cpu.workspace_bytes = c.cpu->workspace_bytes();
    code.cpu.stack_bytes = c.cpu->stack_bytes();
  }
  if (!code.target) return;
  code.cubin = c.gpu.cubin;
  code.ptx = c.gpu.ptx;
  code.symbol = c.gpu.symbol;
  code.programmatic = code.target->grid_dependency_control && c.backend == Backend::nvvm;
  code.programs_slot = c.gpu.programs_per_cta > 1;
  // Linked device code is only in nvJitLink's cubin: such a kernel loads the cubin, never its PTX;
  // nor does one whose cubin is ptxas' whole-program compile (ptxas.h).
  code.loads_ptx = !c.gpu.isa.empty() && !code.linked && !c.gpu.whole_program_cubin;
  code.tensor_maps = c.gpu.tensor_maps;
  // A tileir kernel has no PTX: a GPU that runs only the PTX of its target cannot load it.
  if (c.backend == Backend::tileir) code.linked = true;
  // Code of the architecture-specific target runs only on its compute capability (gpu_arch.h).
  if (!c.gpu.isa.empty())
    if (const GpuArch* isa = gpu_arch(c.gpu.isa)) code.target = isa;
}

LaunchPlan plan_launch(std::string_view kernel, std::shared_ptr<const Compiled> compiled, const Grid& grid) {
  LaunchPlan plan;
  plan.code = &compiled->code;
  plan.programs = grid;
  if (compiled->code.gpu()) {
    plan.block = {cuda_block(*compiled, grid), 1, 1};
    // The scratch over 48 KiB, in dynamic shared memory (see Passes.td); 0 for the others.
    plan.shared_bytes = static_cast<unsigned>(compiled->gpu.dynamic_shared_bytes);
    // Persistent clusters: as many as the GPU holds at once (loads the code on first use).
    int64_t resident_clusters = 0;
    const int split = compiled->gpu.ctas_per_program;
    if (compiled->gpu.persistent && split > 1)
      if (CudaDriver* driver = CudaDriver::get_if_available())
        resident_clusters = compiled->code.resident_clusters(*driver, plan.block[0], plan.shared_bytes,
                                                             static_cast<unsigned>(split));
    const std::array<int64_t, 3> ctas = cuda_grid(kernel, *compiled, grid, resident_clusters);
    plan.grid = {static_cast<unsigned>(ctas[0]), static_cast<unsigned>(ctas[1]), static_cast<unsigned>(ctas[2])};
  }
  plan.owner = std::move(compiled);
  return plan;
}

namespace {

std::atomic<LaunchObserver> launch_observer{nullptr};

// Calls the observer, if any, unless this thread is inside it already (its own compiles).
void observe(const LaunchRequest& r, Target target) {
  thread_local bool observing = false;
  const LaunchObserver observer = launch_observer.load(std::memory_order_acquire);
  if (!observer || observing) return;
  struct Inside {
    Inside() { observing = true; }
    ~Inside() { observing = false; }
  } inside;
  observer(r, target);
}

}  // namespace

void set_launch_observer(LaunchObserver observer) { launch_observer.store(observer, std::memory_order_release); }

CompletionPtr submit(const LaunchRequest& r, Target target) {
  GraphCapture* capture = current_capture();
  if (capture) target = capture->target_for(r.options, target, r.kernel);
  auto compiled = lookup_or_compile(r, target);
  const Grid grid = check_args(r.kernel, *compiled, r.args);
  observe(r, target);
  if (capture) {
    capture->record(r.kernel, plan_launch(r.kernel, std::move(compiled), grid), r.args);
    return nullptr;
  }
  if (is_gpu(target) && !CudaDriver::get_if_available())
    fail(r.kernel, fmt::format("cannot run on {}: no usable GPU ({}); use TESSERA_TARGET=cpu", target_name(target),
                               CudaDriver::unavailable_reason()));
  const LaunchPlan plan = plan_launch(r.kernel, std::move(compiled), grid);
  return submit_launch(plan, r.args, r.options, r.wait, r.elapsed_ms);
}

void launch(const LaunchRequest& r, Target target) {
  LaunchRequest sync = r;
  sync.wait = true;
  submit(sync, target);
}

namespace {

// What compile() and prepare() share: the compiled kernel of a launch that is not run, its
// arguments checked and the launch observed.
std::shared_ptr<const Compiled> compiled_unlaunched(const LaunchRequest& r, Target target) {
  auto compiled = lookup_or_compile(r, target);
  check_args(r.kernel, *compiled, r.args);
  observe(r, target);
  return compiled;
}

}  // namespace

CompiledArtifact compile(const LaunchRequest& r, Target target) {
  auto compiled = compiled_unlaunched(r, target);
  CompiledArtifact a;
  a.target = std::string(target_name(target));
  a.backend = compiled->backend;
  a.ptx = compiled->gpu.ptx;
  a.cubin = compiled->gpu.cubin;
  a.from_disk_cache = compiled->from_disk_cache;
  a.stage_ms = compiled->gpu.stage_ms;
  if (a.cubin.empty() && compiled->code.loads_ptx) {
    // A kernel the GPU loads as PTX has no cubin of its own (compile_gpu_code): the artifact gets
    // nvJitLink's, made at the first such request (an error leaves it to the next to try again).
    const Compiled& c = *compiled;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      std::call_once(c.artifact_cubin_once, [&] { c.artifact_cubin = ptx_to_cubin(c.gpu.ptx, c.gpu.link_arch()).cubin; });
    } catch (const Error& e) {
      throw Error(fmt::format("tessera: kernel '{}': {}", r.kernel, e.what()));
    }
    a.cubin = c.artifact_cubin;
    a.stage_ms.emplace_back("cubin", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return a;
}

void prepare(const LaunchRequest& r, Target target) {
  auto compiled = compiled_unlaunched(r, target);
  // Loaded onto the GPU too, where it is the GPU's own target's code: the driver's compile of PTX
  // (sm_90a's GEMMs, about a second for a fused epilogue) then happens on this thread, beside the
  // other prepares of a tuner, instead of at the first launch. Code for another GPU is compiled
  // only; whether this GPU can load it is for its launch to say.
  if (!compiled->code.gpu()) return;
  CudaDriver* driver = CudaDriver::get_if_available();
  if (!driver || device_load(*compiled->code.target, driver->compute_capability()) != DeviceLoad::cubin) return;
  compiled->code.function(*driver, static_cast<unsigned>(compiled->gpu.dynamic_shared_bytes));
}

}  // namespace detail


std::string_view to_string(Target target) { return detail::target_name(target); }

Backend default_backend() {
  const char* b = std::getenv("TESSERA_BACKEND");
  if (!b || !*b) return Backend::nvvm;
  if (std::string_view(b) == "nvvm") return Backend::nvvm;
  if (std::string_view(b) == "tileir") return Backend::tileir;
  throw Error(fmt::format("tessera: TESSERA_BACKEND='{}' is not one of nvvm, tileir", b));
}

std::string_view to_string(Backend backend) { return backend == Backend::tileir ? "tileir" : "nvvm"; }

bool backend_available(Backend backend) { return backend == Backend::nvvm || detail::find_tileiras().has_value(); }

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
  // The GPU's own target, looked up once: launches without a target ask at every launch.
  static detail::CudaDriver* const driver = detail::CudaDriver::get_if_available();
  static const std::optional<Target> gpu = driver ? detail::default_gpu_target(driver->compute_capability())
                                                  : std::nullopt;
  if (!driver) return Target::cpu;
  if (gpu) return *gpu;
  throw Error(fmt::format("tessera: the GPU ({}, compute capability {}.{}) is older than tessera's oldest target, "
                          "sm_80; use TESSERA_TARGET=cpu or LaunchOptions::target = Target::cpu",
                          driver->device_name(), driver->compute_capability() / 10, driver->compute_capability() % 10));
}

}  // namespace tessera
