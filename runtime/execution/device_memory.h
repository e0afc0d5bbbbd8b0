// device_memory.h: device copies of tensor storage, and cubins loaded for launching.
//
// A Storage (include/tessera/detail/storage.h) gets a BufferMirror (a DeviceBuffer of the same
// size) on its first GPU launch and keeps it until the Storage's memory is freed; a tensor wrapped
// from foreign device memory has a ForeignMirror, which frees nothing and calls the owner's
// release callback instead. Which copy is current, uploads and downloads are the library's
// business (submit.cpp, storage.cpp). Which image of a kernel a GPU loads is its KernelCode's
// (launch_plan.h). Uses device 0 and its primary context (cuda_driver.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>

#include "driver/cuda_driver.h"
#include "tessera/detail/storage.h"

namespace tessera::detail {

// Device memory of our own.
class BufferMirror final : public DeviceMirror {
 public:
  BufferMirror(CudaDriver& driver, std::size_t bytes) : buffer_(driver, bytes == 0 ? 1 : bytes) {}
  std::uint64_t address() const override { return buffer_.ptr(); }

 private:
  DeviceBuffer buffer_;
};

// Device memory someone else owns; `release` (if any) is called on destruction.
class ForeignMirror final : public DeviceMirror {
 public:
  ForeignMirror(CUdeviceptr address, std::function<void()> release)
      : address_(address), release_(std::move(release)) {}
  ~ForeignMirror() override {
    if (release_) release_();
  }
  std::uint64_t address() const override { return address_; }

 private:
  CUdeviceptr address_;
  std::function<void()> release_;
};

// A cubin loaded into the current context, with its entry point; loaded on first use.
class LoadedKernel {
 public:
  // Loads (once) and returns the entry point `symbol` of `cubin`, opted into `shared_bytes` of
  // dynamic shared memory per block when that exceeds 48 KiB (cuFuncSetAttribute's
  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, set again only when a call asks for more than
  // before; with the largest shared memory carveout), so that a launch of the function may pass
  // that many bytes and several such blocks fit an SM. Throws tessera::Error
  // naming the bytes when the driver refuses them.
  CUfunction function(CudaDriver& driver, std::span<const char> cubin, const std::string& symbol,
                      unsigned shared_bytes = 0);
  // Whether function() has loaded the module.
  bool loaded() const;
  // How many clusters of `cluster` CTAs of `block` threads and `shared_bytes` of dynamic shared
  // memory the GPU holds at once (cuOccupancyMaxActiveClusters; at least 1), asked once. The
  // function must be loaded (function()) with those shared bytes.
  int resident_clusters(CudaDriver& driver, unsigned block, unsigned shared_bytes, unsigned cluster);
  // That answer once asked (a load, no lock: it is read at every launch), else 0.
  int known_resident_clusters() const { return resident_clusters_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mutex_;
  std::unique_ptr<DeviceModule> module_;
  CUfunction function_ = nullptr;
  unsigned opted_in_bytes_ = kStaticSharedBytes;  // what a launch may pass without a new opt-in
  std::atomic<int> resident_clusters_{0};           // 0: not asked yet
};

// Checks that a grid fits the GPU's limits (2^31-1, 65535, 65535); throws naming `kernel`.
void check_grid(std::string_view kernel, std::array<int64_t, 3> grid);

}  // namespace tessera::detail
