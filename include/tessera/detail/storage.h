// detail/storage.h: the reference-counted memory behind a tessera::Tensor, and what uses it.
//
// A Storage owns a 64-byte-aligned host copy and, once a GPU launch needs it, a device copy (a
// DeviceMirror made by the runtime), or wraps foreign device memory (Tensor::from_device). Which
// copy is current is tracked with two valid bits. Tensors are move-only handles to a Storage.
//
// Memory is committed lazily. A new Storage holds zeros and no memory at all: the host copy is
// allocated (zero-filled) at the first host access or CPU launch, the device copy at the first GPU
// launch, which zero-fills it on the device (cuMemsetD8Async) instead of uploading host zeros. So
// a tensor used only on the GPU never commits host memory, and may be larger than the host's
// memory. `host_valid` with no host allocation means "zeros".
//
// Every launch that uses a Storage records itself in the storage's tracker, under `mutex`:
//   writer   the completion of the last launch that writes it (an output), or null;
//   readers  the completions of launches that read it since that writer, at most one per queue
//            (a later completion on an in-order queue implies the earlier ones).
// A new launch is ordered after `writer` for each tensor it reads, and after `writer` and every
// reader for each tensor it writes: readers share, a writer is exclusive. Host access
// (host_for_read / host_for_write, behind Tensor::data() and friends) waits for the same
// completions, or throws in strict mode. The memory is freed when the Storage dies, and if a
// launch still uses it then, only once that launch has completed (see ~Storage).
//
// The definitions of the out-of-line members live in libtessera (runtime/execution/).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace tessera::detail {

// The end of one piece of work: a kernel launch, a graph replay, an upload, or a borrow by code
// outside tessera. CPU work completes on a host thread, GPU work at an event. Implemented by
// libtessera; shared by everything that has to wait for the work.
class Completion {
 public:
  virtual ~Completion() = default;
  // Whether the work has finished (successfully or not). Never blocks, never throws.
  virtual bool done() const = 0;
  // Blocks until the work has finished; throws tessera::Error if it failed.
  virtual void wait() const = 0;
  // True while the work has not even been submitted (an open foreign borrow): nothing can be
  // ordered after it yet, so conflicting uses are rejected instead of waited for.
  virtual bool open() const { return false; }
  // What to order after instead of this completion (`self`): itself, or for an ended foreign
  // borrow the completion of the foreign work (null if it has finished). The fields below never
  // change once the completion is published.
  virtual std::shared_ptr<const Completion> resolved(const std::shared_ptr<const Completion>& self) const {
    return self;
  }
  // GPU work not known to be done: a CUevent reached once it is (recorded now if need be), valid
  // while `hold` lives, for other streams to wait on. nullptr otherwise: wait on the host.
  virtual void* cuda_event(std::shared_ptr<const void>& hold) const {
    (void)hold;
    return nullptr;
  }

  // The in-order queue it completes on: 2 * stream id for a stream's CPU worker, 2 * stream id + 1
  // for its GPU stream, 0 for none (e.g. a synchronous CPU launch run on the caller's thread).
  std::uint64_t queue = 0;
  std::uint64_t order = 0;     // global submission order (later submissions have larger numbers)
  bool strict = false;         // host access to its tensors throws instead of waiting while in flight
  // What it is, for messages: "kernel 'add'", "graph replay (3 launches)", ... (shared, so that
  // a launch costs no string copy).
  std::shared_ptr<const std::string> label;
  const std::string& what() const {
    static const std::string unnamed = "work";
    return label ? *label : unnamed;
  }
};
using CompletionPtr = std::shared_ptr<const Completion>;

// The device copy of a Storage; implemented by the runtime (device memory of our own, or foreign).
class DeviceMirror {
 public:
  virtual ~DeviceMirror() = default;
  // The CUdeviceptr of the first byte.
  virtual std::uint64_t address() const = 0;
};

class Storage {
 public:
  // `bytes` of zeros; no memory is allocated yet (see the file comment).
  explicit Storage(std::size_t bytes);
  // Foreign device memory of `bytes` bytes, current on the device; the host copy is allocated on
  // first host access.
  Storage(std::size_t bytes, std::unique_ptr<DeviceMirror> foreign);
  // Frees the memory at once if no launch uses it any more; otherwise hands it to the runtime,
  // which frees it when the last of those launches has completed. Never blocks.
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::size_t bytes() const { return bytes_; }
  // Host access by the user. Reading waits for the last writer; writing waits for the writer and
  // every reader (in strict mode, or for a strict launch, throws tessera::Error instead of
  // waiting). Then the host copy is made current (downloaded if a GPU kernel wrote it last);
  // writing makes the device copy stale. The fast path (nothing in flight, host copy current) is
  // one atomic load: element-wise host loops stay cheap.
  std::byte* host_for_read() {
    if (host_read_ok.load(std::memory_order_acquire)) return host_;
    return host_for_read_slow();
  }
  std::byte* host_for_write() {
    if (host_write_ok.load(std::memory_order_acquire)) return host_;
    return host_for_write_slow();
  }

  // Whether the device memory was given by the user (Tensor::from_device): its address need not
  // be aligned. Fixed at construction.
  bool foreign_device() const { return foreign_; }

  // Read-only for good (Tensor::freeze): waits for the work in flight that writes it (throws if
  // that work failed, or for an open foreign borrow), then no launch, host access or borrow may
  // write it again. Its bytes then never change while it lives, so a kernel may read it before
  // the kernels it follows have ended (see CompilerHints::bulk_streams).
  void freeze();
  bool frozen() const { return frozen_.load(std::memory_order_acquire); }

  // For the runtime, under `mutex`: the host allocation, made on first use (zero-filled, or left
  // as it is when `zero` is false because the caller overwrites all of it). Throws std::bad_alloc.
  std::byte* host_raw(bool zero = true);
  // Under `mutex`: whether the contents are the zeros of a new Storage that no copy holds yet (no
  // host allocation and the host copy current), so a device copy is made current by a memset.
  bool zeros_unallocated() const { return host_valid && !host_; }

  std::mutex mutex;
  std::unique_ptr<DeviceMirror> mirror;  // null until the first GPU launch (or foreign)
  bool host_valid = true;                // the host copy holds the current contents
  bool device_valid = false;             // the device copy holds the current contents
  CompletionPtr writer;                  // see the file comment
  std::vector<CompletionPtr> readers;
  CompletionPtr device_ready;            // the GPU work that last uploaded the device copy
  // Set by host access once nothing is in flight (and, for writes, the device copy is stale);
  // cleared under `mutex` by every launch that registers a use that host access must wait for.
  std::atomic<bool> host_read_ok{false};
  std::atomic<bool> host_write_ok{false};

 private:
  std::byte* host_for_read_slow();
  std::byte* host_for_write_slow();

  std::size_t bytes_;
  std::atomic<bool> frozen_{false};
  std::byte* host_ = nullptr;
  bool foreign_ = false;
};

}  // namespace tessera::detail
