// device_link.h: a kernel's PTX linked with separately written device code into a cubin. Each
// piece of code is PTX as given, or CUDA C++ compiled by NVRTC as relocatable code; nvJitLink
// links them all. Used by unsafe kernels (their `link` code) and by tile kernels that call device
// functions (cuda_function / ptx_function). Errors say which piece did not compile, or which
// pieces were being linked; callers add the kernel's name.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

struct DeviceCodeInput {
  bool is_ptx = false;
  std::string_view text;
  std::string name;  // in messages and tool logs
};

std::vector<char> link_device_code(std::string_view kernel_ptx, const std::string& kernel_name,
                                   std::span<const DeviceCodeInput> code, std::string_view arch,
                                   std::span<const std::string> nvrtc_options = {});

}  // namespace tessera::detail
