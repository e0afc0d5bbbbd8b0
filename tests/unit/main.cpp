// main.cpp: the Catch2 entry point shared by all unit test files.
//
// Tests must not depend on the caller's environment: every TESSERA_* variable that changes what
// the library does (the target, dumps, IR printing) is removed before any test runs. The cache
// directory stays, since ctest gives each test run its own (tests/CMakeLists.txt); tests that
// need a variable set it themselves (scoped_env.h).
//
// `--backend=nvvm|tileir` (before Catch's own arguments) runs every test with that GPU back end as
// the default (TESSERA_BACKEND), so that the suite runs through either; kernels Tile IR cannot
// express take the NVVM backend then, as they do for a user who sets the variable.
//
// `--tileir-targets` also compiles every kernel the tests launch or compile through tileiras for
// sm_90 and sm_100a (tileir_targets.h) and fails the run when one that Tile IR can express does
// not compile; it prints "tileir targets skipped: " and runs nothing where tileiras is not installed.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "tileir_targets.h"

extern char** environ;

int main(int argc, char* argv[]) {
  std::vector<std::string> drop;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("TESSERA_", 0) == 0 && name != "TESSERA_CACHE_DIR") drop.push_back(name);
  }
  for (const std::string& name : drop) unsetenv(name.c_str());
  std::vector<char*> args;
  bool tileir_targets = false;
  for (int i = 0; i < argc; ++i) {
    constexpr std::string_view kBackend = "--backend=";
    if (i > 0 && std::string_view(argv[i]).starts_with(kBackend))
      setenv("TESSERA_BACKEND", argv[i] + kBackend.size(), 1);
    else if (i > 0 && std::string_view(argv[i]) == "--tileir-targets")
      tileir_targets = true;
    else
      args.push_back(argv[i]);
  }
  auto run = [&] { return Catch::Session().run(static_cast<int>(args.size()), args.data()); };
  return tileir_targets ? tessera::testing::run_with_tileir_targets(run) : run();
}
