// dynamic_library.h: the one way tessera loads the NVIDIA libraries it calls (the CUDA driver,
// nvJitLink, NVRTC): dlopen at run time, so that tessera builds without them and runs its CPU
// target where they are missing. Each binding (cuda_driver.cpp, nvjitlink.cpp, nvrtc.cpp) lists
// its entry points with their signatures in an X-macro table, opens its library here once and
// binds every entry point of the table. A library that does not load, or the first entry point it
// lacks, becomes the binding's error(), which callers report instead of calling the function they
// wanted. Handles are never closed, so that the functions stay valid for static
// destructors at exit. Thread-safety: bind once (in a function-local static), then read only.
#pragma once

#include <dlfcn.h>

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

class DynamicLibrary {
 public:
  // Opens the first of `candidates` that loads (RTLD_NOW | RTLD_LOCAL). `what` names the library
  // in messages ("the CUDA driver library", "libnvJitLink"). When none loads, error() is
  // "cannot load <what>:" followed by what each candidate's dlopen said.
  DynamicLibrary(std::string_view what, std::span<const std::string> candidates);

  // Whether the library loaded.
  bool loaded() const { return handle_ != nullptr; }
  // Whether it loaded and every entry point bound so far was found.
  bool ok() const { return error_.empty(); }
  // Why it is not ok() ("" when it is).
  const std::string& error() const { return error_; }

  // Sets `fn` to the entry point `name`, or to `preferred` when the library has that one (a
  // versioned name: nvJitLink's __nvJitLinkCreate_13_0). A missing entry point leaves `fn` null
  // and, unless an earlier failure was recorded, sets error() to "<what> has no entry point
  // <name>". Does nothing once not ok().
  template <class Fn>
  void bind(Fn& fn, const char* name, const std::string& preferred = {}) {
    fn = reinterpret_cast<Fn>(lookup(name, preferred));
  }

 private:
  void* lookup(const char* name, const std::string& preferred);

  std::string what_;
  void* handle_ = nullptr;
  std::string error_;
};

// Where a CUDA toolkit library (`stem`: "libnvrtc", "libnvJitLink") is looked for, in order:
// <stem>.so.13 and <stem>.so on the loader's path, then in $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64.
std::vector<std::string> toolkit_library_names(std::string_view stem);

}  // namespace tessera::detail
