// Tests for runtime/driver/dynamic_library.h: a library that does not load, and an entry point a
// library lacks, become the binding's error (never a crash or an exception); one that does binds.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "driver/dynamic_library.h"

using tessera::detail::DynamicLibrary;

TEST_CASE("a library that does not load says what was tried", "[dynamic_library]") {
  const std::vector<std::string> names{"libtessera-missing-a.so", "libtessera-missing-b.so"};
  DynamicLibrary lib("the missing library", names);
  CHECK_FALSE(lib.loaded());
  CHECK_FALSE(lib.ok());
  CHECK_THAT(lib.error(), Catch::StartsWith("cannot load the missing library:"));
  CHECK_THAT(lib.error(), Catch::Contains("libtessera-missing-a.so") && Catch::Contains("libtessera-missing-b.so"));
  int (*fn)(int) = reinterpret_cast<int (*)(int)>(1);
  lib.bind(fn, "abs");
  CHECK(fn == nullptr);
}

TEST_CASE("entry points bind, and the first missing one is the error", "[dynamic_library]") {
  const std::vector<std::string> names{"libtessera-missing.so", "libc.so.6"};
  DynamicLibrary lib("libc", names);
  REQUIRE(lib.loaded());
  int (*abs_fn)(int) = nullptr;
  lib.bind(abs_fn, "abs", "tessera_no_such_versioned_abs");  // falls back to the plain name
  REQUIRE(abs_fn);
  CHECK(abs_fn(-5) == 5);
  CHECK(lib.ok());
  void (*missing)() = nullptr;
  lib.bind(missing, "tessera_no_such_function");
  lib.bind(missing, "tessera_another_missing_function");
  CHECK(missing == nullptr);
  CHECK(lib.error() == "libc has no entry point tessera_no_such_function");
}
