// unsafe_kernels.h: unsafe CUDA/PTX kernels compiled for one architecture (unsafe.cpp), shared
// with graphs. Internal to libtessera.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "device_memory.h"
#include "tessera/unsafe.h"

namespace tessera::detail {

struct UnsafeCompiled {
  std::string arch;
  std::string ptx;          // the kernel's PTX (before linking)
  std::vector<char> cubin;  // linked
  std::string symbol;       // the entry's (lowered) name
  bool linked = false;      // device code was linked in: the PTX alone does not hold the kernel
  bool from_disk_cache = false;
  std::shared_ptr<const std::string> label;  // "unsafe kernel 'name'"
  mutable LoadedKernel loaded;
};

// Compiled once per (spec, architecture) in the process (single flight) and cached on disk.
std::shared_ptr<const UnsafeCompiled> unsafe_lookup_or_compile(const UnsafeKernelSpec& spec, Target target);

// What a launch of `compiled` loads on `driver`'s GPU: the cubin, or on a GPU newer than its
// target the PTX (gpu_arch.h). Throws naming the kernel when the GPU runs neither.
std::span<const char> unsafe_device_image(const UnsafeCompiled& compiled, const CudaDriver& driver);

// One 8-byte parameter per argument: tensors' device addresses, values as given.
std::vector<int64_t> unsafe_slots(std::span<const ArgDesc> args, std::span<const int64_t> addresses);

}  // namespace tessera::detail
