// Cache keys: a SHA-256 over an ordered list of parts, written as 64 lower-case hex characters.
// Callers pass everything that affects the compiled binary (AST text, specialization, target,
// toolchain versions, options). Each part is hashed with its length in front, so ("ab", "c") and
// ("a", "bc") give different keys; a format tag goes in first so that a change of encoding never
// reuses old keys. Also hosts the plain SHA-256 helper the disk cache uses to check its files.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace tessera {

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

// True for 64 lower-case hex characters, the only form a key takes.
bool is_cache_key(std::string_view key);

// SHA-256 of bytes, as 64 lower-case hex characters.
std::string sha256_hex(std::span<const char> bytes);

}  // namespace tessera
