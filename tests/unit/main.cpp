// main.cpp: the Catch2 entry point shared by all unit test files.
//
// Tests must not depend on the caller's environment: every TESSERA_* variable that changes what
// the library does (the target, dumps, IR printing) is removed before any test runs. The cache
// directory stays, since ctest gives each test run its own (tests/CMakeLists.txt); tests that
// need a variable set it themselves (scoped_env.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

extern char** environ;

int main(int argc, char* argv[]) {
  std::vector<std::string> drop;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    std::string name = entry.substr(0, entry.find('='));
    if (name.rfind("TESSERA_", 0) == 0 && name != "TESSERA_CACHE_DIR") drop.push_back(name);
  }
  for (const std::string& name : drop) unsetenv(name.c_str());
  return Catch::Session().run(argc, argv);
}
