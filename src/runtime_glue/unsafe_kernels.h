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
  const GpuArch* target = nullptr;  // the architecture compiled for
  bool linked = false;      // device code was linked in: the PTX alone does not hold the kernel
  bool from_disk_cache = false;
  std::shared_ptr<const std::string> label;  // "unsafe kernel 'name'"
  mutable LoadedKernel loaded;

  // What a launch loads on `driver`'s GPU (device_image in device_memory.h).
  std::span<const char> image(const CudaDriver& driver) const {
    return device_image(*label, *target, cubin, ptx, linked, driver);
  }
};

// Compiled once per (spec, architecture) in the process (single flight) and cached on disk.
std::shared_ptr<const UnsafeCompiled> unsafe_lookup_or_compile(const UnsafeKernelSpec& spec, Target target);

// One 8-byte parameter per argument: tensors' device addresses, values as given.
std::vector<int64_t> unsafe_slots(std::span<const ArgDesc> args, std::span<const int64_t> addresses);

}  // namespace tessera::detail
