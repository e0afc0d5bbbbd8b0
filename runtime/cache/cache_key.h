// Cache keys: a SHA-256 over an ordered list of parts, written as 64 lower-case hex characters.
// Callers pass everything that affects the compiled binary (AST text, specialization, target,
// toolchain versions, options). Each part is hashed with its length in front, so ("ab", "c") and
// ("a", "bc") give different keys; a format tag goes in first so that a change of encoding never
// reuses old keys. CacheKeyMaterial is the typed record of what a compiled kernel's disk-cache
// entry depends on; its key() names the entry's directory and the disk cache stores the record
// beside the bytes, so that an entry can prove which kernel it holds (disk_cache.h). Also hosts
// the plain SHA-256 helper.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tessera::detail {

// Builds a key part by part: CacheKeyBuilder().add(ast).add(target).add(versions).hex().
class CacheKeyBuilder {
public:
  CacheKeyBuilder();
  ~CacheKeyBuilder();
  CacheKeyBuilder(CacheKeyBuilder&&) noexcept;
  CacheKeyBuilder& operator=(CacheKeyBuilder&&) noexcept;

  CacheKeyBuilder& add(std::string_view part);
  CacheKeyBuilder& add(std::int64_t value);  // hashed as its decimal text

  // The key so far; the builder can take more parts afterwards.
  std::string hex() const;

private:
  struct State;
  std::unique_ptr<State> state_;
};

std::string make_cache_key(std::initializer_list<std::string_view> parts);

// Everything a compiled kernel depends on, one field each: a disk-cache entry records it and a
// load compares it field by field with what the caller asks for. Every field is plain text; empty
// means "not used" (e.g. nvrtc_version of a kernel that calls no CUDA C++ device function).
struct CacheKeyMaterial {
  std::string kernel;             // the kernel's name
  std::string source_sha256;      // SHA-256 of what it is compiled from: a tessera kernel's AST
                                  // text; an unsafe kernel's sources, options and linked code
  std::string target;             // "sm_90", "sm_100a", ...
  std::string variant;            // what the binary is specialized for: layout letters, static
                                  // shapes, the whole-tiles mark ("unsafe" for unsafe kernels)
  std::string tessera_version;    // TESSERA_VERSION_STRING
  std::string build_id;           // self_build_id() of the compiler that made it
  std::string llvm_version;
  std::string nvjitlink_version;
  std::string nvrtc_version;

  bool operator==(const CacheKeyMaterial&) const = default;

  // The cache key: every field in the order above, through CacheKeyBuilder.
  std::string key() const;
};

// True for 64 lower-case hex characters, the only form a key takes.
bool is_cache_key(std::string_view key);

// SHA-256 of bytes, as 64 lower-case hex characters.
std::string sha256_hex(std::span<const char> bytes);

}  // namespace tessera::detail
