// launcher.cpp: detail::submit, detail::launch and detail::compile, the library side of
// Kernel::launch/compile, and the choice of target.
//
// A launch (1) finds the compiled kernel in the process cache or compiles it (kernel_cache.cpp),
// (2) checks the arguments against the kernel's AST (launch_args.cpp), and (3) hands a KernelWork
// to submit_work (runtime_glue/execution.h), which orders it after the work in flight on its
// tensors and runs the grid on host threads (cpu_programs.cpp) or enqueues it on a GPU stream
// (KernelWork::enqueue_gpu, below); a synchronous launch then waits. While a graph is captured on
// this thread the launch is recorded into it instead (runtime_glue/graph.cpp). Everything here is
// plain C++: MLIR and LLVM stay behind pipeline.h.
#include <fmt/format.h>

#include <array>
#include <cstdlib>
#include <optional>
#include <vector>

#include "compiler/kernels.h"
#include "cuda_driver.h"
#include "device_memory.h"
#include "gpu_arch.h"
#include "runtime_glue/execution.h"
#include "runtime_glue/graph_capture.h"
#include "tessera/kernel.h"

namespace tessera {
namespace detail {
namespace {

using Kind = ArgDesc::Kind;

}  // namespace

bool is_gpu(Target t) { return t != Target::cpu; }

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
                      waits_for_prerequisites(*compiled_));
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
    d.programmatic = waits_for_prerequisites(*compiled_);
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
    device_image(*compiled_, driver);  // throws when the GPU cannot run the kernel
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
      return compiled_->loaded.function(driver, device_image(*compiled_, driver), compiled_->gpu.symbol,
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
    fail(r.kernel, fmt::format("cannot run on {}: no usable GPU ({}); use TESSERA_TARGET=cpu", target_name(target),
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
  a.target = std::string(target_name(target));
  a.ptx = compiled->gpu.ptx;
  a.cubin = compiled->gpu.cubin;
  a.from_disk_cache = compiled->from_disk_cache;
  a.stage_ms = compiled->gpu.stage_ms;
  return a;
}

}  // namespace detail


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
  // The GPU's own target, looked up once: launches without a target ask at every launch.
  static CudaDriver* const driver = CudaDriver::get_if_available();
  static const std::optional<Target> gpu = driver ? detail::default_gpu_target(driver->compute_capability())
                                                  : std::nullopt;
  if (!driver) return Target::cpu;
  if (gpu) return *gpu;
  throw Error(fmt::format("tessera: the GPU ({}, compute capability {}.{}) is older than tessera's oldest target, "
                          "sm_80; use TESSERA_TARGET=cpu or LaunchOptions::target = Target::cpu",
                          driver->device_name(), driver->compute_capability() / 10, driver->compute_capability() % 10));
}

}  // namespace tessera
