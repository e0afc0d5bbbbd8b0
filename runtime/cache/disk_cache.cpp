// DiskCache implementation. File I/O goes through POSIX calls and llvm::sys::fs (unique temp
// files, rename, directory walks); JSON through llvm::json (CacheKeyMaterial maps to an object
// with one member per field); hashing through cache_key.h. Writers of one key hold an flock on
// <key>/.lock, a compiling process one on <key>/.compile-lock (flock, not LLVM's fcntl-based
// lockFile, so that threads of one process exclude each other too, and a lock dies with its
// process); readers take no lock unless they find a bad entry. The compile lock is a file of its
// own because its holder stores while holding it, and store() takes the writers' lock.
#include "cache/disk_cache.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <utility>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/FormatVariadic.h>
#include <llvm/Support/JSON.h>
#include <llvm/Support/Path.h>

#include "cache/cache_key.h"
#include "tessera/errors.h"

namespace tessera::detail {

namespace fs = llvm::sys::fs;
namespace json = llvm::json;

namespace {

// The metadata's "material": one member per field, all strings.
llvm::json::Value toJSON(const CacheKeyMaterial& m) {
  return json::Object{
      {"kernel", m.kernel},
      {"source_sha256", m.source_sha256},
      {"target", m.target},
      {"variant", m.variant},
      {"tessera_version", m.tessera_version},
      {"build_id", m.build_id},
      {"llvm_version", m.llvm_version},
      {"nvjitlink_version", m.nvjitlink_version},
      {"nvrtc_version", m.nvrtc_version},
  };
}

bool fromJSON(const llvm::json::Value& value, CacheKeyMaterial& m, llvm::json::Path path) {
  json::ObjectMapper o(value, path);
  return o && o.map("kernel", m.kernel) && o.map("source_sha256", m.source_sha256) &&
         o.map("target", m.target) && o.map("variant", m.variant) &&
         o.map("tessera_version", m.tessera_version) && o.map("build_id", m.build_id) &&
         o.map("llvm_version", m.llvm_version) && o.map("nvjitlink_version", m.nvjitlink_version) &&
         o.map("nvrtc_version", m.nvrtc_version);
}

constexpr std::string_view kMetadataName = "metadata.json";
constexpr std::string_view kLockName = ".lock";
constexpr std::string_view kCompileLockName = ".compile-lock";
// 2: keys are CacheKeyMaterial::key(), the material is recorded, file digests cover the key.
constexpr int kMetadataFormat = 2;
constexpr auto kLockTimeout = std::chrono::seconds(30);

std::string join(std::string_view a, std::string_view b) {
  llvm::SmallString<256> path(a);
  llvm::sys::path::append(path, b);
  return std::string(path.str());
}

void check_key(const std::string& key) {
  if (!is_cache_key(key))
    throw Error(fmt::format("disk cache: key '{}' is not 64 lower-case hex characters", key));
}

void check_kind(std::string_view kind) {
  bool ok = !kind.empty() && kind.front() != '.' && kind != kMetadataName;
  for (char c : kind)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-' || c == '.');
  if (!ok) throw Error(fmt::format("disk cache: '{}' is not a valid file kind", kind));
}

std::string errno_text(int err) { return std::strerror(err); }

// The whole file, or nullopt if it cannot be opened or read.
std::optional<std::vector<char>> read_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  std::vector<char> bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    bytes.insert(bytes.end(), chunk, chunk + n);
  }
  ::close(fd);
  return bytes;
}

// Keeps SIGXFSZ from killing the process while this thread writes a cache file. A write past
// RLIMIT_FSIZE raises SIGXFSZ at the writing thread, and its default action ends the process;
// with the signal blocked the write fails with EFBIG instead, which store() reports like any I/O
// error. Blocking it in this thread alone, rather than setting SIG_IGN, leaves the process's
// dispositions as they are: an ignored signal stays ignored in every program the process execs
// later, and a handler of the user's stays in charge of every other write. Linux sends this
// signal to the thread that wrote (a test runs the write beside a thread that does not block
// it), so the one our write raised is pending here; it is consumed before the mask is restored,
// so it is never delivered later. One that was pending before is left to its owner.
class SigxfszBlocked {
public:
  SigxfszBlocked() {
    sigemptyset(&xfsz_);
    sigaddset(&xfsz_, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz_, &old_);
    was_pending_ = pending();
  }
  ~SigxfszBlocked() {
    int saved = errno;
    if (!was_pending_ && pending()) {
      timespec zero{};
      while (sigtimedwait(&xfsz_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    errno = saved;
  }
  SigxfszBlocked(const SigxfszBlocked&) = delete;
  SigxfszBlocked& operator=(const SigxfszBlocked&) = delete;

private:
  static bool pending() {
    sigset_t set;
    return sigpending(&set) == 0 && sigismember(&set, SIGXFSZ) == 1;
  }
  sigset_t xfsz_{}, old_{};
  bool was_pending_ = false;
};

// Writes `bytes` to <dir>/<name> through a unique temp file and rename. Returns "" or an error.
std::string write_atomically(const std::string& dir, std::string_view name,
                             std::span<const char> bytes) {
  int fd = -1;
  llvm::SmallString<256> temp;
  std::string model = join(dir, fmt::format(".{}.tmp-%%%%%%%%%%%%", name));
  if (std::error_code ec = fs::createUniqueFile(model, fd, temp))
    return fmt::format("cannot create a temp file in {}: {}", dir, ec.message());
  std::string error;
  {
    SigxfszBlocked no_sigxfsz;
    size_t done = 0;
    while (done < bytes.size()) {
      ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        error = fmt::format("cannot write {}: {}", temp.str().str(), errno_text(errno));
        break;
      }
      done += static_cast<size_t>(n);
    }
  }
  if (::close(fd) != 0 && error.empty())
    error = fmt::format("cannot close {}: {}", temp.str().str(), errno_text(errno));
  if (error.empty()) {
    std::string target = join(dir, name);
    if (std::error_code ec = fs::rename(temp, target))
      error = fmt::format("cannot rename {} to {}: {}", temp.str().str(), target, ec.message());
  }
  if (!error.empty()) fs::remove(temp);
  return error;
}

// Opens (creating) `path` and takes an exclusive flock on it, polling until `timeout` has passed.
// Returns the descriptor, or -1 with `error` set; `waited` tells whether another holder was met.
int take_lock(const std::string& path, std::chrono::milliseconds timeout, std::string& error,
              bool& waited) {
  waited = false;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = fmt::format("cannot open {}: {}", path, errno_text(errno));
    return -1;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::microseconds(100);
  while (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    if (err == EWOULDBLOCK) waited = true;
    if ((err != EWOULDBLOCK && err != EINTR) || std::chrono::steady_clock::now() > deadline) {
      error = fmt::format("cannot lock {}: {}", path,
                          err == EWOULDBLOCK ? "timed out waiting for its holder" : errno_text(err));
      ::close(fd);
      return -1;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(10000));
  }
  return fd;
}

void release_lock(int fd) {
  if (fd < 0) return;
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

// An exclusive flock on <entry>/.lock, held for the object's lifetime.
class EntryLock {
public:
  explicit EntryLock(const std::string& entry) {
    bool waited = false;
    fd_ = take_lock(join(entry, kLockName), kLockTimeout, error_, waited);
  }
  ~EntryLock() { release_lock(fd_); }
  EntryLock(const EntryLock&) = delete;
  EntryLock& operator=(const EntryLock&) = delete;

  bool held() const { return fd_ >= 0; }
  const std::string& error() const { return error_; }

private:
  int fd_ = -1;
  std::string error_;
};

struct FileRecord {
  std::int64_t size = -1;
  std::string sha256;
};

// What metadata.json says about one kind. Unreadable also covers metadata of another format, key
// or material: nothing in such an entry can be trusted.
enum class Listing { Listed, NotListed, Unreadable };

std::optional<json::Object> parse_metadata(const std::vector<char>& text) {
  auto value = json::parse(llvm::StringRef(text.data(), text.size()));
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  if (auto* object = value->getAsObject()) return std::move(*object);
  return std::nullopt;
}

// Whether `metadata` is that of the entry for `material`, whose key is `key`.
bool is_entry_of(const json::Object& metadata, const std::string& key,
                 const CacheKeyMaterial& material) {
  auto format = metadata.getInteger("format");
  auto recorded_key = metadata.getString("key");
  const json::Value* recorded = metadata.get("material");
  CacheKeyMaterial parsed;
  json::Path::Root root;
  return format && *format == kMetadataFormat && recorded_key && *recorded_key == key &&
         recorded && fromJSON(*recorded, parsed, root) && parsed == material;
}

Listing find_record(const std::optional<json::Object>& metadata, const std::string& key,
                    const CacheKeyMaterial& material, std::string_view kind, FileRecord& record) {
  if (!metadata || !is_entry_of(*metadata, key, material)) return Listing::Unreadable;
  const json::Object* files = metadata->getObject("files");
  if (!files) return Listing::Unreadable;
  const json::Object* entry = files->getObject(llvm::StringRef(kind.data(), kind.size()));
  if (!entry) return Listing::NotListed;
  auto size = entry->getInteger("size");
  auto sha = entry->getString("sha256");
  if (!size || !sha) return Listing::Unreadable;
  record.size = *size;
  record.sha256 = sha->str();
  return Listing::Listed;
}

bool matches(const FileRecord& record, const std::string& key, std::string_view kind,
             const std::vector<char>& bytes) {
  return record.size == static_cast<std::int64_t>(bytes.size()) &&
         record.sha256 == DiskCache::file_digest(key, kind, bytes);
}

std::string serialize(const json::Object& metadata) {
  return llvm::formatv("{0:2}", json::Value(json::Object(metadata))).str() + "\n";
}

// Removes every file of an entry except its locks (a lock file removed while held would let the
// next taker lock a new file beside the holder), metadata first. Best effort.
void remove_entry_files(const std::string& entry) {
  fs::remove(join(entry, kMetadataName));
  std::error_code ec;
  for (fs::directory_iterator it(entry, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = llvm::sys::path::filename(it->path()).str();
    if (name != kLockName && name != kCompileLockName) fs::remove(it->path());
  }
}

}  // namespace

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) throw Error("disk cache: the cache directory must not be empty");
}

std::string DiskCache::default_dir() {
  auto env = [](const char* name) -> std::string {
    const char* value = std::getenv(name);
    return value ? value : "";
  };
  if (std::string dir = env("TESSERA_CACHE_DIR"); !dir.empty()) return dir;
  // The XDG base-directory spec says relative paths in these variables are to be ignored.
  if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty() && llvm::sys::path::is_absolute(xdg))
    return join(xdg, "tessera");
  llvm::SmallString<256> home;
  if (std::string h = env("HOME"); !h.empty())
    home = h;
  else if (!llvm::sys::path::home_directory(home))
    throw Error(
        "disk cache: cannot find a cache directory (set TESSERA_CACHE_DIR, XDG_CACHE_HOME or "
        "HOME)");
  llvm::sys::path::append(home, ".cache", "tessera");
  return std::string(home.str());
}

std::string DiskCache::entry_dir(const std::string& key) const {
  check_key(key);
  return join(dir_, key);
}

std::string DiskCache::file_digest(const std::string& key, std::string_view kind,
                                   std::span<const char> bytes) {
  return CacheKeyBuilder()
      .add("file")
      .add(key)
      .add(kind)
      .add(std::string_view(bytes.data(), bytes.size()))
      .hex();
}

std::optional<std::vector<char>> DiskCache::load(const CacheKeyMaterial& material,
                                                 std::string_view kind) {
  check_kind(kind);
  std::string key = material.key();
  std::string entry = entry_dir(key);
  auto metadata_text = read_file(join(entry, kMetadataName));
  if (!metadata_text) {
    ++misses_;
    return std::nullopt;
  }
  FileRecord record;
  Listing listing = find_record(parse_metadata(*metadata_text), key, material, kind, record);
  if (listing == Listing::NotListed) {
    ++misses_;
    return std::nullopt;
  }
  if (listing == Listing::Listed) {
    if (auto read = read_file(join(entry, kind)); read && matches(record, key, kind, *read)) {
      ++hits_;
      return read;
    }
  }
  // Something is off. A writer may have replaced the file between our two reads, so look again
  // under the writers' lock before declaring the entry bad.
  std::vector<char> bytes;
  if (verify_or_drop(key, material, kind, bytes)) {
    ++hits_;
    return bytes;
  }
  ++corrupt_;
  ++misses_;
  return std::nullopt;
}

bool DiskCache::verify_or_drop(const std::string& key, const CacheKeyMaterial& material,
                               std::string_view kind, std::vector<char>& bytes) {
  std::string entry = join(dir_, key);
  EntryLock lock(entry);
  if (!lock.held()) return false;  // leave the entry alone; the caller recompiles anyway
  auto metadata_text = read_file(join(entry, kMetadataName));
  if (!metadata_text) return false;  // removed meanwhile: nothing left to drop
  auto metadata = parse_metadata(*metadata_text);
  FileRecord record;
  Listing listing = find_record(metadata, key, material, kind, record);
  if (listing == Listing::Listed) {
    if (auto read = read_file(join(entry, kind)); read && matches(record, key, kind, *read)) {
      bytes = std::move(*read);
      return true;
    }
  }
  if (listing == Listing::Unreadable) {
    remove_entry_files(entry);  // nothing in the entry can be verified any more
    return false;
  }
  if (listing == Listing::NotListed) return false;
  // Drop the bad file and its record; keep the other kinds.
  fs::remove(join(entry, kind));
  metadata->getObject("files")->erase(llvm::StringRef(kind.data(), kind.size()));
  if (metadata->getObject("files")->empty()) {
    fs::remove(join(entry, kMetadataName));
  } else {
    std::string text = serialize(*metadata);
    if (!write_atomically(entry, kMetadataName, text).empty()) fs::remove(join(entry, kMetadataName));
  }
  return false;
}

bool DiskCache::store(const CacheKeyMaterial& material, std::string_view kind,
                      std::span<const char> bytes, std::string_view metadata_json) {
  check_kind(kind);
  std::string key = material.key();
  std::string entry = entry_dir(key);
  json::Object info;
  if (!metadata_json.empty()) {
    auto parsed = json::parse(llvm::StringRef(metadata_json.data(), metadata_json.size()));
    if (!parsed) {
      std::string message = llvm::toString(parsed.takeError());
      throw Error(fmt::format("disk cache: metadata is not valid JSON: {}", message));
    }
    if (!parsed->getAsObject()) throw Error("disk cache: metadata must be a JSON object");
    info = std::move(*parsed->getAsObject());
  }

  auto fail = [&](std::string message) {
    ++store_failures_;
    record_error(fmt::format("disk cache: storing {}/{}: {}", key, kind, message));
    return false;
  };
  try {
    if (std::error_code ec = fs::create_directories(entry))
      return fail(fmt::format("cannot create {}: {}", entry, ec.message()));
    EntryLock lock(entry);
    if (!lock.held()) return fail(lock.error());

    // Merge into the existing metadata (written by us or by another process before us) if it is
    // this material's; anything else in the directory is dropped first.
    json::Object files, merged_info;
    if (auto text = read_file(join(entry, kMetadataName))) {
      auto old = parse_metadata(*text);
      if (old && is_entry_of(*old, key, material)) {
        if (auto* old_files = old->getObject("files")) files = std::move(*old_files);
        if (auto* old_info = old->getObject("info")) merged_info = std::move(*old_info);
      } else {
        remove_entry_files(entry);
      }
    }
    if (std::string error = write_atomically(entry, kind, bytes); !error.empty())
      return fail(error);
    for (auto& [name, value] : info) merged_info[name] = std::move(value);
    files[std::string(kind)] = json::Object{
        {"size", static_cast<std::int64_t>(bytes.size())},
        {"sha256", file_digest(key, kind, bytes)},
    };
    json::Object out{
        {"format", kMetadataFormat},
        {"key", key},
        {"material", toJSON(material)},
        {"files", std::move(files)},
        {"info", std::move(merged_info)},
    };
    if (std::string error = write_atomically(entry, kMetadataName, serialize(out)); !error.empty())
      return fail(error);
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  ++stores_;
  return true;
}

CompileLock DiskCache::lock_for_compile(const CacheKeyMaterial& material,
                                        std::chrono::milliseconds timeout) {
  CompileLock lock;
  std::string key = material.key();
  std::string entry = entry_dir(key);
  std::string error;
  try {
    if (std::error_code ec = fs::create_directories(entry))
      error = fmt::format("cannot create {}: {}", entry, ec.message());
    else
      lock.fd_ = take_lock(join(entry, kCompileLockName), timeout, error, lock.waited_);
  } catch (const std::exception& e) {
    error = e.what();
  }
  if (lock.waited_) ++lock_waits_;
  if (!lock.held()) {
    ++lock_failures_;
    record_error(fmt::format("disk cache: locking {} to compile it: {}", key, error));
  }
  return lock;
}

CompileLock::CompileLock(CompileLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), waited_(other.waited_) {}

CompileLock& CompileLock::operator=(CompileLock&& other) noexcept {
  if (this != &other) {
    release_lock(fd_);
    fd_ = std::exchange(other.fd_, -1);
    waited_ = other.waited_;
  }
  return *this;
}

CompileLock::~CompileLock() { release_lock(fd_); }

std::optional<std::string> DiskCache::load_metadata(const std::string& key) const {
  auto text = read_file(join(entry_dir(key), kMetadataName));
  if (!text) return std::nullopt;
  return std::string(text->begin(), text->end());
}

void DiskCache::remove(const std::string& key) {
  std::string entry = entry_dir(key);
  if (!fs::is_directory(entry)) return;
  EntryLock lock(entry);
  remove_entry_files(entry);
}

DiskCacheStats DiskCache::stats() const {
  return {hits_.load(),           misses_.load(),     corrupt_.load(), stores_.load(),
          store_failures_.load(), lock_waits_.load(), lock_failures_.load()};
}

std::string DiskCache::last_error() const {
  std::lock_guard<std::mutex> guard(error_mutex_);
  return last_error_;
}

void DiskCache::record_error(std::string message) {
  std::lock_guard<std::mutex> guard(error_mutex_);
  last_error_ = std::move(message);
}

}  // namespace tessera::detail
