// DiskCache: compiled artifacts (cubin, ptx, ...) on disk, one directory per cache key, each entry
// proving which kernel it holds.
//
//   <dir>/<key>/<kind>           the bytes, e.g. <key>/cubin and <key>/ptx
//   <dir>/<key>/metadata.json    {"format":2, "key":<key>, "material":{..CacheKeyMaterial..},
//                                 "files":{kind:{"size":N,"sha256":hex}}, "info":{..}}
//   <dir>/<key>/.lock            serializes writers of one key (flock), never deleted
//   <dir>/<key>/.compile-lock    held by the process compiling the key (lock_for_compile)
//
// <key> is CacheKeyMaterial::key() (cache_key.h) and the metadata records the material itself. A
// file's "sha256" is not the plain hash of its bytes but that of the key, the kind and the bytes
// (file_digest()), so bytes moved from another entry or another kind never match, even where
// their metadata record was moved or rewritten with them. load() checks all of it against the
// material the caller asks for: the metadata's format, its key (which must be the directory's
// name), its material (field by field), the file's size and digest. Any mismatch makes the entry
// corrupt: it is counted, removed (after re-checking under the writers' lock, so a concurrent
// writer's fresh entry is never dropped) and reported as a miss, and the caller compiles again.
// A kind the entry does not list is a plain miss.
//
// Every file is written to a unique temp file in the same directory and renamed into place, the
// metadata last, so readers never see a half-written file. store() never throws for I/O failures
// (no space, no permission, a file-size limit: SIGXFSZ is kept from killing the process): it
// records the error and returns false, since a cache that cannot write must not fail a launch.
//
// Single flight across processes: a process that misses takes the key's compile lock
// (lock_for_compile) before compiling, loads again (the holder before it may have stored the
// entry meanwhile) and releases the lock once it has stored. Others wait for it, up to a bound;
// flock locks die with their process, so a killed compiler never blocks the others.
//
// Invalid arguments (a key that is not 64 hex chars, a bad kind name, metadata that is not a JSON
// object) throw tessera::Error. Assumes a POSIX file system with atomic rename and flock.
// Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/cache_key.h"

namespace tessera::detail {

struct DiskCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;          // every load that returned nothing, corrupt ones included
  std::uint64_t corrupt = 0;         // loads that found a bad or foreign entry and dropped it
  std::uint64_t stores = 0;          // successful stores
  std::uint64_t store_failures = 0;  // stores that hit an I/O error (see last_error())
  std::uint64_t lock_waits = 0;      // lock_for_compile calls that found the lock taken
  std::uint64_t lock_failures = 0;   // lock_for_compile calls that returned without the lock
};

// The key's compile lock while held (see DiskCache::lock_for_compile); released by the destructor.
class CompileLock {
public:
  CompileLock() = default;
  CompileLock(CompileLock&& other) noexcept;
  CompileLock& operator=(CompileLock&& other) noexcept;
  CompileLock(const CompileLock&) = delete;
  CompileLock& operator=(const CompileLock&) = delete;
  ~CompileLock();

  // False if the wait timed out or the lock file could not be made: compile all the same.
  bool held() const { return fd_ >= 0; }
  // Whether another holder was met (so the entry may be there now).
  bool waited() const { return waited_; }

private:
  friend class DiskCache;
  int fd_ = -1;
  bool waited_ = false;
};

class DiskCache {
public:
  // How long lock_for_compile waits by default: longer than compiling any kernel should take; a
  // holder that is slower only costs a second compile.
  static constexpr std::chrono::milliseconds kCompileWait{60'000};

  // `dir` need not exist yet; it is created on the first store.
  explicit DiskCache(std::string dir);

  // $TESSERA_CACHE_DIR if set, else $XDG_CACHE_HOME/tessera (if absolute), else
  // $HOME/.cache/tessera. Throws tessera::Error if none of these can be determined.
  static std::string default_dir();

  // SHA-256 over the key, the kind and the bytes: what metadata.json records for a file.
  static std::string file_digest(const std::string& key, std::string_view kind,
                                 std::span<const char> bytes);

  const std::string& dir() const { return dir_; }
  std::string entry_dir(const std::string& key) const;  // <dir>/<key>

  // The verified bytes of <material.key()>/<kind>, or nullopt on a miss.
  std::optional<std::vector<char>> load(const CacheKeyMaterial& material, std::string_view kind);

  // Writes <key>/<kind> and records it, with the material, in metadata.json, merging
  // `metadata_json` (a JSON object, may be empty) into the entry's "info". Other kinds already
  // stored for the same material are kept. Returns false (and records last_error()) on an I/O error.
  bool store(const CacheKeyMaterial& material, std::string_view kind, std::span<const char> bytes,
             std::string_view metadata_json = {});

  // Takes the key's compile lock, waiting up to `timeout` while another thread or process holds
  // it. Never throws for I/O errors; see CompileLock::held().
  CompileLock lock_for_compile(const CacheKeyMaterial& material,
                               std::chrono::milliseconds timeout = kCompileWait);

  // The raw metadata.json of an entry, or nullopt if there is none.
  std::optional<std::string> load_metadata(const std::string& key) const;

  // Removes every file of an entry (best effort; the directory and its lock files stay).
  void remove(const std::string& key);

  DiskCacheStats stats() const;
  std::string last_error() const;

private:
  bool verify_or_drop(const std::string& key, const CacheKeyMaterial& material,
                      std::string_view kind, std::vector<char>& bytes);
  void record_error(std::string message);

  std::string dir_;
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, corrupt_{0}, stores_{0}, store_failures_{0},
      lock_waits_{0}, lock_failures_{0};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace tessera::detail
