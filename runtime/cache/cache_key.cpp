// Cache-key hashing on top of llvm::SHA256. Encoding: the tag "tessera-cache-key-v1", then for each
// part its length as 8 little-endian bytes followed by its bytes.
#include "cache/cache_key.h"

#include <array>
#include <string>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringExtras.h>
#include <llvm/Support/SHA256.h>

namespace tessera::detail {

namespace {

constexpr std::string_view kKeyFormatTag = "tessera-cache-key-v1";

void add_length_prefixed(llvm::SHA256& sha, std::string_view part) {
  std::array<std::uint8_t, 8> length{};
  std::uint64_t n = part.size();
  for (auto& byte : length) {
    byte = static_cast<std::uint8_t>(n & 0xff);
    n >>= 8;
  }
  sha.update(llvm::ArrayRef<std::uint8_t>(length));
  sha.update(llvm::StringRef(part.data(), part.size()));
}

}  // namespace

struct CacheKeyBuilder::State {
  llvm::SHA256 sha;
};

CacheKeyBuilder::CacheKeyBuilder() : state_(std::make_unique<State>()) {
  add_length_prefixed(state_->sha, kKeyFormatTag);
}
CacheKeyBuilder::~CacheKeyBuilder() = default;
CacheKeyBuilder::CacheKeyBuilder(CacheKeyBuilder&&) noexcept = default;
CacheKeyBuilder& CacheKeyBuilder::operator=(CacheKeyBuilder&&) noexcept = default;

CacheKeyBuilder& CacheKeyBuilder::add(std::string_view part) {
  add_length_prefixed(state_->sha, part);
  return *this;
}

CacheKeyBuilder& CacheKeyBuilder::add(std::int64_t value) { return add(std::to_string(value)); }

std::string CacheKeyBuilder::hex() const {
  return llvm::toHex(state_->sha.result(), /*LowerCase=*/true);
}

std::string make_cache_key(std::initializer_list<std::string_view> parts) {
  CacheKeyBuilder builder;
  for (std::string_view part : parts) builder.add(part);
  return builder.hex();
}

std::string CacheKeyMaterial::key() const {
  // The tag names this encoding of the record; a change of fields changes the tag.
  return make_cache_key({"kernel-material-v1", kernel, source_sha256, target, variant, tessera_version,
                         build_id, llvm_version, nvjitlink_version, nvrtc_version});
}

bool is_cache_key(std::string_view key) {
  if (key.size() != 64) return false;
  for (char c : key)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string sha256_hex(std::span<const char> bytes) {
  auto data = llvm::ArrayRef<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                           bytes.size());
  return llvm::toHex(llvm::SHA256::hash(data), /*LowerCase=*/true);
}

}  // namespace tessera::detail
