// device_memory.cpp: see device_memory.h.
#include "device_memory.h"

#include <fmt/format.h>

#include "errors.h"

namespace tessera::detail {
namespace {

class BufferMirror final : public DeviceMirror {
 public:
  BufferMirror(CudaDriver& driver, std::size_t bytes) : buffer(driver, bytes == 0 ? 1 : bytes) {}
  void download(void* host, std::size_t bytes) override {
    if (bytes) buffer.download(host, bytes);
  }
  DeviceBuffer buffer;
};

}  // namespace

CUdeviceptr ensure_on_device(CudaDriver& driver, Storage& s) {
  if (!s.mirror) {
    s.mirror = std::make_unique<BufferMirror>(driver, s.bytes());
    s.device_valid = false;
  }
  auto& m = static_cast<BufferMirror&>(*s.mirror);
  if (!s.device_valid) {
    if (s.bytes()) m.buffer.upload(s.host_raw(), s.bytes());
    s.device_valid = true;
  }
  return m.buffer.ptr();
}

void mark_written_on_device(Storage& s) {
  s.device_valid = true;
  s.host_valid = false;
}

CUfunction LoadedKernel::function(CudaDriver& driver, std::span<const char> cubin, const std::string& symbol) {
  std::lock_guard lock(mutex_);
  if (!function_) {
    auto module = std::make_unique<DeviceModule>(driver, cubin);
    function_ = module->function(symbol);
    module_ = std::move(module);
  }
  return function_;
}

void launch_and_wait(CudaDriver& driver, std::string_view kernel, CUfunction fn, std::array<int64_t, 3> grid,
                     int block, void** params, double* gpu_ms) {
  if (grid[0] > 0x7fffffff || grid[1] > 65535 || grid[2] > 65535)
    throw Error(fmt::format("tessera: kernel '{}': grid [{} {} {}] exceeds the GPU's limits (2^31-1, 65535, 65535)",
                            kernel, grid[0], grid[1], grid[2]));
  driver.make_current();
  std::array<CUevent, 2> events{};
  if (gpu_ms) {
    for (CUevent& e : events) driver.check(driver.cuEventCreate(&e, 0), "cuEventCreate");
    driver.check(driver.cuEventRecord(events[0], nullptr), "cuEventRecord");
  }
  launch(fn, {static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]), static_cast<unsigned>(grid[2])},
         {static_cast<unsigned>(block), 1, 1}, 0, nullptr, params);
  if (gpu_ms) driver.check(driver.cuEventRecord(events[1], nullptr), "cuEventRecord");
  CUresult done = driver.cuCtxSynchronize();
  if (gpu_ms) {
    float ms = 0;
    if (done == kCudaSuccess) driver.check(driver.cuEventElapsedTime_v2(&ms, events[0], events[1]), "cuEventElapsedTime");
    for (CUevent e : events) driver.cuEventDestroy_v2(e);
    *gpu_ms = ms;
  }
  driver.check(done, fmt::format("kernel '{}': running", kernel));
}

}  // namespace tessera::detail
