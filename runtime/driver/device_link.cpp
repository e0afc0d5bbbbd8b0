// device_link.cpp: see device_link.h.
#include "driver/device_link.h"

#include <fmt/format.h>

#include "driver/nvrtc.h"
#include "driver/nvjitlink.h"
#include "tessera/errors.h"

namespace tessera::detail {

std::vector<char> link_device_code(std::string_view kernel_ptx, const std::string& kernel_name,
                                   std::span<const DeviceCodeInput> code, std::string_view arch,
                                   std::span<const std::string> nvrtc_options) {
  std::vector<std::string> options(nvrtc_options.begin(), nvrtc_options.end());
  options.push_back("-rdc=true");
  std::vector<std::string> texts;  // the compiled CUDA C++ (owned while linking)
  texts.reserve(code.size());
  std::vector<LinkInput> inputs;
  inputs.push_back({LinkInput::Kind::ptx, kernel_ptx, kernel_name + ".ptx"});
  std::string names;
  for (const DeviceCodeInput& d : code) {
    std::string_view ptx = d.text;
    if (!d.is_ptx) {
      try {
        texts.push_back(cuda_to_ptx(d.text, d.name, arch, {}, options).ptx);
      } catch (const Error& e) {
        throw Error(fmt::format("the CUDA C++ code of device function '{}' does not compile:\n{}", d.name, e.what()));
      }
      ptx = texts.back();
    }
    inputs.push_back({LinkInput::Kind::ptx, ptx, d.name});
    names += (names.empty() ? "'" : ", '") + d.name + "'";
  }
  try {
    return link_to_cubin(inputs, arch).cubin;
  } catch (const Error& e) {
    throw Error(fmt::format("linking with the device code ({}) failed (each function must be defined extern \"C\" "
                            "with the declared name):\n{}",
                            names, e.what()));
  }
}

}  // namespace tessera::detail
