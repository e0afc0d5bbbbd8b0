// cuda_driver.cpp: CudaDriver opens libcuda, binds every function of cuda_functions.def
// (dynamic_library.h), calls cuInit and retains device 0's primary context. The driver object is created once and deliberately never
// destroyed (modules and buffers in static caches may still be released during exit). When the
// toolkit's cuda.h is present at build time (TESSERA_HAVE_CUDA_H) the signatures and constants
// are checked against it.
#include "driver/cuda_driver.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "driver/dynamic_library.h"
#include "tessera/errors.h"
#include "tessera/kernel.h"

namespace tessera::detail {

struct CudaDriverLoader {
  std::unique_ptr<CudaDriver> driver;
  std::string reason;  // why driver is null

  CudaDriverLoader() {
    try {
      load();
    } catch (const std::exception& e) {
      driver.reset();
      reason = e.what();
    } catch (...) {
      driver.reset();
      reason = "unknown error while loading libcuda";
    }
  }

  void load() {
    auto d = std::unique_ptr<CudaDriver>(new CudaDriver());
    static const std::string names[] = {"libcuda.so.1", "libcuda.so"};
    DynamicLibrary library("the CUDA driver library", names);
#define CUDA_FN(ret, name, args) library.bind(d->name, #name);
#include "driver/cuda_functions.def"
#undef CUDA_FN
    if (!library.ok()) {
      reason = library.loaded() ? library.error() + " (driver too old?)" : library.error();
      return;
    }
    if (CUresult r = d->cuInit(0); r != kCudaSuccess) {
      reason = fmt::format("cuInit failed: {}", d->error_text(r));
      return;
    }
    d->cuDriverGetVersion(&d->driver_version_);
    if (CUresult r = d->cuDeviceGetCount(&d->device_count_); r != kCudaSuccess) {
      reason = fmt::format("cuDeviceGetCount failed: {}", d->error_text(r));
      return;
    }
    if (d->device_count_ == 0) {
      reason = "the CUDA driver reports no device";
      return;
    }
    d->check(d->cuDeviceGet(&d->device_, 0), "cuDeviceGet(0)");
    int major = 0, minor = 0;
    d->check(d->cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor, d->device_),
             "cuDeviceGetAttribute(compute capability major)");
    d->check(d->cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, d->device_),
             "cuDeviceGetAttribute(compute capability minor)");
    d->compute_capability_ = major * 10 + minor;
    d->check(d->cuDeviceGetAttribute(&d->multiprocessor_count_, kAttrMultiprocessorCount, d->device_),
             "cuDeviceGetAttribute(multiprocessor count)");
    d->arch_ = fmt::format("sm_{}", d->compute_capability_);
    char name[256] = {};
    d->check(d->cuDeviceGetName(name, sizeof name - 1, d->device_), "cuDeviceGetName");
    d->device_name_ = name;
    d->check(d->cuDevicePrimaryCtxRetain(&d->context_, d->device_), "cuDevicePrimaryCtxRetain");
    d->make_current();
    driver = std::move(d);
  }
};

namespace {

CudaDriverLoader& loader() {
  // Never destroyed: see the file comment.
  static CudaDriverLoader* instance = new CudaDriverLoader();
  return *instance;
}

std::string describe(const CudaDriver* driver, CUresult result) {
  if (driver) return driver->error_text(result);
  return fmt::format("CUDA error {}", result);
}

}  // namespace

CudaDriver* CudaDriver::get_if_available() { return loader().driver.get(); }

CudaDriver& CudaDriver::get() {
  if (CudaDriver* driver = get_if_available()) return *driver;
  throw Error("no CUDA GPU is available: " + unavailable_reason());
}

std::string CudaDriver::unavailable_reason() { return loader().reason; }

std::string CudaDriver::error_text(CUresult result) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (cuGetErrorName(result, &name) != kCudaSuccess || !name) name = nullptr;
  if (cuGetErrorString(result, &text) != kCudaSuccess || !text) text = nullptr;
  if (!name) return fmt::format("CUDA error {} (unknown to this driver)", result);
  return fmt::format("{} ({})", name, text ? text : "no description");
}

void CudaDriver::check(CUresult result, std::string_view what) const {
  if (result != kCudaSuccess) throw Error(fmt::format("{} failed: {}", what, error_text(result)));
}

void CudaDriver::make_current() const { check(cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }


void check(CUresult result, std::string_view what) {
  if (result != kCudaSuccess)
    throw Error(fmt::format("{} failed: {}", what, describe(CudaDriver::get_if_available(), result)));
}

int device_compute_capability() { return CudaDriver::get().compute_capability(); }

// --- DeviceModule ---------------------------------------------------------------------------

DeviceModule::DeviceModule(CudaDriver& driver, std::span<const char> cubin) : driver_(&driver) {
  if (cubin.empty()) throw Error("DeviceModule: the cubin is empty");
  driver.make_current();
  driver.check(driver.cuModuleLoadData(&module_, cubin.data()), "cuModuleLoadData");
}

DeviceModule::~DeviceModule() { reset(); }

DeviceModule::DeviceModule(DeviceModule&& other) noexcept
    : driver_(other.driver_), module_(std::exchange(other.module_, nullptr)) {}

DeviceModule& DeviceModule::operator=(DeviceModule&& other) noexcept {
  if (this != &other) {
    reset();
    driver_ = other.driver_;
    module_ = std::exchange(other.module_, nullptr);
  }
  return *this;
}

void DeviceModule::reset() noexcept {
  if (!module_) return;
  driver_->cuCtxSetCurrent(driver_->context());
  driver_->cuModuleUnload(module_);  // nothing useful to do with an error in a destructor
  module_ = nullptr;
}

CUfunction DeviceModule::function(const std::string& name) const {
  if (!module_) throw Error("DeviceModule::function: the module was moved from");
  CUfunction function = nullptr;
  driver_->make_current();
  driver_->check(driver_->cuModuleGetFunction(&function, module_, name.c_str()),
                 fmt::format("cuModuleGetFunction(\"{}\")", name));
  return function;
}

// --- DeviceBuffer ---------------------------------------------------------------------------

namespace {
double gib(std::size_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0); }
}  // namespace

DeviceBuffer::DeviceBuffer(CudaDriver& driver, std::size_t bytes) : driver_(&driver) {
  if (bytes == 0) return;
  driver.make_current();
  CUdeviceptr ptr = 0;
  if (CUresult r = driver.cuMemAlloc_v2(&ptr, bytes); r != kCudaSuccess) {
    std::size_t free_bytes = 0, total_bytes = 0;
    std::string room = driver.cuMemGetInfo_v2(&free_bytes, &total_bytes) == kCudaSuccess
                           ? fmt::format("{} bytes ({:.2f} GiB) of the GPU's {} ({:.2f} GiB) are free", free_bytes,
                                         gib(free_bytes), total_bytes, gib(total_bytes))
                           : std::string("the GPU's free memory is unknown");
    throw Error(fmt::format("cuMemAlloc of {} bytes ({:.2f} GiB) of device memory failed: {}; {}", bytes, gib(bytes),
                            driver.error_text(r), room));
  }
  ptr_ = ptr;
  size_ = bytes;
}

DeviceBuffer::~DeviceBuffer() { reset(); }

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : driver_(other.driver_),
      ptr_(std::exchange(other.ptr_, 0)),
      size_(std::exchange(other.size_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    reset();
    driver_ = other.driver_;
    ptr_ = std::exchange(other.ptr_, 0);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void DeviceBuffer::reset() noexcept {
  if (!ptr_) return;
  driver_->cuCtxSetCurrent(driver_->context());
  driver_->cuMemFree_v2(ptr_);
  ptr_ = 0;
  size_ = 0;
}

namespace {
void check_range(std::size_t size, std::size_t bytes, std::size_t offset, const char* what) {
  if (offset > size || bytes > size - offset)
    throw Error(fmt::format("DeviceBuffer::{}: {} bytes at offset {} do not fit in {} bytes", what,
                            bytes, offset, size));
}
}  // namespace

void DeviceBuffer::upload(const void* host, std::size_t bytes, std::size_t offset) {
  check_range(size_, bytes, offset, "upload");
  if (bytes == 0) return;
  driver_->make_current();
  driver_->check(driver_->cuMemcpyHtoD_v2(ptr_ + offset, host, bytes), "cuMemcpyHtoD");
}

void DeviceBuffer::download(void* host, std::size_t bytes, std::size_t offset) const {
  check_range(size_, bytes, offset, "download");
  if (bytes == 0) return;
  driver_->make_current();
  driver_->check(driver_->cuMemcpyDtoH_v2(host, ptr_ + offset, bytes), "cuMemcpyDtoH");
}

void DeviceBuffer::fill(unsigned char value) {
  if (size_ == 0) return;
  driver_->make_current();
  driver_->check(driver_->cuMemsetD8_v2(ptr_, value, size_), "cuMemsetD8");
}

// --- launch ---------------------------------------------------------------------------------

CUresult launch_programmatic(CudaDriver& driver, CUfunction function, std::array<unsigned, 3> grid,
                             std::array<unsigned, 3> block, unsigned shared_bytes, CUstream stream, void** params) {
  LaunchAttribute attr;
  attr.id = kLaunchAttributeProgrammaticStreamSerialization;
  attr.value.programmatic_stream_serialization_allowed = 1;
  LaunchConfig config{grid[0], grid[1], grid[2], block[0], block[1], block[2], shared_bytes, stream, &attr, 1};
  return driver.cuLaunchKernelEx(&config, function, params, nullptr);
}

void launch_function(CUfunction function, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                     unsigned shared_bytes, CUstream stream, void** params, bool programmatic) {
  CudaDriver& driver = CudaDriver::get();
  if (!function) throw Error("launch: the kernel function is null");
  for (unsigned d : grid)
    if (d == 0) throw Error(fmt::format("launch: grid ({}, {}, {}) has a zero dimension", grid[0], grid[1], grid[2]));
  for (unsigned d : block)
    if (d == 0) throw Error(fmt::format("launch: block ({}, {}, {}) has a zero dimension", block[0], block[1], block[2]));
  driver.make_current();
  CUresult r = programmatic ? launch_programmatic(driver, function, grid, block, shared_bytes, stream, params)
                            : driver.cuLaunchKernel(function, grid[0], grid[1], grid[2], block[0], block[1],
                                                    block[2], shared_bytes, stream, params, nullptr);
  if (r != kCudaSuccess)  // the message is only formatted on failure: this is the launch hot path
    driver.check(r, fmt::format("{}(grid {}x{}x{}, block {}x{}x{}, {} bytes shared)",
                                programmatic ? "cuLaunchKernelEx" : "cuLaunchKernel", grid[0],
                                grid[1], grid[2], block[0], block[1], block[2], shared_bytes));
}

}  // namespace tessera::detail

bool tessera::gpu_available() { return detail::CudaDriver::get_if_available() != nullptr; }

int tessera::gpu_multiprocessor_count() {
  const detail::CudaDriver* driver = detail::CudaDriver::get_if_available();
  return driver ? driver->multiprocessor_count() : 0;
}

#ifdef TESSERA_HAVE_CUDA_H
// Check the hand-written table and constants against the toolkit's cuda.h.
#include <cuda.h>

#include <cstddef>

#include "driver/abi_check.h"
namespace tessera::detail {
namespace {
#define CUDA_FN(ret, name, args)                                                        \
  static_assert(abi_check::same_abi<ret(*) args, decltype(&::name)>, #name              \
                " in cuda_functions.def differs from cuda.h");
#include "driver/cuda_functions.def"
#undef CUDA_FN
static_assert(sizeof(CUdeviceptr) == sizeof(::CUdeviceptr) && sizeof(CUdevice) == sizeof(::CUdevice));
static_assert(kCudaSuccess == ::CUDA_SUCCESS);
static_assert(kCudaErrorOutOfMemory == ::CUDA_ERROR_OUT_OF_MEMORY);
static_assert(kCudaErrorNotReady == ::CUDA_ERROR_NOT_READY);
static_assert(kStreamNonBlocking == ::CU_STREAM_NON_BLOCKING);
static_assert(kEventDisableTiming == ::CU_EVENT_DISABLE_TIMING);
static_assert(kPointerAttributeContext == ::CU_POINTER_ATTRIBUTE_CONTEXT);
static_assert(kPointerAttributeMemoryType == ::CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
static_assert(sizeof(KernelNodeParams) == sizeof(::CUDA_KERNEL_NODE_PARAMS_v2));
static_assert(offsetof(KernelNodeParams, grid_x) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, gridDimX));
static_assert(offsetof(KernelNodeParams, block_z) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, blockDimZ));
static_assert(offsetof(KernelNodeParams, shared_bytes) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, sharedMemBytes));
static_assert(offsetof(KernelNodeParams, kernel_params) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, kernelParams));
static_assert(offsetof(KernelNodeParams, extra) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, extra));
static_assert(offsetof(KernelNodeParams, kernel) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, kern));
static_assert(offsetof(KernelNodeParams, context) == offsetof(::CUDA_KERNEL_NODE_PARAMS_v2, ctx));
static_assert(kAttrComputeCapabilityMajor == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(kAttrComputeCapabilityMinor == ::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(kAttrMultiprocessorCount == ::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(kJitInfoLogBuffer == ::CU_JIT_INFO_LOG_BUFFER);
static_assert(kJitInfoLogBufferSizeBytes == ::CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
static_assert(kJitLogVerbose == ::CU_JIT_LOG_VERBOSE);
static_assert(sizeof(TensorMapBytes) == sizeof(::CUtensorMap) && alignof(TensorMapBytes) == alignof(::CUtensorMap));
static_assert(kTensorMapUInt8 == ::CU_TENSOR_MAP_DATA_TYPE_UINT8);
static_assert(kTensorMapFloat16 == ::CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
static_assert(kTensorMapFloat32 == ::CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
static_assert(kTensorMapBFloat16 == ::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
static_assert(kTensorMapInterleaveNone == ::CU_TENSOR_MAP_INTERLEAVE_NONE);
static_assert(kTensorMapSwizzle32B == ::CU_TENSOR_MAP_SWIZZLE_32B);
static_assert(kTensorMapSwizzle64B == ::CU_TENSOR_MAP_SWIZZLE_64B);
static_assert(kTensorMapSwizzle128B == ::CU_TENSOR_MAP_SWIZZLE_128B);
static_assert(kTensorMapL2Promotion256B == ::CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
static_assert(kTensorMapOobFillZeros == ::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
static_assert(kAttrMaxSharedMemoryPerBlockOptin ==
              ::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(kFuncAttrMaxDynamicSharedSizeBytes ==
              ::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(kFuncAttrPreferredSharedMemoryCarveout ==
              ::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
static_assert(kSharedMemoryCarveoutMaxShared == ::CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
static_assert(sizeof(LaunchAttribute) == sizeof(::CUlaunchAttribute));
static_assert(offsetof(LaunchAttribute, value) == offsetof(::CUlaunchAttribute, value));
static_assert(sizeof(LaunchConfig) == sizeof(::CUlaunchConfig));
static_assert(offsetof(LaunchConfig, stream) == offsetof(::CUlaunchConfig, hStream));
static_assert(offsetof(LaunchConfig, attrs) == offsetof(::CUlaunchConfig, attrs));
static_assert(offsetof(LaunchConfig, num_attrs) == offsetof(::CUlaunchConfig, numAttrs));
static_assert(sizeof(GraphEdgeData) == sizeof(::CUgraphEdgeData));
static_assert(offsetof(GraphEdgeData, type) == offsetof(::CUgraphEdgeData, type));
static_assert(kLaunchAttributeProgrammaticStreamSerialization == ::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
static_assert(kGraphKernelNodePortProgrammatic == CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC);
static_assert(kGraphDependencyTypeProgrammatic == ::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC);
}  // namespace
}  // namespace tessera::detail
#endif
