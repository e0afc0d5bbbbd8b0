// detail/storage.h: the reference-counted memory behind a tessera::Tensor.
//
// A Storage owns one 64-byte-aligned host allocation and counts the launches that currently
// borrow it: any number of readers, or one writer. Tensors are move-only handles to a Storage;
// launches hold a shared reference for as long as a kernel may touch the memory, so destroying a
// Tensor never frees memory early. Assumes sizes fit in size_t; not copyable.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

namespace tessera::detail {

class Storage {
 public:
  explicit Storage(std::size_t bytes)
      : bytes_(bytes),
        host_(static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{64}))) {
    std::memset(host_, 0, bytes == 0 ? 1 : bytes);
  }
  ~Storage() { ::operator delete(host_, std::align_val_t{64}); }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::size_t bytes() const { return bytes_; }
  std::byte* host() const { return host_; }

  // Borrow accounting, used by the launcher (see runtime/borrow_tracker).
  std::atomic<int> readers{0};
  std::atomic<int> writers{0};

 private:
  std::size_t bytes_;
  std::byte* host_;
};

}  // namespace tessera::detail
