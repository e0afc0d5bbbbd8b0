// dynamic_library.cpp: see dynamic_library.h.
#include "driver/dynamic_library.h"

#include <fmt/format.h>

#include <cstdlib>

namespace tessera::detail {

DynamicLibrary::DynamicLibrary(std::string_view what, std::span<const std::string> candidates) : what_(what) {
  std::string tried;
  for (const std::string& name : candidates) {
    if ((handle_ = ::dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))) return;
    const char* why = ::dlerror();
    tried += fmt::format("\n  {}", why ? why : name + ": not found");
  }
  error_ = fmt::format("cannot load {}:{}", what_, tried);
}

void* DynamicLibrary::lookup(const char* name, const std::string& preferred) {
  if (!ok()) return nullptr;
  if (!preferred.empty())
    if (void* p = ::dlsym(handle_, preferred.c_str())) return p;
  void* p = ::dlsym(handle_, name);
  if (!p) error_ = fmt::format("{} has no entry point {}", what_, name);
  return p;
}

std::vector<std::string> toolkit_library_names(std::string_view stem) {
  std::vector<std::string> names = {fmt::format("{}.so.13", stem), fmt::format("{}.so", stem)};
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* root = std::getenv(var); root && *root) {
      names.push_back(fmt::format("{}/lib64/{}.so.13", root, stem));
      names.push_back(fmt::format("{}/lib64/{}.so", root, stem));
    }
  names.push_back(fmt::format("/usr/local/cuda/lib64/{}.so.13", stem));
  names.push_back(fmt::format("/usr/local/cuda/lib64/{}.so", stem));
  return names;
}

}  // namespace tessera::detail
