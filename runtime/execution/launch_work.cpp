// launch_work.cpp: submit_launch, one launch plan (launch_plan.h) with its arguments submitted as
// one piece of work (submit_work, execution.h). On the CPU target the work is a task that runs the
// programs on host threads (cpu_programs.cpp); on a GPU it is enqueued on the stream submit_work
// picks (LaunchWork::enqueue_gpu), or described for the stream's launcher thread
// (LaunchWork::describe_launch). Tile and unsafe kernels both launch through here.
//
// The per-launch cost on a GPU: the parameter slots are flattened into per-thread scratch (no
// allocation once warm), the plan is only read, and the one shared_ptr copy is the owner that the
// launch's completion keeps (plus one for the label, for a launch handed to the launcher thread).
#include <fmt/format.h>

#include <array>
#include <chrono>
#include <vector>

#include "execution/cpu_programs.h"
#include "execution/execution.h"
#include "execution/launch_plan.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

// One launch of a plan, for submit_work.
class LaunchWork final : public Work {
 public:
  LaunchWork(const LaunchPlan& plan, std::span<const ArgDesc> args, double* elapsed_ms)
      : plan_(plan), args_(args), elapsed_ms_(elapsed_ms) {}
  ~LaunchWork() override {
    for (CUevent e : timing_)
      if (e) CudaDriver::get().cuEventDestroy_v2(e);
  }

  std::function<void()> cpu_task() override {
    if (!plan_.code->cpu.run) throw Error(fmt::format("tessera: {} runs on GPUs only", *plan_.code->label));
    std::vector<int64_t> pointers(args_.size(), 0);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].kind != Kind::scalar) pointers[i] = reinterpret_cast<int64_t>(args_[i].storage->host_raw());
    std::vector<int64_t> slots;
    plan_.fill_slots(args_, pointers, slots);
    return [owner = plan_.owner, program = &plan_.code->cpu, slots = std::move(slots), grid = plan_.programs,
            ms = elapsed_ms_] {
      auto t0 = std::chrono::steady_clock::now();
      run_programs(*program, slots, grid);
      if (ms) *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
  }

  void enqueue_gpu(CudaDriver& driver, CUstream stream) override {
    if (elapsed_ms_) *elapsed_ms_ = 0;
    if (plan_.empty()) return;
    std::vector<int64_t>& slots = parameter_slots(driver);
    thread_local std::vector<void*> params;  // not re-entered, like parameter_slots
    plan_.parameter_pointers(slots, params);
    CUfunction fn = plan_.code->function(driver, plan_.shared_bytes);
    if (elapsed_ms_) {
      for (CUevent& e : timing_) driver.check(driver.cuEventCreate(&e, 0), "cuEventCreate");
      driver.check(driver.cuEventRecord(timing_[0], stream), "cuEventRecord");
    }
    try {
      launch_function(fn, plan_.grid, plan_.block, plan_.shared_bytes, stream, params.data(), plan_.code->programmatic);
    } catch (const Error& e) {
      throw Error(fmt::format("tessera: {}: {}", *plan_.code->label, e.what()));
    }
    if (elapsed_ms_) driver.check(driver.cuEventRecord(timing_[1], stream), "cuEventRecord");
  }

  bool describe_launch(CudaDriver& driver, DeferredLaunch& d) override {
    // The launcher thread passes 8-byte parameters only: kernels with tensor maps are launched here.
    if (elapsed_ms_ || plan_.empty() || !plan_.code->deferrable || plan_.block[1] != 1 || plan_.block[2] != 1 ||
        !plan_.code->tensor_maps.empty())
      return false;
    const std::vector<int64_t>& slots = parameter_slots(driver);
    if (slots.size() > DeferredLaunch::kMaxSlots) return false;
    d.function = plan_.code->function(driver, plan_.shared_bytes);
    d.grid = plan_.grid;
    d.block = plan_.block[0];
    d.shared_bytes = plan_.shared_bytes;
    d.programmatic = plan_.code->programmatic;
    d.count = static_cast<std::uint32_t>(slots.size());
    std::copy(slots.begin(), slots.end(), d.slots.begin());
    d.keep_alive = plan_.owner;
    d.label = plan_.code->label;
    return true;
  }

  std::shared_ptr<const void> keep_alive() const override { return plan_.owner; }

  // After the launch has been waited for: the GPU time between the timing events.
  void read_gpu_time(CudaDriver& driver) {
    if (!elapsed_ms_ || !timing_[0]) return;
    float ms = 0;
    driver.check(driver.cuEventElapsedTime_v2(&ms, timing_[0], timing_[1]), "cuEventElapsedTime");
    *elapsed_ms_ = ms;
  }

 private:
  // Checks that the GPU runs the kernel (throws naming it) and flattens the arguments, device
  // addresses included, into per-thread scratch, valid until the next call on this thread
  // (enqueue_gpu and describe_launch are not re-entered).
  std::vector<int64_t>& parameter_slots(CudaDriver& driver) {
    plan_.code->image(driver);
    thread_local std::vector<int64_t> addresses, slots;
    addresses.assign(args_.size(), 0);
    for (std::size_t i = 0; i < args_.size(); ++i)
      if (args_[i].kind != Kind::scalar) addresses[i] = static_cast<int64_t>(device_address(driver, *args_[i].storage));
    plan_.fill_slots(args_, addresses, slots);
    return slots;
  }

  const LaunchPlan& plan_;
  std::span<const ArgDesc> args_;
  double* elapsed_ms_;
  std::array<CUevent, 2> timing_{};
};

}  // namespace

CompletionPtr submit_launch(const LaunchPlan& plan, std::span<const ArgDesc> args, const LaunchOptions* options,
                            bool wait, double* elapsed_ms) {
  const KernelCode& code = *plan.code;
  Submission sub;
  sub.label = code.label;
  sub.gpu = code.gpu();
  sub.options = options;
  sub.wait = wait || elapsed_ms;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (a.kind == Kind::scalar) continue;
    const bool write = a.kind == Kind::out;
    const bool overwrite = write && i < code.params.size() && code.params[i].overwritten && covers_storage(a);
    sub.uses.push_back({a.storage.get(), write, overwrite});
  }
  LaunchWork work(plan, args, elapsed_ms);
  CompletionPtr done = submit_work(sub, work);
  if (sub.gpu && elapsed_ms) work.read_gpu_time(CudaDriver::get());
  return done;
}

}  // namespace tessera::detail
