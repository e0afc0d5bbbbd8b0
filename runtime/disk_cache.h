// DiskCache: compiled artifacts (cubin, ptx, ...) on disk, one directory per cache key.
//
//   <dir>/<key>/<kind>           the bytes, e.g. <key>/cubin and <key>/ptx
//   <dir>/<key>/metadata.json    {"format":1,"key":..,"files":{kind:{"size":N,"sha256":hex}},
//                                 "info":{..what callers passed: kernel, target, versions..}}
//   <dir>/<key>/.lock            serializes writers of one key (flock), never deleted
//
// Every file is written to a unique temp file in the same directory and renamed into place, the
// metadata last, so readers never see a half-written file. load() checks size and SHA-256 against
// the metadata; a missing, truncated or corrupt file is a miss, is counted as corrupt and is removed
// (after re-checking under the lock, so a concurrent writer's fresh entry is never dropped), and the
// caller recompiles and stores again. store() never throws for I/O failures: it records the error
// and returns false, since a cache that cannot write must not fail a launch. Invalid arguments (a
// key that is not 64 hex chars, a bad kind name, metadata that is not a JSON object) throw
// tessera::Error. Assumes a POSIX file system with atomic rename and flock. Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct DiskCacheStats {
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;          // every load that returned nothing, corrupt ones included
  std::uint64_t corrupt = 0;         // loads that found a bad entry and dropped it
  std::uint64_t stores = 0;          // successful stores
  std::uint64_t store_failures = 0;  // stores that hit an I/O error (see last_error())
};

class DiskCache {
public:
  // `dir` need not exist yet; it is created on the first store.
  explicit DiskCache(std::string dir);

  // $TESSERA_CACHE_DIR if set, else $XDG_CACHE_HOME/tessera (if absolute), else
  // $HOME/.cache/tessera. Throws tessera::Error if none of these can be determined.
  static std::string default_dir();

  const std::string& dir() const { return dir_; }
  std::string entry_dir(const std::string& key) const;  // <dir>/<key>

  // The verified bytes of <key>/<kind>, or nullopt on a miss.
  std::optional<std::vector<char>> load(const std::string& key, std::string_view kind);

  // Writes <key>/<kind> and records it in metadata.json, merging `metadata_json` (a JSON object,
  // may be empty) into the entry's "info". Other kinds already stored under the key are kept.
  // Returns false (and records last_error()) on an I/O error.
  bool store(const std::string& key, std::string_view kind, std::span<const char> bytes,
             std::string_view metadata_json = {});

  // The raw metadata.json of an entry, or nullopt if there is none.
  std::optional<std::string> load_metadata(const std::string& key) const;

  // Removes every file of an entry (best effort; the directory and its lock file stay).
  void remove(const std::string& key);

  DiskCacheStats stats() const;
  std::string last_error() const;

private:
  bool verify_or_drop(const std::string& key, std::string_view kind, std::vector<char>& bytes);
  void record_error(std::string message);

  std::string dir_;
  std::atomic<std::uint64_t> hits_{0}, misses_{0}, corrupt_{0}, stores_{0}, store_failures_{0};
  mutable std::mutex error_mutex_;
  std::string last_error_;
};

}  // namespace tessera
