// Tests for runtime/nvjitlink.h: a small hand-written PTX kernel becomes a cubin (an ELF image) for
// sm_90 and sm_100a; bad PTX, a too-new PTX ISA, a bad arch and an unknown option each throw
// tessera::Error carrying nvJitLink's log. Needs no GPU. Every test is skipped with a warning when
// libnvJitLink cannot be loaded (machines without the CUDA toolkit).
#include <catch2/catch.hpp>

#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "ptx_fixtures.h"
#include "tessera/errors.h"
#include "driver/nvjitlink.h"

namespace {

using fixtures::store_const_ptx;

bool is_elf(const std::vector<char>& bytes) {
  return bytes.size() > 4 && std::memcmp(bytes.data(), "\x7f" "ELF", 4) == 0;
}

#define SKIP_WITHOUT_NVJITLINK()                                                   \
  if (!tessera::detail::nvjitlink_available()) {                                           \
    WARN("nvJitLink not loadable, skipping: " << tessera::detail::nvjitlink_load_error()); \
    return;                                                                        \
  }

}  // namespace

TEST_CASE("nvJitLink reports its version", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  std::string version = tessera::detail::nvjitlink_version();
  INFO("version " << version);
  CHECK(std::regex_match(version, std::regex("[0-9]+\\.[0-9]+")));
}

TEST_CASE("nvJitLink compiles PTX to an sm_90 cubin", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  auto result = tessera::detail::ptx_to_cubin(store_const_ptx("9.0", "sm_90"), "sm_90");
  CHECK(is_elf(result.cubin));
  CHECK(result.millis > 0);
  // Extra options reach nvJitLink: -lineinfo is harmless, -verbose fills the info log.
  std::vector<std::string> extra = {"-lineinfo", "-verbose"};
  auto verbose = tessera::detail::ptx_to_cubin(store_const_ptx("9.0", "sm_90"), "sm_90", extra);
  CHECK(is_elf(verbose.cubin));
  INFO("info log: " << verbose.info_log);
  CHECK(verbose.info_log.find("store_const") != std::string::npos);
}

TEST_CASE("nvJitLink compiles PTX to an sm_100a cubin", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  auto result = tessera::detail::ptx_to_cubin(store_const_ptx("9.0", "sm_100a"), "sm_100a");
  CHECK(is_elf(result.cubin));
}

TEST_CASE("nvJitLink errors carry the log", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  std::string bad = store_const_ptx("9.0", "sm_90");
  bad.replace(bad.find("mov.u32"), 7, "mov.bogus");
  try {
    tessera::detail::ptx_to_cubin(bad, "sm_90");
    FAIL("bad PTX compiled");
  } catch (const tessera::Error& e) {
    std::string message = e.what();
    INFO(message);
    CHECK(message.find("sm_90") != std::string::npos);
    CHECK(message.find("NVJITLINK_ERROR_PTX_COMPILE") != std::string::npos);
    CHECK(message.find("Unknown modifier '.bogus'") != std::string::npos);  // ptxas log
  }
}

TEST_CASE("nvJitLink rejects a PTX ISA newer than it knows", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  if (tessera::detail::nvjitlink_version() != "13.0") {
    WARN("PTX ISA 9.1 is only too new for nvJitLink 13.0; this is " << tessera::detail::nvjitlink_version());
    return;
  }
  try {
    tessera::detail::ptx_to_cubin(store_const_ptx("9.1", "sm_90"), "sm_90");
    FAIL("PTX .version 9.1 compiled");
  } catch (const tessera::Error& e) {
    std::string message = e.what();
    INFO(message);
    CHECK(message.find("9.1") != std::string::npos);
    CHECK(message.find("newer PTX ISA") != std::string::npos);
  }
}

TEST_CASE("ptx_to_cubin checks its arguments", "[nvjitlink]") {
  SKIP_WITHOUT_NVJITLINK();
  std::string ptx = store_const_ptx("9.0", "sm_90");
  CHECK_THROWS_AS(tessera::detail::ptx_to_cubin(ptx, "sm90"), tessera::Error);
  CHECK_THROWS_AS(tessera::detail::ptx_to_cubin(ptx, "compute_90"), tessera::Error);
  CHECK_THROWS_AS(tessera::detail::ptx_to_cubin(ptx, ""), tessera::Error);
  std::vector<std::string> extra = {"-no-such-option"};
  CHECK_THROWS_WITH(tessera::detail::ptx_to_cubin(ptx, "sm_90", extra),
                    Catch::Contains("-no-such-option"));
  // PTX for a newer target cannot be compiled for an older one.
  CHECK_THROWS_AS(tessera::detail::ptx_to_cubin(store_const_ptx("9.0", "sm_100a"), "sm_90"),
                  tessera::Error);
}
