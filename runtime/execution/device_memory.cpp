// device_memory.cpp: see device_memory.h.
#include "execution/device_memory.h"

#include <fmt/format.h>

#include <algorithm>

#include "tessera/errors.h"

namespace tessera::detail {

CUfunction LoadedKernel::function(CudaDriver& driver, std::span<const char> cubin, const std::string& symbol,
                                  unsigned shared_bytes) {
  std::lock_guard lock(mutex_);
  if (!function_) {
    auto module = std::make_unique<DeviceModule>(driver, cubin);
    function_ = module->function(symbol);
    module_ = std::move(module);
  }
  if (shared_bytes > opted_in_bytes_) {
    driver.make_current();
    driver.check(driver.cuFuncSetAttribute(function_, kFuncAttrMaxDynamicSharedSizeBytes, static_cast<int>(shared_bytes)),
                 fmt::format("cuFuncSetAttribute('{}', max dynamic shared memory = {} bytes)", symbol, shared_bytes));
    // All of the unified L1/shared memory as shared memory: left to choose, the driver sized it
    // for one such block per SM (on the H200 100 KiB, for rings of 74 KiB that fit three).
    driver.check(driver.cuFuncSetAttribute(function_, kFuncAttrPreferredSharedMemoryCarveout,
                                           kSharedMemoryCarveoutMaxShared),
                 fmt::format("cuFuncSetAttribute('{}', shared memory carveout = max)", symbol));
    opted_in_bytes_ = shared_bytes;
  }
  return function_;
}

bool LoadedKernel::loaded() const {
  std::lock_guard lock(mutex_);
  return function_ != nullptr;
}

int LoadedKernel::resident_clusters(CudaDriver& driver, unsigned block, unsigned shared_bytes, unsigned cluster) {
  std::lock_guard lock(mutex_);
  if (const int known = resident_clusters_.load(std::memory_order_relaxed)) return known;
  if (!function_) throw Error("LoadedKernel::resident_clusters: the function is not loaded");
  // The grid is not what is asked about, but must be whole clusters; the cluster's size is the
  // function's own (.reqnctapercluster), so the configuration names none.
  LaunchConfig config{cluster, 1, 1, block, 1, 1, shared_bytes, nullptr, nullptr, 0};
  int clusters = 0;
  driver.make_current();
  driver.check(driver.cuOccupancyMaxActiveClusters(&clusters, function_, &config),
               fmt::format("cuOccupancyMaxActiveClusters(clusters of {} CTAs of {} threads, {} bytes shared)", cluster,
                           block, shared_bytes));
  const int resident = std::max(clusters, 1);
  resident_clusters_.store(resident, std::memory_order_release);
  return resident;
}

void check_grid(std::string_view kernel, std::array<int64_t, 3> grid) {
  if (grid[0] > 0x7fffffff || grid[1] > 65535 || grid[2] > 65535)
    throw Error(fmt::format("tessera: kernel '{}': grid [{} {} {}] exceeds the GPU's limits (2^31-1, 65535, 65535)",
                            kernel, grid[0], grid[1], grid[2]));
}

}  // namespace tessera::detail
