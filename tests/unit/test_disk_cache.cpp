// Tests for runtime/cache/disk_cache.h and runtime/cache/cache_key.h: round trips, hit/miss/corrupt counting,
// recovery from truncated, flipped and missing files, entries that are another key's (swapped
// directories, moved bytes with rewritten checksums, edited metadata), the compile lock (single
// flight, timeout, a holder killed with SIGKILL, in forked children), stores that fail without
// killing the process (a child under a small RLIMIT_FSIZE), the default directory's environment
// rules, argument checks, and many threads storing one key. The two-process test is a ctest test
// that runs tests/tools/cache_stress twice at once (see tests/unit/CMakeLists.txt.runtime). Each
// test works in its own fresh directory under the system temp directory.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/build_id.h"
#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "scoped_env.h"
#include "tessera/errors.h"

namespace fs = std::filesystem;
using tessera::detail::CacheKeyMaterial;
using tessera::detail::CompileLock;
using tessera::detail::DiskCache;
using namespace std::chrono_literals;
using test_env::EnvGuard;
using test_env::TempDir;

namespace {

std::vector<char> payload(size_t size, unsigned seed) {
  std::vector<char> bytes(size);
  std::mt19937 rng(seed);
  for (char& b : bytes) b = static_cast<char>(rng());
  return bytes;
}

CacheKeyMaterial material(std::string kernel, std::string source = "ast of add") {
  return {std::move(kernel), tessera::detail::sha256_hex(source), "sm_90", "aa", "0.1", "build-id:1", "22.1", "12.9", ""};
}

const CacheKeyMaterial kAdd = material("add");
const std::string kKey = kAdd.key();

std::string read_text(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// `text` with its one occurrence of `from` replaced by `to`.
std::string replace_once(std::string text, const std::string& from, const std::string& to) {
  auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  REQUIRE(text.find(from, at + 1) == std::string::npos);
  return text.replace(at, from.size(), to);
}

// Forks a child that takes `m`'s compile lock in `dir`, then either holds it until killed
// (store_after < 0) or stores `bytes` as its cubin after `store_after` and exits. Returns once the
// child holds the lock.
pid_t spawn_lock_holder(const std::string& dir, const CacheKeyMaterial& m, const std::vector<char>& bytes,
                        std::chrono::milliseconds store_after) {
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // only _exit from here: the child must never return into Catch2
    ::close(ready[0]);
    int code = 1;
    try {
      DiskCache cache(dir);
      CompileLock lock = cache.lock_for_compile(m);
      char held = lock.held() ? 'y' : 'n';
      if (::write(ready[1], &held, 1) == 1 && lock.held()) {
        if (store_after < 0ms)
          for (;;) ::pause();
        std::this_thread::sleep_for(store_after);  // "compiling"
        code = cache.store(m, "cubin", bytes) ? 0 : 2;
      }
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  ::close(ready[1]);
  char held = 0;
  bool read = ::read(ready[0], &held, 1) == 1;
  ::close(ready[0]);
  if (!read || held != 'y') {
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    FAIL("the child could not take the compile lock");
  }
  return child;
}

}  // namespace

TEST_CASE("disk cache stores and loads an entry", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(10000, 1);
  REQUIRE(cache.store(kAdd, "cubin", bytes, R"({"kernel": "add", "target": "sm_90"})"));
  CHECK(fs::exists(tmp.path / kKey / "cubin"));
  CHECK(fs::exists(tmp.path / kKey / "metadata.json"));

  auto loaded = cache.load(kAdd, "cubin");
  REQUIRE(loaded);
  CHECK(*loaded == bytes);

  auto metadata = cache.load_metadata(kKey);
  REQUIRE(metadata);
  CHECK(metadata->find("\"kernel\": \"add\"") != std::string::npos);
  CHECK(metadata->find("\"size\": 10000") != std::string::npos);
  CHECK(metadata->find(DiskCache::file_digest(kKey, "cubin", bytes)) != std::string::npos);
  CHECK(metadata->find(kAdd.source_sha256) != std::string::npos);  // the material is recorded

  // No temp files are left behind.
  for (const auto& entry : fs::directory_iterator(tmp.path / kKey))
    CHECK(entry.path().filename().string().find(".tmp-") == std::string::npos);
}

TEST_CASE("disk cache counts hits and misses", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  CHECK_FALSE(cache.load(kAdd, "cubin"));  // nothing stored yet
  REQUIRE(cache.store(kAdd, "cubin", payload(100, 2)));
  CHECK(cache.load(kAdd, "cubin"));
  CHECK(cache.load(kAdd, "cubin"));
  CHECK_FALSE(cache.load(kAdd, "ptx"));  // entry exists, kind does not
  auto stats = cache.stats();
  CHECK(stats.hits == 2);
  CHECK(stats.misses == 2);
  CHECK(stats.corrupt == 0);
  CHECK(stats.stores == 1);
  CHECK(stats.store_failures == 0);

  // A second cache object over the same directory (another process, later) hits too.
  DiskCache other(tmp.path.string());
  CHECK(other.load(kAdd, "cubin"));
  CHECK(other.stats().hits == 1);
}

TEST_CASE("disk cache keeps several kinds and merges metadata", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto cubin = payload(3000, 3);
  auto ptx = payload(5000, 4);
  REQUIRE(cache.store(kAdd, "cubin", cubin, R"({"kernel": "add", "compile_ms": 12.5})"));
  REQUIRE(cache.store(kAdd, "ptx", ptx, R"({"ptx_version": "9.0"})"));
  CHECK(cache.load(kAdd, "cubin") == cubin);
  CHECK(cache.load(kAdd, "ptx") == ptx);
  auto metadata = *cache.load_metadata(kKey);
  CHECK(metadata.find("\"kernel\": \"add\"") != std::string::npos);
  CHECK(metadata.find("\"ptx_version\": \"9.0\"") != std::string::npos);

  // Damage one kind: the other still loads.
  fs::resize_file(tmp.path / kKey / "ptx", 10);
  CHECK_FALSE(cache.load(kAdd, "ptx"));
  CHECK(cache.load(kAdd, "cubin") == cubin);
  CHECK(cache.stats().corrupt == 1);
}

TEST_CASE("disk cache drops a truncated file and recovers", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(4096, 5);
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  fs::resize_file(tmp.path / kKey / "cubin", 1000);

  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK(cache.stats().misses == 1);
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));  // the bad file was removed

  CHECK_FALSE(cache.load(kAdd, "cubin"));  // now a plain miss
  CHECK(cache.stats().corrupt == 1);

  REQUIRE(cache.store(kAdd, "cubin", bytes));  // the caller recompiles and stores again
  CHECK(cache.load(kAdd, "cubin") == bytes);
}

TEST_CASE("disk cache detects a flipped byte", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(4096, 6);
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  {
    std::fstream f(tmp.path / kKey / "cubin", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2000);
    char flipped = static_cast<char>(bytes[2000] ^ 0x01);
    f.write(&flipped, 1);
  }
  CHECK(fs::file_size(tmp.path / kKey / "cubin") == bytes.size());  // same size, other content
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));

  REQUIRE(cache.store(kAdd, "cubin", bytes));
  CHECK(cache.load(kAdd, "cubin") == bytes);
  CHECK(cache.stats().hits == 1);
}

TEST_CASE("disk cache treats a missing file or bad metadata as corrupt", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(512, 7);

  SECTION("file listed in metadata but gone") {
    REQUIRE(cache.store(kAdd, "cubin", bytes));
    fs::remove(tmp.path / kKey / "cubin");
    CHECK_FALSE(cache.load(kAdd, "cubin"));
    CHECK(cache.stats().corrupt == 1);
  }
  SECTION("metadata is not JSON") {
    REQUIRE(cache.store(kAdd, "cubin", bytes));
    std::ofstream(tmp.path / kKey / "metadata.json") << "{ not json";
    CHECK_FALSE(cache.load(kAdd, "cubin"));
    CHECK(cache.stats().corrupt == 1);
    CHECK_FALSE(fs::exists(tmp.path / kKey / "metadata.json"));
    CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));
  }
  SECTION("metadata is empty") {
    REQUIRE(cache.store(kAdd, "cubin", bytes));
    fs::resize_file(tmp.path / kKey / "metadata.json", 0);
    CHECK_FALSE(cache.load(kAdd, "cubin"));
    CHECK(cache.stats().corrupt == 1);
  }
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  CHECK(cache.load(kAdd, "cubin") == bytes);
}

TEST_CASE("disk cache records the key material and checks it on load", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(2000, 12);
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  auto metadata = *cache.load_metadata(kKey);
  CHECK(metadata.find("\"format\": 2") != std::string::npos);
  CHECK(metadata.find("\"key\": \"" + kKey + "\"") != std::string::npos);
  CHECK(metadata.find("\"source_sha256\": \"" + kAdd.source_sha256 + "\"") != std::string::npos);
  CHECK(metadata.find("\"build_id\": \"build-id:1\"") != std::string::npos);

  // Every field is part of the key.
  std::vector<CacheKeyMaterial> others(9, kAdd);
  others[0].kernel = "mul";
  others[1].source_sha256 = tessera::detail::sha256_hex(std::string_view("other ast"));
  others[2].target = "sm_100a";
  others[3].variant = "ac";
  others[4].tessera_version = "0.2";
  others[5].build_id = "build-id:2";
  others[6].llvm_version = "23.0";
  others[7].nvjitlink_version = "13.0";
  others[8].nvrtc_version = "12.9";
  for (const auto& other : others) {
    CHECK(other.key() != kKey);
    CHECK_FALSE(cache.load(other, "cubin"));
  }
  CHECK(cache.stats().corrupt == 0);  // other keys: plain misses
  CHECK(cache.load(kAdd, "cubin") == bytes);
}

TEST_CASE("disk cache drops entries swapped between two keys", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto swap_and_check = [&](const CacheKeyMaterial& a, const CacheKeyMaterial& b) {
    REQUIRE(a.key() != b.key());
    auto bytes_a = payload(3000, 13), bytes_b = payload(3000, 14);
    REQUIRE(cache.store(a, "cubin", bytes_a));
    REQUIRE(cache.store(b, "cubin", bytes_b));
    fs::rename(tmp.path / a.key(), tmp.path / "swap");
    fs::rename(tmp.path / b.key(), tmp.path / a.key());
    fs::rename(tmp.path / "swap", tmp.path / b.key());

    CHECK_FALSE(cache.load(a, "cubin"));
    CHECK_FALSE(cache.load(b, "cubin"));
    CHECK(cache.stats().corrupt == 2);
    CHECK(cache.stats().hits == 0);
    for (const auto& m : {a, b}) {  // dropped whole, lock files kept
      CHECK_FALSE(fs::exists(tmp.path / m.key() / "cubin"));
      CHECK_FALSE(fs::exists(tmp.path / m.key() / "metadata.json"));
      CHECK(fs::exists(tmp.path / m.key() / ".lock"));
    }
    // The callers compile again and store.
    REQUIRE(cache.store(a, "cubin", bytes_a));
    REQUIRE(cache.store(b, "cubin", bytes_b));
    CHECK(cache.load(a, "cubin") == bytes_a);
    CHECK(cache.load(b, "cubin") == bytes_b);
  };
  SECTION("two kernels") { swap_and_check(material("add"), material("mul", "ast of mul")); }
  SECTION("two kernels of one name") { swap_and_check(material("add"), material("add", "ast of another add")); }
  SECTION("one kernel, two variants") {
    CacheKeyMaterial whole = kAdd;
    whole.variant = "aa/whole";
    swap_and_check(kAdd, whole);
  }
}

TEST_CASE("disk cache store replaces a foreign entry in its directory", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  const CacheKeyMaterial mul = material("mul", "ast of mul");
  REQUIRE(cache.store(mul, "cubin", payload(100, 15)));
  fs::rename(tmp.path / mul.key(), tmp.path / kKey);  // add's directory now holds mul's entry
  auto ptx = payload(200, 16);
  REQUIRE(cache.store(kAdd, "ptx", ptx));
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));  // mul's cubin went with its metadata
  CHECK(cache.load(kAdd, "ptx") == ptx);
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK(cache.stats().corrupt == 0);
}

TEST_CASE("disk cache rejects bytes whose checksum was rewritten to match", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  const CacheKeyMaterial mul = material("mul", "ast of mul");
  auto add_bytes = payload(3000, 17), mul_bytes = payload(3000, 18);
  REQUIRE(cache.store(kAdd, "cubin", add_bytes));
  REQUIRE(cache.store(mul, "cubin", mul_bytes));
  fs::copy_file(tmp.path / mul.key() / "cubin", tmp.path / kKey / "cubin", fs::copy_options::overwrite_existing);
  const fs::path metadata = tmp.path / kKey / "metadata.json";
  const std::string recorded = DiskCache::file_digest(kKey, "cubin", add_bytes);

  SECTION("to the plain SHA-256 of the new bytes") {
    write_text(metadata, replace_once(read_text(metadata), recorded, tessera::detail::sha256_hex(mul_bytes)));
  }
  SECTION("to the digest the other entry records") {
    write_text(metadata, replace_once(read_text(metadata), recorded, DiskCache::file_digest(mul.key(), "cubin", mul_bytes)));
  }
  SECTION("to the digest of the bytes under another kind") {
    write_text(metadata, replace_once(read_text(metadata), recorded, DiskCache::file_digest(kKey, "ptx", mul_bytes)));
  }
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));
  CHECK(cache.load(mul, "cubin") == mul_bytes);  // the other entry is untouched
}

TEST_CASE("disk cache drops an entry whose metadata names another key", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(1000, 19);
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  const fs::path metadata = tmp.path / kKey / "metadata.json";
  std::string text = read_text(metadata);

  SECTION("a field of the material") { text = replace_once(text, "\"sm_90\"", "\"sm_100a\""); }
  SECTION("the kernel's name") { text = replace_once(text, "\"kernel\": \"add\"", "\"kernel\": \"mul\""); }
  SECTION("a missing field") { text = replace_once(text, "\"nvrtc_version\"", "\"nvrtc\""); }
  SECTION("no material") { text = replace_once(text, "\"material\"", "\"materials\""); }
  SECTION("the key") { text = replace_once(text, kKey, material("mul").key()); }
  SECTION("the format") { text = replace_once(text, "\"format\": 2", "\"format\": 1"); }
  write_text(metadata, text);
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK(cache.stats().corrupt == 1);
  CHECK_FALSE(fs::exists(metadata));
  CHECK_FALSE(fs::exists(tmp.path / kKey / "cubin"));
  REQUIRE(cache.store(kAdd, "cubin", bytes));
  CHECK(cache.load(kAdd, "cubin") == bytes);
}

TEST_CASE("disk cache compile lock makes concurrent compilers compile once", "[cache]") {
  TempDir tmp;
  auto bytes = payload(50000, 20);
  constexpr int kThreads = 4;
  std::atomic<int> compiles{0}, waits{0}, bad{0};
  std::latch all_missed(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      DiskCache cache(tmp.path.string());  // one per thread: the lock excludes other processes too
      auto loaded = cache.load(kAdd, "cubin");
      all_missed.arrive_and_wait();
      if (!loaded) {
        CompileLock lock = cache.lock_for_compile(kAdd);
        if (!lock.held()) ++bad;
        if (lock.waited()) ++waits;
        loaded = cache.load(kAdd, "cubin");
        if (!loaded) {
          ++compiles;
          std::this_thread::sleep_for(100ms);
          if (!cache.store(kAdd, "cubin", bytes)) ++bad;
          loaded = bytes;
        }
      }
      if (*loaded != bytes) ++bad;
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(bad == 0);
  CHECK(compiles == 1);
  CHECK(waits == kThreads - 1);
}

TEST_CASE("disk cache compile lock waits up to its timeout", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  CompileLock first = cache.lock_for_compile(kAdd);
  REQUIRE(first.held());
  CHECK_FALSE(first.waited());

  auto t0 = std::chrono::steady_clock::now();
  CompileLock second = cache.lock_for_compile(kAdd, 150ms);
  CHECK(std::chrono::steady_clock::now() - t0 >= 150ms);
  CHECK_FALSE(second.held());
  CHECK(second.waited());
  CHECK(cache.stats().lock_waits == 1);
  CHECK(cache.stats().lock_failures == 1);
  CHECK(cache.last_error().find("timed out") != std::string::npos);

  CHECK(cache.lock_for_compile(material("mul"), 0ms).held());  // other keys are not held up
  REQUIRE(cache.store(kAdd, "cubin", payload(10, 21)));  // the holder can store
  cache.remove(kKey);
  CHECK(fs::exists(tmp.path / kKey / ".compile-lock"));  // never removed while it may be held

  CompileLock moved = std::move(first);
  CHECK(moved.held());
  CHECK_FALSE(cache.lock_for_compile(kAdd, 0ms).held());
  moved = CompileLock();  // released
  CHECK(cache.lock_for_compile(kAdd, 0ms).held());
}

TEST_CASE("disk cache compile lock waits for another process's compile", "[cache]") {
  TempDir tmp;
  auto bytes = payload(20000, 22);
  pid_t child = spawn_lock_holder(tmp.path.string(), kAdd, bytes, 300ms);
  DiskCache cache(tmp.path.string());
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CompileLock lock = cache.lock_for_compile(kAdd, 30s);
  CHECK(lock.held());
  CHECK(lock.waited());
  CHECK(cache.load(kAdd, "cubin") == bytes);  // the child's; nothing to compile here
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("disk cache compile lock of a killed process is taken over", "[cache]") {
  TempDir tmp;
  pid_t child = spawn_lock_holder(tmp.path.string(), kAdd, {}, -1ms);
  DiskCache cache(tmp.path.string());
  CHECK_FALSE(cache.lock_for_compile(kAdd, 100ms).held());  // the child holds it
  REQUIRE(::kill(child, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  auto t0 = std::chrono::steady_clock::now();
  CompileLock lock = cache.lock_for_compile(kAdd, 30s);
  CHECK(lock.held());
  CHECK(std::chrono::steady_clock::now() - t0 < 5s);
  CHECK_FALSE(cache.load(kAdd, "cubin"));  // it stored nothing: compile here
}

TEST_CASE("disk cache store past the file-size limit fails without killing the process", "[cache]") {
  TempDir tmp;
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // only _exit from here
    int code = 0;
    try {
      rlimit limit{};
      ::getrlimit(RLIMIT_FSIZE, &limit);
      limit.rlim_cur = 8192;
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(100);
      // A thread that does not block SIGXFSZ: a signal meant for the process could land there.
      std::atomic<bool> done{false};
      std::thread bystander([&] {
        while (!done) std::this_thread::sleep_for(1ms);
      });
      DiskCache cache(tmp.path.string());
      auto small = payload(100, 23);
      if (cache.store(kAdd, "cubin", payload(64 * 1024, 24))) code |= 1;
      if (!cache.store(kAdd, "ptx", small)) code |= 2;  // what fits is still stored
      if (cache.stats().store_failures != 1) code |= 4;
      if (cache.last_error().find("File too large") == std::string::npos) code |= 8;
      if (cache.load(kAdd, "ptx") != small || cache.load(kAdd, "cubin")) code |= 16;
      sigset_t pending, mask;
      ::sigpending(&pending);
      ::pthread_sigmask(SIG_SETMASK, nullptr, &mask);
      if (sigismember(&pending, SIGXFSZ) || sigismember(&mask, SIGXFSZ)) code |= 32;
      done = true;
      bystander.join();
    } catch (...) {
      code = 101;
    }
    ::_exit(code);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  INFO("wait status " << status);
  REQUIRE(WIFEXITED(status));  // not killed by SIGXFSZ
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("disk cache store fails on a directory it may not write", "[cache]") {
  if (::geteuid() == 0) {
    WARN("running as root: permissions are not enforced, skipped");
    return;
  }
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  REQUIRE(cache.store(kAdd, "cubin", payload(10, 25)));
  fs::permissions(tmp.path / kKey, fs::perms::owner_read | fs::perms::owner_exec);
  CHECK_FALSE(cache.store(kAdd, "ptx", payload(10, 26)));
  CHECK(cache.stats().store_failures == 1);
  CHECK(cache.load(kAdd, "cubin") == payload(10, 25));
  fs::permissions(tmp.path / kKey, fs::perms::owner_all);
}

TEST_CASE("disk cache remove drops an entry", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  REQUIRE(cache.store(kAdd, "cubin", payload(10, 8)));
  cache.remove(kKey);
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CHECK_FALSE(cache.load_metadata(kKey));
  CHECK(cache.stats().corrupt == 0);
  cache.remove(material("never stored").key());  // no-op
}

TEST_CASE("disk cache store reports I/O errors without throwing", "[cache]") {
  TempDir tmp;
  std::ofstream(tmp.path / "plain-file") << "x";
  DiskCache cache((tmp.path / "plain-file" / "cache").string());  // cannot be a directory
  bool stored = true;
  CHECK_NOTHROW(stored = cache.store(kAdd, "cubin", payload(10, 9)));
  CHECK_FALSE(stored);
  CHECK(cache.stats().store_failures == 1);
  CHECK(cache.stats().stores == 0);
  CHECK(cache.last_error().find(kKey) != std::string::npos);
  CHECK_FALSE(cache.load(kAdd, "cubin"));
  CompileLock lock;
  CHECK_NOTHROW(lock = cache.lock_for_compile(kAdd, 0ms));
  CHECK_FALSE(lock.held());  // the caller compiles all the same
  CHECK(cache.stats().lock_failures == 1);
}

TEST_CASE("disk cache rejects bad arguments", "[cache]") {
  TempDir tmp;
  DiskCache cache(tmp.path.string());
  auto bytes = payload(10, 10);
  CHECK_THROWS_AS(cache.entry_dir("not-a-key"), tessera::Error);
  CHECK_THROWS_AS(cache.load_metadata(std::string(64, 'A')), tessera::Error);  // upper case
  CHECK_THROWS_AS(cache.remove("../" + kKey.substr(3)), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, "", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, "metadata.json", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, "../cubin", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, ".lock", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, ".compile-lock", bytes), tessera::Error);
  CHECK_THROWS_AS(cache.load(kAdd, "../cubin"), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, "cubin", bytes, "[1, 2]"), tessera::Error);
  CHECK_THROWS_AS(cache.store(kAdd, "cubin", bytes, "{oops"), tessera::Error);
  CHECK_THROWS_AS(DiskCache(""), tessera::Error);
  CHECK(cache.store(kAdd, "sm_90.cubin", bytes));
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
        if (!c.store(kAdd, "cubin", bytes)) ++bad;
        auto loaded = c.load(kAdd, "cubin");
        if (!loaded || *loaded != bytes) ++bad;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  CHECK(bad == 0);
  CHECK(cache.stats().corrupt == 0);
  CHECK(cache.load(kAdd, "cubin") == bytes);
}

TEST_CASE("cache keys are deterministic SHA-256 hex", "[cache]") {
  CHECK(tessera::detail::sha256_hex(std::string_view("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

  auto key = tessera::detail::make_cache_key({"ast", "spec", "sm_90", "llvm 22"});
  CHECK(key.size() == 64);
  CHECK(tessera::detail::is_cache_key(key));
  CHECK(key == tessera::detail::make_cache_key({"ast", "spec", "sm_90", "llvm 22"}));
  CHECK(key == tessera::detail::CacheKeyBuilder().add("ast").add("spec").add("sm_90").add("llvm 22").hex());

  // Changing any one part changes the key.
  CHECK(key != tessera::detail::make_cache_key({"ast2", "spec", "sm_90", "llvm 22"}));
  CHECK(key != tessera::detail::make_cache_key({"ast", "spec2", "sm_90", "llvm 22"}));
  CHECK(key != tessera::detail::make_cache_key({"ast", "spec", "sm_100a", "llvm 22"}));
  CHECK(key != tessera::detail::make_cache_key({"ast", "spec", "sm_90", "llvm 23"}));
  CHECK(key != tessera::detail::make_cache_key({"ast", "spec", "sm_90"}));
  CHECK(key != tessera::detail::make_cache_key({"ast", "spec", "sm_90", "llvm 22", ""}));

  // Parts are length-prefixed, so moving a boundary changes the key.
  CHECK(tessera::detail::make_cache_key({"ab", "c"}) != tessera::detail::make_cache_key({"a", "bc"}));
  CHECK(tessera::detail::make_cache_key({"abc"}) != tessera::detail::make_cache_key({"ab", "c"}));
  CHECK(tessera::detail::make_cache_key({"", "a"}) != tessera::detail::make_cache_key({"a", ""}));
  CHECK(tessera::detail::make_cache_key({}) != tessera::detail::make_cache_key({""}));

  // Parts may hold any bytes, NULs included.
  using namespace std::string_view_literals;
  CHECK(tessera::detail::make_cache_key({"a\0b"sv}) != tessera::detail::make_cache_key({"a\0c"sv}));

  CHECK(tessera::detail::CacheKeyBuilder().add(int64_t{42}).hex() == tessera::detail::make_cache_key({"42"}));
  CHECK_FALSE(tessera::detail::is_cache_key("abc"));
  CHECK_FALSE(tessera::detail::is_cache_key(std::string(64, 'g')));
}

TEST_CASE("cache keys include the build ID of tessera's own code", "[cache]") {
  // A change to the compiler without a version bump must not reuse old cubins: the key has the
  // GNU build ID (or the file's identity) of the binary holding tessera.
  const std::string& id = tessera::detail::self_build_id();
  CHECK_FALSE(id.empty());
  CHECK((id.starts_with("build-id:") || id.starts_with("file:")));
  CHECK(&tessera::detail::self_build_id() == &id);
}
