// toolkit_library.cpp: see toolkit_library.h.
#include "toolkit_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <vector>

namespace tessera::detail {

void* open_toolkit_library(std::string_view stem, std::string& error) {
  std::vector<std::string> candidates = {fmt::format("{}.so.13", stem), fmt::format("{}.so", stem)};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root) {
      candidates.push_back(fmt::format("{}/lib64/{}.so.13", root, stem));
      candidates.push_back(fmt::format("{}/lib64/{}.so", root, stem));
    }
  candidates.push_back(fmt::format("/usr/local/cuda/lib64/{}.so.13", stem));
  candidates.push_back(fmt::format("/usr/local/cuda/lib64/{}.so", stem));
  std::string tried;
  for (const auto& name : candidates) {
    if (void* handle = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* why = ::dlerror();
    tried += fmt::format("\n  {}", why ? why : name + ": not found");
  }
  error = fmt::format("cannot load {}:{}", stem, tried);
  return nullptr;
}

}  // namespace tessera::detail
