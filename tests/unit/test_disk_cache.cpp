// Tests for runtime/disk_cache.h and runtime/cache_key.h: round trips, hit/miss/corrupt counting,
// recovery from truncated, flipped and missing files, the default directory's environment rules,
// argument checks, and many threads storing one key. The two-process test is a ctest test that
// runs tests/tools/cache_stress twice at once (see tests/unit/CMakeLists.txt.runtime). Each test
// works in its own fresh directory under the system temp directory.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "build_id.h"
#include "cache_key.h"
#include "disk_cache.h"
#include "scoped_env.h"
#include "tessera/errors.h"

namespace fs = std::filesystem;
using tessera::DiskCache;
using test_env::EnvGuard;
using test_env::TempDir;

namespace {

std::vector<char> payload(size_t size, unsigned seed) {
  std::vector<char> bytes(size);
  std::mt19937 rng(seed);
  for (char& b : bytes) b = static_cast<char>(rng());
  return bytes;
}

const std::string kKey = tessera::make_cache_key({"kernel add", "sm_90", "test"});

}  // namespace

TEST_CASE("disk cache stores and loads an entry", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(10000, 1);
  REQUIRE(cache.store(kKey, "cubin", bytes, R"({"kernel": "add", "target": "sm_90"})"));
  CHECK(fs::exists(tmp.path / kKey / "cubin"));
  CHECK(fs::exists(tmp.path / kKey / "metadata.json"));

  auto loaded = cache.load(kKey, "cubin");
  REQUIRE(loaded);
  CHECK(*loaded == bytes);

  auto metadata = cache.load_metadata(kKey);
  REQUIRE(metadata);
  CHECK(metadata->find("\"kernel\": \"add\"") != std::string::npos);
  CHECK(metadata->find("\"size\": 10000") != std::string::npos);
  CHECK(metadata->find(tessera::sha256_hex(bytes)) != std::string::npos);

  // No temp files are left behind.
  for (const auto& entry : fs::directory_iterator(tmp.path / kKey))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("disk cache counts hits and misses", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  CHECK_FALSE(cache.load(kKey, "cubin"));  // nothing stored yet
  REQUIRE(cache.store(kKey, "cubin", payload(100, 2)));
  CHECK(cache.load(kKey, "cubin"));
  CHECK(cache.load(kKey, "cubin"));
  CHECK_FALSE(cache.load(kKey, "ptx"));  // entry exists, kind does not
  auto stats = cache.stats();
  CHECK(stats.hits == 2);
  CHECK(stats.misses == 2);
  CHECK(stats.corrupt == 0);
  CHECK(stats.stores == 1);
  CHECK(stats.store_failures == 0);

  // A second cache object over the same directory (another process, later) hits too.
  DiskCache other(tmp.path.string());
  CHECK(other.load(kKey, "cubin"));
  CHECK(other.stats().hits == 1);
}

TEST_CASE("disk cache keeps several kinds and merges metadata", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto cubin = payload(3000, 3);
  auto ptx = payload(5000, 4);
  REQUIRE(cache.store(kKey, "cubin", cubin, R"({"kernel": "add", "compile_ms": 12.5})"));
  REQUIRE(cache.store(kKey, "ptx", ptx, R"({"ptx_version": "9.0"})"));
  CHECK(cache.load(kKey, "cubin") == cubin);
  CHECK(cache.load(kKey, "ptx") == ptx);
  auto metadata = *cache.load_metadata(kKey);
  CHECK(metadata.find("\"kernel\": \"add\"") != std::string::npos);
  CHECK(metadata.find("\"ptx_version\": \"9.0\"") != std::string::npos);

  // Damage one kind: the other still loads.
  fs::resize_file(tmp.path / kKey / "ptx", 10);
  CHECK_FALSE(cache.load(kKey, "ptx"));
  CHECK(cache.load(kKey, "cubin") == cubin);
  CHECK(cache.stats().corrupt == 1);
}

TEST_CASE("disk cache drops a truncated file and recovers", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(4096, 5);
  REQUIRE(cache.store(kKey, "cubin", bytes));
  fs::resize_file(tmp.path / kKey / "cubin", 1000);

  CHECK_FALSE(cache.load(kKey, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK(cache.stats().misses == 1);
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));  // the bad file was removed

  CHECK_FALSE(cache.load(kKey, "cubin"));  // now a plain miss
  CHECK(cache.stats().corrupt == 1);

  REQUIRE(cache.store(kKey, "cubin", bytes));  // the caller recompiles and stores again
  CHECK(cache.load(kKey, "cubin") == bytes);
}

TEST_CASE("disk cache detects a flipped byte", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(4096, 6);
  REQUIRE(cache.store(kKey, "cubin", bytes));
  {
    std::fstream f(tmp.path / kKey / "cubin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2000);
    char flipped = static_cast<char>(bytes[2000] ^ 0x01);
    f.write(&flipped, 1);
  }
  CHECK(fs::file_size(tmp.path / kKey / "cubin") == bytes.size());  // same size, other content
  CHECK_FALSE(cache.load(kKey, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));

  REQUIRE(cache.store(kKey, "cubin", bytes));
  CHECK(cache.load(kKey, "cubin") == bytes);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("disk cache treats a missing file or bad metadata as corrupt", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(512, 7);

  SECTION("file listed in metadata but gone") {
    REQUIRE(cache.store(kKey, "cubin", bytes));
    fs::remove(tmp.path / kKey / "cubin");
    CHECK_FALSE(cache.load(kKey, "cubin"));
    CHECK(cache.stats().corrupt == 1);
  }
  SECTION("metadata is not JSON") {
    REQUIRE(cache.store(kKey, "cubin", bytes));
    std::ofstream(tmp.path / kKey / "metadata.json") << "{ not json";
    CHECK_FALSE(cache.load(kKey, "cubin"));
    CHECK(cache.stats().corrupt == 1);
    CHECK_FALSE(fs::exists(tmp.path / kKey / "metadata.json"));
    CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));
  }
  SECTION("metadata is empty") {
    REQUIRE(cache.store(kKey, "cubin", bytes));
    fs::resize_file(tmp.path / kKey / "metadata.json", 0);
    CHECK_FALSE(cache.load(kKey, "cubin"));
    CHECK(cache.stats().corrupt == 1);
  }
  REQUIRE(cache.store(kKey, "cubin", bytes));
  CHECK(cache.load(kKey, "cubin") == bytes);
}

TEST_CASE("disk cache remove drops an entry", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  REQUIRE(cache.store(kKey, "cubin", payload(10, 8)));
  cache.remove(kKey);
  CHECK_FALSE(cache.load(kKey, "cubin"));
  CHECK_FALSE(cache.load_metadata(kKey));
  CHECK(cache.stats().corrupt == 0);
  cache.remove(tessera::make_cache_key({"never stored"}));  // no-op
}

TEST_CASE("disk cache store reports I/O errors without throwing", "[cache]") {
  TempDir tmp;
  std::ofstream(tmp.path / "plain-file") << "x";
  DiskCache cache((tmp.path / "plain-file" / "cache").string());  // cannot be a directory
  bool stored = true;
  CHECK_NOTHROW(stored = cache.store(kKey, "cubin", payload(10, 9)));
  CHECK_FALSE(stored);
  CHECK(cache.stats().store_failures == 1);
  CHECK(cache.stats().stores == 0);
  CHECK(cache.last_error().find(kKey) != std::string::npos);
  CHECK_FALSE(cache.load(kKey, "cubin"));
}

TEST_CASE("disk cache rejects bad arguments", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(10, 10);
  CHECK_THROWS_AS(cache.store("not-a-key", "cubin", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.load(std::string(64, 'A'), "cubin"), tessera::Error);  // upper case
  CHECK_THROWS_AS(cache.load("../" + kKey.substr(3), "cubin"), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, "", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, "metadata.json", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, "../cubin", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, ".lock", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, "cubin", bytes, "[1, 2]"), tessera::Error);
  CHECK_THROWS_AS(cache.store(kKey, "cubin", bytes, "{oops"), tessera::Error);
  CHECK_THROWS_AS(DiskCache(""), tessera::Error);
  CHECK(cache.store(kKey, "sm_90.cubin", bytes));
}

TEST_CASE("disk cache default_dir follows the environment", "[cache]") {
  EnvGuard env;
  env.set("TESSERA_CACHE_DIR", "/tmp/tessera-explicit");
  env.set("XDG_CACHE_HOME", "/tmp/xdg");
  env.set("HOME", "/tmp/home");
  CHECK(DiskCache::default_dir() == "/tmp/tessera-explicit");

  env.set("TESSERA_CACHE_DIR", "");  // empty counts as unset
  CHECK(DiskCache::default_dir() == "/tmp/xdg/tessera");

  env.set("TESSERA_CACHE_DIR", nullptr);
  CHECK(DiskCache::default_dir() == "/tmp/xdg/tessera");

  env.set("XDG_CACHE_HOME", nullptr);
  CHECK(DiskCache::default_dir() == "/tmp/home/.cache/tessera");

  env.set("XDG_CACHE_HOME", "relative/path");  // the XDG spec says to ignore relative paths
  CHECK(DiskCache::default_dir() == "/tmp/home/.cache/tessera");
}

TEST_CASE("disk cache survives many threads storing and loading one key", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(64 * 1024, 11);
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      DiskCache own(tmp.path.string());  // half share one object, half use their own
      DiskCache& c = (t % 2) ? own : cache;
      for (int i = 0; i < 50; ++i) {
        if (!c.store(kKey, "cubin", bytes)) ++bad;
        auto loaded = c.load(kKey, "cubin");
        if (!loaded || *loaded != bytes) ++bad;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(bad == 0);
  CHECK(cache.stats().corrupt == 0);
  CHECK(cache.load(kKey, "cubin") == bytes);
}

TEST_CASE("cache keys are deterministic SHA-256 hex", "[cache]") {
  CHECK(tessera::sha256_hex(std::string_view("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  auto key = tessera::make_cache_key({"ast", "spec", "sm_90", "llvm 22"});
  CHECK(key.size() == 64);
  CHECK(tessera::is_cache_key(key));
  CHECK(key == tessera::make_cache_key({"ast", "spec", "sm_90", "llvm 22"}));
  CHECK(key == tessera::CacheKeyBuilder().add("ast").add("spec").add("sm_90").add("llvm 22").hex());

  // Changing any one part changes the key.
  CHECK(key != tessera::make_cache_key({"ast2", "spec", "sm_90", "llvm 22"}));
  CHECK(key != tessera::make_cache_key({"ast", "spec2", "sm_90", "llvm 22"}));
  CHECK(key != tessera::make_cache_key({"ast", "spec", "sm_100a", "llvm 22"}));
  CHECK(key != tessera::make_cache_key({"ast", "spec", "sm_90", "llvm 23"}));
  CHECK(key != tessera::make_cache_key({"ast", "spec", "sm_90"}));
  CHECK(key != tessera::make_cache_key({"ast", "spec", "sm_90", "llvm 22", ""}));

  // Parts are length-prefixed, so moving a boundary changes the key.
  CHECK(tessera::make_cache_key({"ab", "c"}) != tessera::make_cache_key({"a", "bc"}));
  CHECK(tessera::make_cache_key({"abc"}) != tessera::make_cache_key({"ab", "c"}));
  CHECK(tessera::make_cache_key({"", "a"}) != tessera::make_cache_key({"a", ""}));
  CHECK(tessera::make_cache_key({}) != tessera::make_cache_key({""}));

  // Parts may hold any bytes, NULs included.
  using namespace std::string_view_literals;
  CHECK(tessera::make_cache_key({"a\0b"sv}) != tessera::make_cache_key({"a\0c"sv}));

  CHECK(tessera::CacheKeyBuilder().add(int64_t{42}).hex() == tessera::make_cache_key({"42"}));
  CHECK_FALSE(tessera::is_cache_key("abc"));
  CHECK_FALSE(tessera::is_cache_key(std::string(64, 'g')));
}

TEST_CASE("cache keys include the build ID of tessera's own code", "[cache]") {
  // A change to the compiler without a version bump must not reuse old cubins: the key has the
  // GNU build ID (or the file's identity) of the binary holding tessera.
  const std::string& id = tessera::self_build_id();
  CHECK_FALSE(id.empty());
  CHECK((id.starts_with("build-id:") || id.starts_with("file:")));
  CHECK(&tessera::self_build_id() == &id);
}
