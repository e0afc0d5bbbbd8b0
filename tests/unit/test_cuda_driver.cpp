// Tests for runtime/driver/cuda_driver.h. Without a GPU (or without libcuda) get_if_available() must answer
// nullptr without throwing and the GPU helpers must throw tessera::Error; those tests run
// everywhere. The [gpu] tests skip with a warning when no GPU is present; on a GPU they compile a
// small PTX kernel with nvJitLink for the device's arch, load it, launch it and check what it wrote,
// and check that device-memory failures throw and leak nothing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "driver/cuda_driver.h"
#include "driver/nvjitlink.h"
#include "ptx_fixtures.h"
#include "tessera/errors.h"
#include "tessera/kernel.h"

using tessera::detail::CudaDriver;

namespace {

using fixtures::kStoredValue;
const std::string kStoreConstPtx = fixtures::store_const_ptx();

#define SKIP_WITHOUT_GPU()                                                              \
  CudaDriver* driver = CudaDriver::get_if_available();                                  \
  if (!driver) {                                                                        \
    WARN("no GPU, skipping: " << CudaDriver::unavailable_reason());                     \
    return;                                                                             \
  }

}  // namespace

TEST_CASE("cuda driver lookup never throws", "[cuda]") {
  CudaDriver* driver = nullptr;
  REQUIRE_NOTHROW(driver = CudaDriver::get_if_available());
  CHECK(tessera::gpu_available() == (driver != nullptr));
  CHECK(CudaDriver::get_if_available() == driver);  // loaded once
  if (driver) {
    CHECK(CudaDriver::unavailable_reason().empty());
    CHECK(tessera::detail::device_compute_capability() >= 70);
    return;
  }
  INFO("reason: " << CudaDriver::unavailable_reason());
  CHECK_FALSE(CudaDriver::unavailable_reason().empty());
  CHECK_THROWS_AS(CudaDriver::get(), tessera::Error);
  CHECK_THROWS_AS(tessera::detail::device_compute_capability(), tessera::Error);
  CHECK_THROWS_AS(tessera::detail::launch_function(nullptr, {1, 1, 1}, {1, 1, 1}, 0, nullptr, nullptr),
                  tessera::Error);
}

TEST_CASE("cuda check names the call and the error", "[cuda]") {
  CHECK_NOTHROW(tessera::detail::check(tessera::detail::kCudaSuccess, "cuInit"));
  try {
    tessera::detail::check(tessera::detail::kCudaErrorOutOfMemory, "cuMemAlloc(64 bytes)");
    FAIL("check did not throw");
  } catch (const tessera::Error& e) {
    std::string message = e.what();
    CHECK(message.find("cuMemAlloc(64 bytes) failed") != std::string::npos);
    if (tessera::gpu_available())
      CHECK(message.find("CUDA_ERROR_OUT_OF_MEMORY") != std::string::npos);
    else
      CHECK(message.find("CUDA error 2") != std::string::npos);
  }
}

TEST_CASE("a PTX kernel runs on the GPU", "[gpu]") {
  SKIP_WITHOUT_GPU();
  if (!tessera::detail::nvjitlink_available()) {
    WARN("nvJitLink not loadable, skipping: " << tessera::detail::nvjitlink_load_error());
    return;
  }
  INFO("device " << driver->device_name() << ", " << driver->arch() << ", driver "
                 << driver->driver_version());
  auto cubin = tessera::detail::ptx_to_cubin(kStoreConstPtx, driver->arch()).cubin;
  tessera::detail::DeviceModule module(*driver, cubin);
  tessera::detail::CUfunction function = module.function("store_const");
  REQUIRE(function != nullptr);

  tessera::detail::DeviceBuffer out(*driver, sizeof(std::uint32_t));
  out.fill(0);
  tessera::detail::CUdeviceptr ptr = out.ptr();
  void* params[] = {&ptr};
  tessera::detail::launch_function(function, {1, 1, 1}, {1, 1, 1}, 0, nullptr, params);
  driver->check(driver->cuCtxSynchronize(), "cuCtxSynchronize");
  std::uint32_t value = 0;
  out.download(&value, sizeof value);
  CHECK(value == kStoredValue);

  // Time a second launch with events and a stream.
  tessera::detail::CUstream stream = nullptr;
  driver->check(driver->cuStreamCreate(&stream, 0), "cuStreamCreate");
  tessera::detail::CUevent start = nullptr, stop = nullptr;
  driver->check(driver->cuEventCreate(&start, 0), "cuEventCreate");
  driver->check(driver->cuEventCreate(&stop, 0), "cuEventCreate");
  out.fill(0);
  driver->check(driver->cuEventRecord(start, stream), "cuEventRecord");
  tessera::detail::launch_function(function, {1, 1, 1}, {32, 1, 1}, 0, stream, params);
  driver->check(driver->cuEventRecord(stop, stream), "cuEventRecord");
  driver->check(driver->cuEventSynchronize(stop), "cuEventSynchronize");
  float millis = -1;
  driver->check(driver->cuEventElapsedTime_v2(&millis, start, stop), "cuEventElapsedTime");
  CHECK(millis >= 0);
  driver->check(driver->cuStreamSynchronize(stream), "cuStreamSynchronize");
  value = 0;
  out.download(&value, sizeof value);
  CHECK(value == kStoredValue);
  driver->cuEventDestroy_v2(start);
  driver->cuEventDestroy_v2(stop);
  driver->cuStreamDestroy_v2(stream);
}

TEST_CASE("device modules report bad images and missing kernels", "[gpu]") {
  SKIP_WITHOUT_GPU();
  std::vector<char> garbage(256, 'x');
  CHECK_THROWS_AS(tessera::detail::DeviceModule(*driver, garbage), tessera::Error);
  CHECK_THROWS_AS(tessera::detail::DeviceModule(*driver, std::vector<char>{}), tessera::Error);
  if (!tessera::detail::nvjitlink_available()) return;
  auto cubin = tessera::detail::ptx_to_cubin(kStoreConstPtx, driver->arch()).cubin;
  tessera::detail::DeviceModule module(*driver, cubin);
  CHECK_THROWS_WITH(module.function("no_such_kernel"), Catch::Contains("no_such_kernel"));
  tessera::detail::DeviceModule moved = std::move(module);
  CHECK(moved.function("store_const") != nullptr);
  CHECK_THROWS_AS(tessera::detail::launch_function(moved.function("store_const"), {0, 1, 1}, {1, 1, 1}, 0, nullptr,
                                  nullptr),
                  tessera::Error);
}

TEST_CASE("device buffers copy and check ranges and fail cleanly when out of memory", "[gpu]") {
  SKIP_WITHOUT_GPU();
  std::vector<float> host(1000);
  for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i) * 0.5f;
  tessera::detail::DeviceBuffer buffer(*driver, host.size() * sizeof(float));
  buffer.upload(std::span<const float>(host));
  std::vector<float> back(host.size());
  buffer.download(std::span<float>(back));
  CHECK(back == host);
  CHECK_THROWS_AS(buffer.upload(host.data(), 8, buffer.size() - 4), tessera::Error);
  CHECK_THROWS_AS(buffer.download(back.data(), buffer.size() + 1), tessera::Error);

  tessera::detail::DeviceBuffer moved = std::move(buffer);
  CHECK(buffer.ptr() == 0);
  CHECK(moved.size() == host.size() * sizeof(float));

  tessera::detail::DeviceBuffer empty(*driver, 0);
  CHECK(empty.ptr() == 0);

  // Far more than any GPU has: throws, leaks nothing, and ordinary allocations still work.
  size_t free_before = 0, free_after = 0, total = 0;
  driver->check(driver->cuMemGetInfo_v2(&free_before, &total), "cuMemGetInfo");
  for (int i = 0; i < 3; ++i)
    CHECK_THROWS_WITH(tessera::detail::DeviceBuffer(*driver, size_t{1} << 50),
                      Catch::Contains("CUDA_ERROR_OUT_OF_MEMORY"));
  driver->check(driver->cuMemGetInfo_v2(&free_after, &total), "cuMemGetInfo");
  CHECK(free_after + (size_t{64} << 20) >= free_before);
  tessera::detail::DeviceBuffer after(*driver, 1 << 20);
  after.fill(7);
  unsigned char byte = 0;
  after.download(&byte, 1, (1 << 20) - 1);
  CHECK(byte == 7);
}
