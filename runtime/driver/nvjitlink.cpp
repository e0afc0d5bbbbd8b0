// nvjitlink.cpp: nvJitLink loaded through dlopen (dynamic_library.h). The entry points are looked
// up by their versioned names from CUDA 13's nvJitLink.h (__nvJitLinkCreate_13_0, ...), falling
// back to the plain names; the signatures below are written out here and, when the toolkit header
// is around at build time (TESSERA_HAVE_NVJITLINK_H), checked against it by static_assert.
#include "driver/nvjitlink.h"

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "driver/dynamic_library.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

struct LinkState;
using LinkHandle = LinkState*;
using LinkResult = int;
constexpr LinkResult kSuccess = 0;
constexpr int kInputPtx = 2;  // NVJITLINK_INPUT_PTX
constexpr int kInputCubin = 1;  // NVJITLINK_INPUT_CUBIN

// name, signature: the entry points we use.
#define TESSERA_NVJITLINK_FUNCTIONS(X)                                          \
  X(nvJitLinkCreate, LinkResult (*)(LinkHandle*, std::uint32_t, const char* const*)) \
  X(nvJitLinkDestroy, LinkResult (*)(LinkHandle*))                              \
  X(nvJitLinkAddData, LinkResult (*)(LinkHandle, int, const void*, size_t, const char*)) \
  X(nvJitLinkComplete, LinkResult (*)(LinkHandle))                              \
  X(nvJitLinkGetLinkedCubinSize, LinkResult (*)(LinkHandle, size_t*))           \
  X(nvJitLinkGetLinkedCubin, LinkResult (*)(LinkHandle, void*))                 \
  X(nvJitLinkGetErrorLogSize, LinkResult (*)(LinkHandle, size_t*))              \
  X(nvJitLinkGetErrorLog, LinkResult (*)(LinkHandle, char*))                    \
  X(nvJitLinkGetInfoLogSize, LinkResult (*)(LinkHandle, size_t*))               \
  X(nvJitLinkGetInfoLog, LinkResult (*)(LinkHandle, char*))                     \
  X(nvJitLinkVersion, LinkResult (*)(unsigned*, unsigned*))

// The library's entry points; error is why they cannot be used ("" when they can).
struct Library {
  std::string error;
#define TESSERA_DECLARE(name, type) std::type_identity_t<type> name = nullptr;
  TESSERA_NVJITLINK_FUNCTIONS(TESSERA_DECLARE)
#undef TESSERA_DECLARE
};

Library load_library() {
  Library lib;
  DynamicLibrary library("libnvJitLink", toolkit_library_names("libnvJitLink"));
#define TESSERA_BIND(name, type) library.bind(lib.name, #name, "__" #name "_13_0");
  TESSERA_NVJITLINK_FUNCTIONS(TESSERA_BIND)
#undef TESSERA_BIND
  lib.error = library.error();
  return lib;
}

// Loaded once per process and never unloaded (the handle stays valid for static destructors).
const Library& library() {
  static const Library lib = load_library();
  return lib;
}

const Library& require_library() {
  const Library& lib = library();
  if (!lib.error.empty()) throw Error("nvJitLink is not available: " + lib.error);
  return lib;
}

const char* result_name(LinkResult r) {
  static constexpr const char* names[] = {
      "NVJITLINK_SUCCESS",
      "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
      "NVJITLINK_ERROR_MISSING_ARCH",
      "NVJITLINK_ERROR_INVALID_INPUT",
      "NVJITLINK_ERROR_PTX_COMPILE",
      "NVJITLINK_ERROR_NVVM_COMPILE",
      "NVJITLINK_ERROR_INTERNAL",
      "NVJITLINK_ERROR_THREADPOOL",
      "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
      "NVJITLINK_ERROR_FINALIZE",
      "NVJITLINK_ERROR_NULL_INPUT",
      "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
      "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
      "NVJITLINK_ERROR_ARCH_MISMATCH",
      "NVJITLINK_ERROR_OUTDATED_LIBRARY",
      "NVJITLINK_ERROR_MISSING_FATBIN",
      "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
      "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
      "NVJITLINK_ERROR_LTO_NOT_ENABLED",
  };
  if (r >= 0 && r < static_cast<int>(std::size(names))) return names[r];
  return "NVJITLINK_ERROR_UNKNOWN";
}

std::string read_log(const Library& lib, LinkHandle h, bool error_log) {
  size_t size = 0;
  auto size_fn = error_log ? lib.nvJitLinkGetErrorLogSize : lib.nvJitLinkGetInfoLogSize;
  auto log_fn = error_log ? lib.nvJitLinkGetErrorLog : lib.nvJitLinkGetInfoLog;
  if (size_fn(h, &size) != kSuccess || size == 0) return "";
  std::string log(size, '\0');
  if (log_fn(h, log.data()) != kSuccess) return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// "sm_" + digits, optionally followed by 'a' or 'f'.
bool valid_arch(std::string_view arch) {
  if (arch.size() < 4 || arch.substr(0, 3) != "sm_") return false;
  std::string_view rest = arch.substr(3);
  if (rest.back() == 'a' || rest.back() == 'f') rest.remove_suffix(1);
  if (rest.empty()) return false;
  for (char c : rest)
    if (c < '0' || c > '9') return false;
  return true;
}

struct HandleGuard {
  const Library& lib;
  LinkHandle h = nullptr;
  ~HandleGuard() {
    if (h) lib.nvJitLinkDestroy(&h);
  }
};

}  // namespace

bool nvjitlink_available() { return library().error.empty(); }

std::string nvjitlink_load_error() { return library().error; }

std::string nvjitlink_version() {
  const Library& lib = require_library();
  unsigned major = 0, minor = 0;
  if (LinkResult r = lib.nvJitLinkVersion(&major, &minor); r != kSuccess)
    throw Error(fmt::format("nvJitLinkVersion failed: {}", result_name(r)));
  return fmt::format("{}.{}", major, minor);
}

CubinResult ptx_to_cubin(std::string_view ptx, std::string_view arch,
                         std::span<const std::string> extra_options) {
  LinkInput input{LinkInput::Kind::ptx, ptx, "tessera.ptx"};
  return link_to_cubin(std::span<const LinkInput>(&input, 1), arch, extra_options);
}

CubinResult link_to_cubin(std::span<const LinkInput> inputs, std::string_view arch,
                          std::span<const std::string> extra_options) {
  const Library& lib = require_library();
  if (!valid_arch(arch))
    throw Error(fmt::format("ptx_to_cubin: '{}' is not a GPU architecture like sm_90 or sm_100a",
                            arch));
  auto start = std::chrono::steady_clock::now();

  std::vector<std::string> options = {fmt::format("-arch={}", arch), "-O3"};
  options.insert(options.end(), extra_options.begin(), extra_options.end());
  std::vector<const char*> argv;
  for (const auto& option : options) argv.push_back(option.c_str());

  HandleGuard guard{lib};
  if (LinkResult r = lib.nvJitLinkCreate(&guard.h, static_cast<std::uint32_t>(argv.size()),
                                         argv.data());
      r != kSuccess) {
    // nvJitLink 13.0 hands out a handle even when it rejects the options (about 1 KiB in 22
    // allocations, found by LeakSanitizer): the guard destroys it.
    throw Error(fmt::format("nvJitLink rejected the options [{}]: {}", fmt::join(options, " "),
                            result_name(r)));
  }
  auto fail = [&](std::string_view step, LinkResult r) {
    std::string log = read_log(lib, guard.h, /*error_log=*/true);
    std::string hint;
    if (log.find("Unsupported .version") != std::string::npos) {
      std::string version = "?";
      try {
        version = nvjitlink_version();
      } catch (const Error&) {
      }
      hint = fmt::format(
          "\n(the PTX asks for a newer PTX ISA than this nvJitLink {} supports: lower the PTX "
          ".version or use a newer CUDA toolkit)",
          version);
    }
    return Error(fmt::format("nvJitLink failed to compile PTX for -arch={} ({}: {}):\n{}{}", arch,
                             step, result_name(r), log.empty() ? "(no error log)" : log, hint));
  };

  for (const LinkInput& in : inputs) {
    std::string text(in.data);  // keeps a terminating NUL behind the data
    int kind = in.kind == LinkInput::Kind::ptx ? kInputPtx : kInputCubin;
    if (LinkResult r = lib.nvJitLinkAddData(guard.h, kind, text.data(), text.size(), in.name.c_str());
        r != kSuccess)
      throw fail(fmt::format("nvJitLinkAddData({})", in.name), r);
  }
  if (LinkResult r = lib.nvJitLinkComplete(guard.h); r != kSuccess) throw fail("nvJitLinkComplete", r);

  CubinResult result;
  size_t size = 0;
  if (LinkResult r = lib.nvJitLinkGetLinkedCubinSize(guard.h, &size); r != kSuccess)
    throw fail("nvJitLinkGetLinkedCubinSize", r);
  result.cubin.resize(size);
  if (LinkResult r = lib.nvJitLinkGetLinkedCubin(guard.h, result.cubin.data()); r != kSuccess)
    throw fail("nvJitLinkGetLinkedCubin", r);
  result.info_log = read_log(lib, guard.h, /*error_log=*/false);
  result.millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace tessera::detail

#ifdef TESSERA_HAVE_NVJITLINK_H
// Check the hand-written signatures against the toolkit's header.
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>

#include "driver/abi_check.h"
namespace tessera::detail {
namespace {
#define TESSERA_CHECK(name, type)                                                         \
  static_assert(abi_check::same_abi<type, decltype(&::TESSERA_VERSIONED_##name)>, #name \
                " differs from nvJitLink.h");
#define TESSERA_VERSIONED_nvJitLinkCreate __nvJitLinkCreate_13_0
#define TESSERA_VERSIONED_nvJitLinkDestroy __nvJitLinkDestroy_13_0
#define TESSERA_VERSIONED_nvJitLinkAddData __nvJitLinkAddData_13_0
#define TESSERA_VERSIONED_nvJitLinkComplete __nvJitLinkComplete_13_0
#define TESSERA_VERSIONED_nvJitLinkGetLinkedCubinSize __nvJitLinkGetLinkedCubinSize_13_0
#define TESSERA_VERSIONED_nvJitLinkGetLinkedCubin __nvJitLinkGetLinkedCubin_13_0
#define TESSERA_VERSIONED_nvJitLinkGetErrorLogSize __nvJitLinkGetErrorLogSize_13_0
#define TESSERA_VERSIONED_nvJitLinkGetErrorLog __nvJitLinkGetErrorLog_13_0
#define TESSERA_VERSIONED_nvJitLinkGetInfoLogSize __nvJitLinkGetInfoLogSize_13_0
#define TESSERA_VERSIONED_nvJitLinkGetInfoLog __nvJitLinkGetInfoLog_13_0
#define TESSERA_VERSIONED_nvJitLinkVersion nvJitLinkVersion
TESSERA_NVJITLINK_FUNCTIONS(TESSERA_CHECK)
static_assert(NVJITLINK_INPUT_PTX == kInputPtx && NVJITLINK_INPUT_CUBIN == kInputCubin && NVJITLINK_SUCCESS == kSuccess);
#undef TESSERA_CHECK
}  // namespace
}  // namespace tessera::detail
#endif
