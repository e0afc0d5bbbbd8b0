// storage.cpp: Storage's out-of-line members (host access, destruction), foreign device
// storages, and the retirement of memory that work in flight still uses.
#include <fmt/format.h>

#include <cstring>
#include <new>

#include "execution/device_memory.h"
#include "execution/execution.h"
#include "tessera/errors.h"
#include "tessera/tensor.h"

namespace tessera::detail {
namespace {

// Throws std::bad_alloc if the memory cannot be had.
std::byte* allocate_host(std::size_t bytes, bool zero) {
  auto* p = static_cast<std::byte*>(::operator new(bytes == 0 ? 1 : bytes, std::align_val_t{64}));
  if (zero) std::memset(p, 0, bytes == 0 ? 1 : bytes);
  return p;
}
void free_host(std::byte* p) {
  if (p) ::operator delete(p, std::align_val_t{64});
}

// Memory of dead Storages that work in flight still uses. Never destroyed (the exit drain in
// streams.cpp empties it after every static that could retire memory is gone).
struct Retired {
  struct Entry {
    std::byte* host;
    std::unique_ptr<DeviceMirror> mirror;
    std::vector<CompletionPtr> pending;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
  std::atomic<std::size_t> count{0};
};
Retired& retired() {
  static Retired* r = new Retired();
  return *r;
}

// What host access must wait for; throws instead in strict mode or for an open foreign borrow.
CompletionPtr blocking_use(Storage& s, bool write, std::string_view what) {
  CompletionPtr pending;
  if (s.writer && !s.writer->done()) pending = s.writer;
  if (!pending && write)
    for (const CompletionPtr& r : s.readers)
      if (!r->done()) {
        pending = r;
        break;
      }
  if (!pending) return nullptr;
  if (pending->open())
    throw Error(fmt::format("tessera: host {} of a tensor borrowed by {}, which has not ended", what, pending->what()));
  if (tessera::strict_host_access() || pending->strict)
    throw Error(fmt::format("tessera: host {} of a tensor in use by {} in flight (strict host access: wait for it "
                            "first)",
                            what, pending->what()));
  return pending;
}

}  // namespace

// host_read_ok and host_write_ok stay false: the first host access takes the slow path, which
// allocates the host copy.
Storage::Storage(std::size_t bytes) : bytes_(bytes) {}

Storage::Storage(std::size_t bytes, std::unique_ptr<DeviceMirror> foreign)
    : mirror(std::move(foreign)), host_valid(false), device_valid(true), bytes_(bytes), foreign_(true) {}

Storage::~Storage() {
  std::vector<CompletionPtr> pending;
  auto keep = [&](const CompletionPtr& c) {
    if (c && !c->done()) pending.push_back(c);
  };
  keep(writer);
  for (const CompletionPtr& r : readers) keep(r);
  keep(device_ready);
  if (pending.empty()) {
    free_host(host_);
    mirror.reset();
    return;
  }
  retire(host_, std::move(mirror), std::move(pending));
}

std::byte* Storage::host_raw(bool zero) {
  if (!host_) host_ = allocate_host(bytes_, zero);
  return host_;
}

std::byte* Storage::host_for_read_slow() {
  for (;;) {
    CompletionPtr pending;
    {
      std::lock_guard lock(mutex);
      pending = blocking_use(*this, false, "read");
      if (!pending) {
        if (writer && !writer->open()) writer.reset();  // done: it orders nothing any more
        if (!host_valid) {
          download(*this);
          host_valid = true;
        }
        host_raw();  // zeros, if nothing was written yet
        host_read_ok.store(true, std::memory_order_release);
        return host_;
      }
    }
    wait_quietly(pending);  // errors are the launch's to report (handles, synchronous launches)
  }
}

void Storage::freeze() {
  for (;;) {
    CompletionPtr pending;
    {
      std::lock_guard lock(mutex);
      pending = writer && !writer->done() ? writer : nullptr;
      if (!pending && device_ready && !device_ready->done()) pending = device_ready;
      if (!pending) {
        frozen_.store(true, std::memory_order_release);
        host_write_ok.store(false, std::memory_order_release);
        return;
      }
      if (pending->open())
        throw Error(fmt::format("tessera: Tensor::freeze of a tensor borrowed by {}, which has not ended",
                                pending->what()));
    }
    pending->wait();
  }
}

std::byte* Storage::host_for_write_slow() {
  for (;;) {
    CompletionPtr pending;
    {
      std::lock_guard lock(mutex);
      if (frozen())  // under the lock freeze() sets it under
        throw Error("tessera: host write of a frozen tensor (Tensor::freeze made it read-only)");
      pending = blocking_use(*this, true, "write");
      if (!pending) {
        if (!host_valid) {
          download(*this);
          host_valid = true;
        }
        host_raw();  // zeros, if nothing was written yet
        device_valid = false;
        device_ready.reset();
        writer.reset();
        readers.clear();
        host_read_ok.store(true, std::memory_order_release);
        host_write_ok.store(true, std::memory_order_release);
        return host_;
      }
    }
    wait_quietly(pending);
  }
}

void download(Storage& s) {
  if (!s.mirror) {  // never on a device: the host copy is current
    s.host_raw();
    return;
  }
  CudaDriver& d = CudaDriver::get();
  d.make_current();
  std::byte* host = s.host_raw(/*zero=*/false);  // overwritten whole
  if (s.bytes()) d.check(d.cuMemcpyDtoH_v2(host, s.mirror->address(), s.bytes()), "cuMemcpyDtoH (tensor download)");
}

void make_device_current(CudaDriver& driver, Storage& s, CUstream stream) {
  if (!s.bytes()) return;
  if (s.zeros_unallocated())
    driver.check(driver.cuMemsetD8Async(s.mirror->address(), 0, s.bytes(), stream),
                 "cuMemsetD8Async (zeros of a new tensor)");
  else
    driver.check(driver.cuMemcpyHtoDAsync_v2(s.mirror->address(), s.host_raw(), s.bytes(), stream),
                 "cuMemcpyHtoDAsync (tensor upload)");
}

CUdeviceptr device_address(CudaDriver& driver, Storage& s) {
  if (!s.mirror) {
    s.mirror = std::make_unique<BufferMirror>(driver, s.bytes());
    s.device_valid = false;
  }
  return s.mirror->address();
}

std::shared_ptr<Storage> foreign_device_storage(void* device_ptr, std::size_t bytes, std::function<void()> release) {
  auto mirror = std::make_unique<ForeignMirror>(reinterpret_cast<CUdeviceptr>(device_ptr), std::move(release));
  return std::make_shared<Storage>(bytes, std::move(mirror));
}

void retire(std::byte* host, std::unique_ptr<DeviceMirror> mirror, std::vector<CompletionPtr> pending) {
  Retired& r = retired();
  std::lock_guard lock(r.mutex);
  r.entries.push_back({host, std::move(mirror), std::move(pending)});
  r.count.store(r.entries.size(), std::memory_order_release);
}

void sweep_retired(bool wait_all) {
  Retired& r = retired();
  if (!wait_all && r.count.load(std::memory_order_acquire) == 0) return;
  std::vector<Retired::Entry> free_now;
  {
    std::lock_guard lock(r.mutex);
    auto done = [&](const Retired::Entry& e) {
      for (const CompletionPtr& c : e.pending)
        if (!c->done()) return false;
      return true;
    };
    for (std::size_t i = 0; i < r.entries.size();) {
      if (wait_all || done(r.entries[i])) {
        free_now.push_back(std::move(r.entries[i]));
        r.entries[i] = std::move(r.entries.back());
        r.entries.pop_back();
      } else {
        ++i;
      }
    }
    r.count.store(r.entries.size(), std::memory_order_release);
  }
  for (Retired::Entry& e : free_now) {
    for (const CompletionPtr& c : e.pending) wait_quietly(c);
    free_host(e.host);
    e.mirror.reset();
  }
}

std::size_t retired_count() { return retired().count.load(std::memory_order_acquire); }

}  // namespace tessera::detail
