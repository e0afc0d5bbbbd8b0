// nvjitlink.h: PTX -> cubin in process through NVIDIA's nvJitLink, which is loaded with dlopen on
// first use (dynamic_library.h: libnvJitLink.so.13, libnvJitLink.so, then $CUDA_HOME/lib64 and
// /usr/local/cuda/lib64), so tessera links and runs its CPU target on machines without the CUDA
// toolkit. Nothing here needs a GPU. Functions are thread-safe; the library handle is loaded once
// and kept for the process.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

struct CubinResult {
  std::vector<char> cubin;  // an ELF image for cuModuleLoadData
  std::string info_log;     // nvJitLink's info log (register counts, spills), may be empty
  double millis = 0;        // wall time of the whole link
};

// True when libnvJitLink could be loaded and has every entry point we use.
bool nvjitlink_available();

// Why nvjitlink_available() is false ("" when it is true).
std::string nvjitlink_load_error();

// "13.0": the loaded library's major.minor version. Throws tessera::Error if it is not available.
std::string nvjitlink_version();

// Compiles `ptx` for `arch` ("sm_90", "sm_100a") with -arch=<arch> -O3 plus `extra_options`.
// Throws tessera::Error carrying nvJitLink's error log on failure, or if nvJitLink is missing.
CubinResult ptx_to_cubin(std::string_view ptx, std::string_view arch,
                         std::span<const std::string> extra_options = {});

// One input of a link: PTX text or a cubin (ELF), named `name` in error logs.
struct LinkInput {
  enum class Kind { ptx, cubin };
  Kind kind = Kind::ptx;
  std::string_view data;
  std::string name = "input.ptx";
};

// Links several inputs into one cubin for `arch` (e.g. a kernel's PTX and the PTX of device
// functions it calls, compiled as relocatable code); otherwise like ptx_to_cubin.
CubinResult link_to_cubin(std::span<const LinkInput> inputs, std::string_view arch,
                          std::span<const std::string> extra_options = {});

}  // namespace tessera::detail
