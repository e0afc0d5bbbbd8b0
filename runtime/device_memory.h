// device_memory.h: device copies of tensor storage, and running a cubin kernel over a grid.
//
// A Storage gets a DeviceMirror (a DeviceBuffer of the same size) on its first GPU launch and
// keeps it until the Storage dies. ensure_on_device() makes the device copy current (uploading the
// host copy when it is newer); mark_written_on_device() records that a kernel wrote it, so the next
// host access downloads it. Uses device 0 and its primary context (cuda_driver.h); synchronous.
#pragma once

#include <array>
#include <mutex>
#include <span>
#include <string>

#include "cuda_driver.h"
#include "tessera/detail/storage.h"

namespace tessera::detail {

// The device address of `s`, with the device copy made current.
CUdeviceptr ensure_on_device(CudaDriver& driver, Storage& s);
void mark_written_on_device(Storage& s);

// A cubin loaded into the current context, with its entry point; loaded on first use.
class LoadedKernel {
 public:
  // Loads (once) and returns the entry point `symbol` of `cubin`.
  CUfunction function(CudaDriver& driver, std::span<const char> cubin, const std::string& symbol);

 private:
  std::mutex mutex_;
  std::unique_ptr<DeviceModule> module_;
  CUfunction function_ = nullptr;
};

// Launches `fn` over `grid` programs of `block` threads with the flattened parameters `params`
// (one pointer per parameter) and waits for it; CUDA errors name the kernel. If gpu_ms is given,
// it receives the kernel's time on the GPU, measured with events recorded around the launch.
void launch_and_wait(CudaDriver& driver, std::string_view kernel, CUfunction fn, std::array<int64_t, 3> grid,
                     int block, void** params, double* gpu_ms = nullptr);

}  // namespace tessera::detail
