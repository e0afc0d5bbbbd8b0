// cache_stress <dir> <name> <iterations>: stores and loads one cache entry (that of a kernel named
// <name>) over and over, to be run as several processes at once against the same directory (see
// tests/unit/CMakeLists.txt.runtime). Each iteration stores a "cubin" and a "ptx" (contents
// derived from the name alone, as a real compile's would be) and loads both back. With
// <iterations> 0 it only loads, to check the entry the others left behind. Exits 0 iff every store
// succeeded and every load returned exactly the stored bytes; prints one summary line either way.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "cache/cache_key.h"
#include "cache/disk_cache.h"

namespace {

std::vector<char> contents(const std::string& name, const std::string& kind, size_t size) {
  std::seed_seq seed(name.begin(), name.end());
  std::mt19937_64 rng(seed);
  rng.discard(kind.size() * 7919);
  std::vector<char> bytes(size);
  for (char& b : bytes) b = static_cast<char>(rng());
  return bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s <dir> <name> <iterations>\n", argv[0]);
    return 2;
  }
  try {
    std::string dir = argv[1], name = argv[2];
    tessera::detail::CacheKeyMaterial material;
    material.kernel = name;
    material.source_sha256 = tessera::detail::sha256_hex(name);
    material.target = "sm_90";
    int iterations = std::atoi(argv[3]);
    if (iterations < 0) iterations = 0;
    tessera::detail::DiskCache cache(dir);
    const std::vector<std::pair<std::string, std::vector<char>>> files = {
        {"cubin", contents(name, "cubin", 256 * 1024)},
        {"ptx", contents(name, "ptx", 96 * 1024 + 17)},
    };
    int bad_loads = 0, failed_stores = 0;
    if (iterations == 0) {
      for (const auto& [kind, bytes] : files) {
        auto loaded = cache.load(material, kind);
        if (!loaded || *loaded != bytes) ++bad_loads;
      }
    }
    for (int i = 0; i < iterations; ++i) {
      for (const auto& [kind, bytes] : files) {
        if (!cache.store(material, kind, bytes, "{\"writer\": " + std::to_string(::getpid()) + "}")) {
          ++failed_stores;
          std::fprintf(stderr, "store failed: %s\n", cache.last_error().c_str());
        }
        auto loaded = cache.load(material, kind);
        if (!loaded || *loaded != bytes) ++bad_loads;
      }
    }
    auto stats = cache.stats();
    std::printf(
        "cache_stress pid %d: %d iterations, %d bad loads, %d failed stores (hits %llu, misses "
        "%llu, corrupt %llu)\n",
        static_cast<int>(::getpid()), iterations, bad_loads, failed_stores,
        static_cast<unsigned long long>(stats.hits), static_cast<unsigned long long>(stats.misses),
        static_cast<unsigned long long>(stats.corrupt));
    return bad_loads == 0 && failed_stores == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cache_stress: %s\n", e.what());
    return 2;
  }
}
