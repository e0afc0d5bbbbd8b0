// nvrtc.cpp: NVRTC loaded through dlopen (dynamic_library.h); the signatures are written out here
// and checked against nvrtc.h by static_assert when the toolkit header is around at build time
// (TESSERA_HAVE_NVRTC_H).
#include "driver/nvrtc.h"

#include <chrono>
#include <cstdlib>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "driver/dynamic_library.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

struct ProgramState;
using Program = ProgramState*;
using Result = int;
constexpr Result kSuccess = 0;

#define TESSERA_NVRTC_FUNCTIONS(X)                                                                   \
  X(nvrtcGetErrorString, const char* (*)(Result))                                                    \
  X(nvrtcVersion, Result (*)(int*, int*))                                                            \
  X(nvrtcCreateProgram,                                                                              \
    Result (*)(Program*, const char*, const char*, int, const char* const*, const char* const*))     \
  X(nvrtcDestroyProgram, Result (*)(Program*))                                                       \
  X(nvrtcCompileProgram, Result (*)(Program, int, const char* const*))                               \
  X(nvrtcGetPTXSize, Result (*)(Program, size_t*))                                                   \
  X(nvrtcGetPTX, Result (*)(Program, char*))                                                         \
  X(nvrtcGetProgramLogSize, Result (*)(Program, size_t*))                                            \
  X(nvrtcGetProgramLog, Result (*)(Program, char*))                                                  \
  X(nvrtcAddNameExpression, Result (*)(Program, const char*))                                        \
  X(nvrtcGetLoweredName, Result (*)(Program, const char*, const char**))

// The library's entry points; error is why they cannot be used ("" when they can).
struct Library {
  std::string error;
#define TESSERA_DECLARE(name, type) std::type_identity_t<type> name = nullptr;
  TESSERA_NVRTC_FUNCTIONS(TESSERA_DECLARE)
#undef TESSERA_DECLARE
};

Library load_library() {
  Library lib;
  DynamicLibrary library("libnvrtc", toolkit_library_names("libnvrtc"));
#define TESSERA_BIND(name, type) library.bind(lib.name, #name);
  TESSERA_NVRTC_FUNCTIONS(TESSERA_BIND)
#undef TESSERA_BIND
  lib.error = library.error();
  return lib;
}

const Library& library() {
  static const Library lib = load_library();  // never unloaded
  return lib;
}

const Library& require_library() {
  const Library& lib = library();
  if (!lib.error.empty()) throw Error("NVRTC is not available: " + lib.error);
  return lib;
}

struct ProgramGuard {
  const Library& lib;
  Program p = nullptr;
  ~ProgramGuard() {
    if (p) lib.nvrtcDestroyProgram(&p);
  }
};

std::string program_log(const Library& lib, Program p) {
  size_t size = 0;
  if (lib.nvrtcGetProgramLogSize(p, &size) != kSuccess || size <= 1) return "";
  std::string log(size, '\0');
  if (lib.nvrtcGetProgramLog(p, log.data()) != kSuccess) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// "sm_90" -> "compute_90", "sm_100a" -> "compute_100a".
std::string virtual_arch(std::string_view arch) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_")
    throw Error(fmt::format("cuda_to_ptx: '{}' is not a GPU architecture like sm_90 or sm_100a", arch));
  return fmt::format("compute_{}", arch.substr(3));
}

}  // namespace

bool nvrtc_available() { return library().error.empty(); }

std::string nvrtc_load_error() { return library().error; }

std::string nvrtc_version() {
  const Library& lib = require_library();
  int major = 0, minor = 0;
  if (Result r = lib.nvrtcVersion(&major, &minor); r != kSuccess)
    throw Error(fmt::format("nvrtcVersion failed: {}", lib.nvrtcGetErrorString(r)));
  return fmt::format("{}.{}", major, minor);
}

NvrtcResult cuda_to_ptx(std::string_view source, std::string_view name, std::string_view arch,
                        std::span<const std::string> name_expressions, std::span<const std::string> options) {
  const Library& lib = require_library();
  auto start = std::chrono::steady_clock::now();
  std::vector<std::string> all = {fmt::format("--gpu-architecture={}", virtual_arch(arch)), "-std=c++17"};
  all.insert(all.end(), options.begin(), options.end());
  std::vector<const char*> argv;
  for (const auto& o : all) argv.push_back(o.c_str());

  std::string text(source);
  std::string file = fmt::format("{}.cu", name);
  ProgramGuard guard{lib};
  if (Result r = lib.nvrtcCreateProgram(&guard.p, text.c_str(), file.c_str(), 0, nullptr, nullptr); r != kSuccess) {
    guard.p = nullptr;
    throw Error(fmt::format("nvrtcCreateProgram('{}') failed: {}", file, lib.nvrtcGetErrorString(r)));
  }
  for (const auto& e : name_expressions)
    if (Result r = lib.nvrtcAddNameExpression(guard.p, e.c_str()); r != kSuccess)
      throw Error(fmt::format("nvrtcAddNameExpression('{}') failed: {}", e, lib.nvrtcGetErrorString(r)));
  Result compiled = lib.nvrtcCompileProgram(guard.p, static_cast<int>(argv.size()), argv.data());
  NvrtcResult out;
  out.log = program_log(lib, guard.p);
  if (compiled != kSuccess)
    throw Error(fmt::format("NVRTC failed to compile '{}' for {} ({}; options [{}]):\n{}", file, arch,
                            lib.nvrtcGetErrorString(compiled), fmt::join(all, " "),
                            out.log.empty() ? "(no log)" : out.log));
  for (const auto& e : name_expressions) {
    const char* lowered = nullptr;
    if (Result r = lib.nvrtcGetLoweredName(guard.p, e.c_str(), &lowered); r != kSuccess || !lowered)
      throw Error(fmt::format("'{}' names no __global__ function of '{}' (nvrtcGetLoweredName: {})", e, file,
                              lib.nvrtcGetErrorString(r)));
    out.lowered_names.emplace_back(lowered);
  }
  size_t size = 0;
  if (Result r = lib.nvrtcGetPTXSize(guard.p, &size); r != kSuccess)
    throw Error(fmt::format("nvrtcGetPTXSize failed: {}", lib.nvrtcGetErrorString(r)));
  out.ptx.assign(size, '\0');
  if (Result r = lib.nvrtcGetPTX(guard.p, out.ptx.data()); r != kSuccess)
    throw Error(fmt::format("nvrtcGetPTX failed: {}", lib.nvrtcGetErrorString(r)));
  while (!out.ptx.empty() && out.ptx.back() == '\0') out.ptx.pop_back();
  out.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace tessera::detail

#ifdef TESSERA_HAVE_NVRTC_H
#include <nvrtc.h>

#include "driver/abi_check.h"
namespace tessera::detail {
namespace {
#define TESSERA_CHECK(name, type)                                                      \
  static_assert(abi_check::same_abi<type, decltype(&::name)>, #name " differs from nvrtc.h");
TESSERA_NVRTC_FUNCTIONS(TESSERA_CHECK)
#undef TESSERA_CHECK
static_assert(kSuccess == ::NVRTC_SUCCESS);
}  // namespace
}  // namespace tessera::detail
#endif
