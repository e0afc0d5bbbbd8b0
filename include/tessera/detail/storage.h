// detail/storage.h: the reference-counted memory behind a tessera::Tensor.
//
// A Storage owns one 64-byte-aligned host allocation, optionally a device copy (a DeviceMirror
// made by the runtime on the first GPU launch), and counts the launches that currently borrow it:
// any number of readers, or one writer. Which copy is current is tracked with two valid bits:
// host access through host_for_read/host_for_write downloads a newer device copy first, and a host
// write makes the device copy stale (the next launch uploads it). Tensors are move-only handles to
// a Storage; launches hold a shared reference for as long as a kernel may touch the memory, so
// destroying a Tensor never frees memory early. Not copyable; not synchronized (one host thread
// touches a tensor at a time; launches hold borrows).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>

namespace tessera::detail {

// The device copy of a Storage; implemented by the runtime (runtime/device_memory.cpp).
class DeviceMirror {
 public:
  virtual ~DeviceMirror() = default;
  virtual void download(void* host, std::size_t bytes) = 0;
};

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
  // The host copy, made current first.
  std::byte* host_for_read() {
    if (!host_valid) {
      mirror->download(host_, bytes_);
      host_valid = true;
    }
    return host_;
  }
  std::byte* host_for_write() {
    host_for_read();
    device_valid = false;
    return host_;
  }
  // The host allocation as it is (for the launcher, which manages the valid bits itself).
  std::byte* host_raw() const { return host_; }

  std::unique_ptr<DeviceMirror> mirror;  // null until the first GPU launch
  bool host_valid = true;                // the host copy holds the current contents
  bool device_valid = false;             // the device copy holds the current contents

  // Borrow accounting, used by the launcher (see runtime/borrow_tracker).
  std::atomic<int> readers{0};
  std::atomic<int> writers{0};

 private:
  std::size_t bytes_;
  std::byte* host_;
};

}  // namespace tessera::detail
