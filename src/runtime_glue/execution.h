// execution.h: the machinery behind launch.h, shared by kernel launches, graph replays, unsafe
// CUDA kernels and foreign borrows. Internal to libtessera.
//
//   completions  HostCompletion (work on a host thread), EventCompletion (a CUevent recorded after
//                GPU work), ForeignCompletion (a borrow by foreign code, open until it ends);
//   queues       StreamImpl: a CPU worker thread and/or a CUstream, both made on first use; the
//                pool of four; every live stream registered for synchronize();
//   submission   submit_work(): lock the storages used (in address order), collect the work they
//                are in flight with, pick a stream, make the right copy current, enqueue, record
//                the new completion in each storage's tracker (detail/storage.h);
//   retirement   memory of dead Storages still used by work in flight, freed once it completes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <string>
#include <vector>

#include "cuda_driver.h"
#include "tessera/launch.h"

namespace tessera::detail {

// --- completions (completion.cpp) ----------------------------------------------------------

std::uint64_t next_order();

// Work that completes on a host thread (CPU kernels, graph replays on the CPU target).
class HostCompletion final : public Completion {
 public:
  bool done() const override { return done_.load(std::memory_order_acquire); }
  void wait() const override;
  void finish(std::exception_ptr error = nullptr);

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable cv_;
  std::atomic<bool> done_{false};
  std::exception_ptr error_;
};

// GPU work: complete when the event recorded after it has been reached. Keeps `keep_alive` (the
// compiled kernel or graph) until it is destroyed; returns its event to the pool then.
class EventCompletion final : public Completion {
 public:
  EventCompletion(CUevent event, std::shared_ptr<const void> keep_alive);
  ~EventCompletion() override;
  bool done() const override;
  void wait() const override;

 private:
  CUevent event_;
  std::shared_ptr<const void> keep_alive_;
  mutable std::atomic<bool> done_{false};
};

// An event of the process-wide pool (created with timing disabled).
CUevent acquire_event(CudaDriver& driver);
void release_event(CUevent event) noexcept;

// A borrow of a tensor by code outside tessera (interop.h): open until end(), then complete when
// the foreign work is (at an event recorded on its stream, or at once for host code).
class ForeignCompletion final : public Completion {
 public:
  bool done() const override;
  void wait() const override;
  bool open() const override { return open_.load(std::memory_order_acquire); }
  CompletionPtr resolved(const CompletionPtr& self) const override { return open() ? self : after_; }
  // The foreign work has been submitted: `after` completes when it does (null: it has finished).
  void end(CompletionPtr after);

 private:
  std::atomic<bool> open_{true};
  CompletionPtr after_;  // written once, before open_ is cleared
};

// --- queues (streams.cpp) ----------------------------------------------------------------

class StreamImpl {
 public:
  // A stream of tessera's own; `pooled` for the pool's. With `foreign`, the GPU side is that
  // CUstream (never destroyed).
  StreamImpl(bool pooled, CUstream foreign);
  ~StreamImpl();  // waits for the work submitted to it
  StreamImpl(const StreamImpl&) = delete;
  StreamImpl& operator=(const StreamImpl&) = delete;

  std::uint64_t id() const { return id_; }
  bool pooled() const { return pooled_; }
  // Runs `task` on this stream's worker thread after the tasks posted before it.
  void post(std::function<void()> task);
  // The CUstream (made on first use, non-blocking with respect to the legacy default stream).
  CUstream cuda(CudaDriver& driver);
  // Waits for everything submitted so far (CPU tasks and GPU work).
  void synchronize();

 private:
  void worker_loop();

  const std::uint64_t id_;
  const bool pooled_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::function<void()>> tasks_;  // FIFO, consumed from the front in batches
  bool stop_ = false;
  bool started_ = false;
  std::thread worker_;
  CUstream cuda_ = nullptr;
  bool foreign_ = false;
};

// The pool stream for work that depends on `deps`: the stream of the latest dependency that is on
// a pool stream, else the next one round robin.
StreamImpl& pool_stream_for(std::span<const CompletionPtr> deps);
// Waits for every stream (synchronize()).
void synchronize_streams();
// Called before the first GPU work: registers, after libcuda's own exit handlers, one that waits
// for all work before they run (exit handlers run in reverse order).
void prepare_gpu_exit();
// True once that handler has run: the driver may be shutting down, so tessera makes no more
// driver calls that could block or fail (work has finished by then).
bool gpu_shut_down();

// --- submission (submit.cpp) --------------------------------------------------------------

// One use of a storage by a piece of work.
struct Use {
  Storage* storage = nullptr;
  bool write = false;
};

// A piece of work to submit: what it uses and how to run it on either target.
class Work {
 public:
  virtual ~Work() = default;
  // CPU target, called with the storages locked and their host copies current: the task to run
  // on a host thread once the work it depends on has finished.
  virtual std::function<void()> cpu_task() = 0;
  // GPU targets, called with the storages locked and their device copies current (uploads are
  // enqueued on `stream` before): enqueues the work on `stream`.
  virtual void enqueue_gpu(CudaDriver& driver, CUstream stream) = 0;
  // Kept alive by the completion (GPU) or the task (CPU) until the work is done.
  virtual std::shared_ptr<const void> keep_alive() const { return nullptr; }
};

struct Submission {
  std::shared_ptr<const std::string> label;  // "kernel 'add'"
  bool gpu = false;
  std::vector<Use> uses;  // may name a storage twice (a write wins)
  const LaunchOptions* options = nullptr;
  bool wait = false;  // the caller waits right after: CPU work may run inline on the caller
};

// Submits `work` (see the file comment); returns its completion. Throws tessera::Error if a
// storage is held by an open foreign borrow that conflicts.
CompletionPtr submit_work(const Submission& sub, Work& work);

// Records `c` as the newest use of `s` (its writer, or one of its readers) and, for a writer,
// which copy it leaves current. Under s.mutex.
void record_use(Storage& s, bool write, const CompletionPtr& c, bool gpu);
// The device address of `s`'s copy (made if missing). Under s.mutex.
CUdeviceptr device_address(CudaDriver& driver, Storage& s);
// Copies the device copy to the host copy. Under s.mutex, with the writer done.
void download(Storage& s);

// --- retirement (storage.cpp) -------------------------------------------------------------

// Frees `host` and `mirror` once every completion in `pending` is done.
void retire(std::byte* host, std::unique_ptr<DeviceMirror> mirror, std::vector<CompletionPtr> pending);
// Frees what has become free; `wait_all` first waits for everything (at exit, synchronize()).
void sweep_retired(bool wait_all = false);

}  // namespace tessera::detail
