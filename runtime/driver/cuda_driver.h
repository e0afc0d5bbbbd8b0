// cuda_driver.h: the CUDA driver API, loaded with dlopen("libcuda.so.1") on first use
// (dynamic_library.h), so tessera builds and runs (CPU target) on machines with no driver and no
// GPU: nothing here needs libcuda at link time, and CudaDriver::get_if_available() answers nullptr
// there without throwing. The function table comes from cuda_functions.def (X-macro); the types below are ABI-compatible stand-ins for cuda.h's, so
// this header does not include cuda.h. tessera uses device 0 and its primary context, retained on
// first use and kept (like the library handle) until the process ends. Errors throw tessera::Error.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

// The same struct tags cuda.h uses, so its handle types and ours are interchangeable.
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
struct CUgraph_st;
struct CUgraphNode_st;
struct CUgraphExec_st;

namespace tessera::detail {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
using CUgraph = CUgraph_st*;
using CUgraphNode = CUgraphNode_st*;
using CUgraphExec = CUgraphExec_st*;
using CUpointer_attribute = int;

// cuda.h's CUDA_KERNEL_NODE_PARAMS_v2 (checked in cuda_driver.cpp): one kernel node of a graph.
struct KernelNodeParams {
  CUfunction func = nullptr;
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  unsigned shared_bytes = 0;
  void** kernel_params = nullptr;  // one pointer per parameter; the values are copied by the call
  void** extra = nullptr;
  void* kernel = nullptr;          // CUkernel, unused (func is set)
  CUcontext context = nullptr;     // unused (func is set)
};

// cuda.h's CUlaunchAttribute: one attribute of a cuLaunchKernelEx launch (only the programmatic
// stream serialization attribute is used).
struct LaunchAttribute {
  int id = 0;
  char pad[4] = {};
  union {
    char raw[64];
    int programmatic_stream_serialization_allowed;
  } value{};
};

// cuda.h's CUlaunchConfig.
struct LaunchConfig {
  unsigned grid_x = 1, grid_y = 1, grid_z = 1;
  unsigned block_x = 1, block_y = 1, block_z = 1;
  unsigned shared_bytes = 0;
  CUstream stream = nullptr;
  LaunchAttribute* attrs = nullptr;
  unsigned num_attrs = 0;
};

// cuda.h's CUgraphEdgeData: what a graph edge waits for.
struct GraphEdgeData {
  unsigned char from_port = 0;  // 0: the upstream node's completion
  unsigned char to_port = 0;
  unsigned char type = 0;       // 0: full dependency
  unsigned char reserved[5] = {};
};

// The few enumerator values tessera needs (checked against cuda.h in cuda_driver.cpp).
inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorOutOfMemory = 2;
inline constexpr CUresult kCudaErrorNotReady = 600;
inline constexpr unsigned kStreamNonBlocking = 1;     // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDisableTiming = 2;    // CU_EVENT_DISABLE_TIMING
inline constexpr CUpointer_attribute kPointerAttributeContext = 1;     // CU_POINTER_ATTRIBUTE_CONTEXT
inline constexpr CUpointer_attribute kPointerAttributeMemoryType = 2;  // CU_POINTER_ATTRIBUTE_MEMORY_TYPE
inline constexpr CUdevice_attribute kAttrComputeCapabilityMajor = 75;
inline constexpr CUdevice_attribute kAttrComputeCapabilityMinor = 76;
inline constexpr CUdevice_attribute kAttrMaxSharedMemoryPerBlockOptin = 97;
inline constexpr CUdevice_attribute kAttrMultiprocessorCount = 16;
// cuModuleLoadDataEx's options (cuda.h's CUjit_option) for the compile log of a PTX image.
inline constexpr int kJitInfoLogBuffer = 3;
inline constexpr int kJitInfoLogBufferSizeBytes = 4;
inline constexpr int kJitLogVerbose = 12;

// cuda.h's CUtensorMap: the opaque 128 bytes (128-byte aligned on the host) that
// cuTensorMapEncodeTiled writes and a kernel's TMA instructions read (passed by value as a
// 64-byte aligned grid-constant parameter).
struct alignas(128) TensorMapBytes {
  std::uint64_t words[16];
};
// cuTensorMapEncodeTiled's enumerations (cuda.h's CU_TENSOR_MAP_*), the values tessera uses.
inline constexpr int kTensorMapUInt8 = 0;         // CU_TENSOR_MAP_DATA_TYPE_UINT8 (8-bit floats' bytes)
inline constexpr int kTensorMapFloat16 = 6;       // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
inline constexpr int kTensorMapFloat32 = 7;       // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
inline constexpr int kTensorMapBFloat16 = 9;      // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
inline constexpr int kTensorMapInterleaveNone = 0;
inline constexpr int kTensorMapSwizzle32B = 1;
inline constexpr int kTensorMapSwizzle64B = 2;
inline constexpr int kTensorMapSwizzle128B = 3;
inline constexpr int kTensorMapL2Promotion256B = 3;
inline constexpr int kTensorMapOobFillZeros = 0;  // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros
inline constexpr CUfunction_attribute kFuncAttrMaxDynamicSharedSizeBytes = 8;
inline constexpr CUfunction_attribute kFuncAttrPreferredSharedMemoryCarveout = 9;
inline constexpr int kSharedMemoryCarveoutMaxShared = 100;  // percent of the unified L1/shared memory
// Shared memory a block may use without opting in (static and dynamic together).
inline constexpr unsigned kStaticSharedBytes = 48 * 1024;
// Programmatic dependent launch: a kernel launched with this attribute (or the downstream end of a
// programmatic graph edge) may begin before the kernel it follows has ended, and must itself wait
// (griddepcontrol.wait) before touching memory that kernel may write.
inline constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;  // CU_LAUNCH_ATTRIBUTE_...
inline constexpr unsigned char kGraphKernelNodePortProgrammatic = 1;       // CU_GRAPH_KERNEL_NODE_PORT_...
inline constexpr unsigned char kGraphDependencyTypeProgrammatic = 1;       // CU_GRAPH_DEPENDENCY_TYPE_...

class CudaDriver {
public:
  // The process's driver, or nullptr when libcuda cannot be loaded, cuInit fails or there is no
  // device. Never throws. The first call loads the library and retains device 0's primary context.
  static CudaDriver* get_if_available();
  // Like get_if_available(), but throws tessera::Error (with unavailable_reason()) instead of nullptr.
  static CudaDriver& get();
  // Why get_if_available() returns nullptr; "" when it does not.
  static std::string unavailable_reason();

  // One member per function in cuda_functions.def, e.g. driver->cuMemAlloc_v2(&ptr, bytes).
#define CUDA_FN(ret, name, args) ret(*name) args = nullptr;
#include "driver/cuda_functions.def"
#undef CUDA_FN

  // Throws tessera::Error "<what> failed: CUDA_ERROR_X (description)" unless result is success.
  void check(CUresult result, std::string_view what) const;
  // "CUDA_ERROR_X (description)" for a result code.
  std::string error_text(CUresult result) const;

  CUdevice device() const { return device_; }
  CUcontext context() const { return context_; }
  // Makes the primary context current on the calling thread (cheap; call before driver work).
  void make_current() const;

  int compute_capability() const { return compute_capability_; }  // 90 for sm_90
  const std::string& arch() const { return arch_; }                // "sm_90"
  const std::string& device_name() const { return device_name_; }
  int driver_version() const { return driver_version_; }           // 13000 for CUDA 13.0
  int device_count() const { return device_count_; }
  int multiprocessor_count() const { return multiprocessor_count_; }  // 132 on an H200

  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

private:
  CudaDriver() = default;
  friend struct CudaDriverLoader;

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int compute_capability_ = 0;
  std::string arch_;  // "sm_" + compute capability, made once (compared at every launch)
  int driver_version_ = 0;
  int device_count_ = 0;
  int multiprocessor_count_ = 1;
  std::string device_name_;
};

// Throws tessera::Error naming `what` and the CUDA error (name and text when libcuda is loaded).
void check(CUresult result, std::string_view what);

// Device 0's compute capability as major*10+minor (90 on an H100/H200). Throws without a GPU.
int device_compute_capability();

// A module loaded from a cubin into the primary context; unloaded on destruction. Move-only.
class DeviceModule {
public:
  DeviceModule(CudaDriver& driver, std::span<const char> cubin);
  ~DeviceModule();
  DeviceModule(DeviceModule&& other) noexcept;
  DeviceModule& operator=(DeviceModule&& other) noexcept;
  DeviceModule(const DeviceModule&) = delete;
  DeviceModule& operator=(const DeviceModule&) = delete;

  // The kernel named `name` (its PTX .entry name). Throws if the module has none.
  CUfunction function(const std::string& name) const;
  CUmodule handle() const { return module_; }

private:
  void reset() noexcept;
  CudaDriver* driver_;
  CUmodule module_ = nullptr;
};

// Device memory of a fixed size; freed on destruction. Move-only. Allocation failure (out of
// memory included) throws tessera::Error and leaves nothing allocated.
class DeviceBuffer {
public:
  DeviceBuffer(CudaDriver& driver, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  CUdeviceptr ptr() const { return ptr_; }
  std::size_t size() const { return size_; }

  // Synchronous copies of `bytes` bytes at byte `offset`; out-of-range copies throw.
  void upload(const void* host, std::size_t bytes, std::size_t offset = 0);
  void download(void* host, std::size_t bytes, std::size_t offset = 0) const;
  void fill(unsigned char value);

  template <class T> void upload(std::span<const T> host) {
    upload(host.data(), host.size_bytes());
  }
  template <class T> void download(std::span<T> host) const {
    download(host.data(), host.size_bytes());
  }

private:
  void reset() noexcept;
  CudaDriver* driver_;
  CUdeviceptr ptr_ = 0;
  std::size_t size_ = 0;
};

// Launches `function` on `stream` (nullptr: the legacy default stream). `params` is the usual
// cuLaunchKernel array of pointers to each argument. Dynamic shared memory above 48 KiB must have
// been opted into for `function` (LoadedKernel::function does it once per function, in
// device_memory.h; the launch fails otherwise). Asynchronous: errors from the kernel itself surface
// at the next synchronization.
// `programmatic`: the kernel begins with griddepcontrol.wait (every tile kernel does), so it is
// launched with programmatic stream serialization: it may start while the kernel before it on the
// stream finishes, which hides most of the launch latency between dependent kernels.
void launch_function(CUfunction function, std::array<unsigned, 3> grid, std::array<unsigned, 3> block,
                     unsigned shared_bytes, CUstream stream, void** params, bool programmatic = false);
// The cuLaunchKernelEx call of a programmatic launch, and nothing else (no checks, no current
// context, no exception): for launch_function() and for a pool stream's launcher thread.
CUresult launch_programmatic(CudaDriver& driver, CUfunction function, std::array<unsigned, 3> grid,
                             std::array<unsigned, 3> block, unsigned shared_bytes, CUstream stream, void** params);

}  // namespace tessera::detail
