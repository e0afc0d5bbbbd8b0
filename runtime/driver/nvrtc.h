// nvrtc.h: CUDA C++ -> PTX in process through NVIDIA's NVRTC, loaded with dlopen on first use
// (dynamic_library.h: libnvrtc.so.13, libnvrtc.so, then $CUDA_HOME/lib64 and
// /usr/local/cuda/lib64), like nvJitLink, so tessera links and runs its CPU target without the
// CUDA toolkit. Used by unsafe CUDA kernels (include/tessera/unsafe.h) and by device functions
// written in CUDA C++ (device_link.h). Needs no GPU. Thread-safe; the library handle is kept for
// the process.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

struct NvrtcResult {
  std::string ptx;
  std::vector<std::string> lowered_names;  // one per requested name expression, in order
  std::string log;                          // NVRTC's program log (warnings), may be empty
  double millis = 0;
};

// True when libnvrtc could be loaded and has every entry point we use.
bool nvrtc_available();
// Why nvrtc_available() is false ("" when it is true).
std::string nvrtc_load_error();
// "13.0": the loaded library's version. Throws tessera::Error if it is not available.
std::string nvrtc_version();

// Compiles CUDA C++ `source` (a translation unit named `name` in messages) to PTX for `arch`
// ("sm_90" compiles for compute_90) with -std=c++17 plus `options`. `name_expressions` are
// __global__ functions (or device variables) whose mangled names are wanted, e.g. "scatter" or
// "axpy<float>". Throws tessera::Error with the compile log on failure.
NvrtcResult cuda_to_ptx(std::string_view source, std::string_view name, std::string_view arch,
                        std::span<const std::string> name_expressions = {},
                        std::span<const std::string> options = {});

}  // namespace tessera::detail
