// scoped_env.h: test helpers that undo themselves: a fresh directory under the system temp
// directory, removed at the end of the scope, environment variables set or unset for one scope,
// restored afterwards, and a disk cache of the scope's own. Assumes tests that change the
// environment do not run concurrently with code reading it (Catch2 runs test cases one at a time).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace test_env {

struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::random_device rd;
    path = std::filesystem::temp_directory_path() /
           ("tessera-test-" + std::to_string(rd()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

// Sets (value) or unsets (nullptr) environment variables for one scope.
struct EnvGuard {
  std::vector<std::pair<std::string, std::optional<std::string>>> saved;
  EnvGuard() = default;
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
  void set(const std::string& name, const char* value) {
    const char* old = std::getenv(name.c_str());
    saved.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
    if (value)
      ::setenv(name.c_str(), value, 1);
    else
      ::unsetenv(name.c_str());
  }
  ~EnvGuard() {
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) {
      if (it->second)
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else
        ::unsetenv(it->first.c_str());
    }
  }
};

// A disk cache of the scope's own: TESSERA_CACHE_DIR names a fresh directory until the scope ends
// (more variables may be set through `env` for the same scope).
struct FreshDiskCache {
  TempDir cache;
  EnvGuard env;
  FreshDiskCache() { env.set("TESSERA_CACHE_DIR", cache.path.c_str()); }
};

}  // namespace test_env
