// execution.h: the machinery behind launch.h, shared by kernel launches, graph replays, unsafe
// CUDA kernels and foreign borrows. Internal to libtessera.
//
//   completions  HostCompletion (work on a host thread), StreamCompletion (a point of a GPU
//                stream's timeline), ForeignCompletion (a borrow by foreign code, open until it ends);
//   queues       StreamImpl: a CPU worker thread and/or a CUstream, both made on first use; the
//                pool of four; every live stream registered for synchronize();
//   timelines    GPU submissions on a stream are numbered; an event is recorded only when someone
//                must wait for or test a point (a host wait, a wait from another stream, a poll),
//                and then covers every submission before it. A chain of launches on one stream
//                costs no event at all;
//   submission   submit_work(): lock the storages used (in address order), collect the work they
//                are in flight with, pick a stream, make the right copy current, enqueue, record
//                the new completion in each storage's tracker (detail/storage.h);
//   retirement   memory of dead Storages still used by work in flight, freed once it completes.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
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

// An event of the process-wide pool (created with timing disabled).
CUevent acquire_event(CudaDriver& driver);
void release_event(CUevent event) noexcept;

class StreamImpl;

// An event recorded on a stream once every submission numbered up to `seq` was enqueued; back to
// the pool when the last holder lets go.
struct Mark {
  std::uint64_t seq = 0;
  CUevent event = nullptr;
  Mark(std::uint64_t s, CUevent e) : seq(s), event(e) {}
  ~Mark() { release_event(event); }
  Mark(const Mark&) = delete;
  Mark& operator=(const Mark&) = delete;
};

// GPU work: submission `seq` of `stream`. Keeps the stream and `keep_alive` (the compiled kernel
// or graph) until it is destroyed.
class StreamCompletion final : public Completion {
 public:
  StreamCompletion(std::shared_ptr<StreamImpl> stream, std::uint64_t seq, std::shared_ptr<const void> keep_alive);
  bool done() const override;
  void wait() const override;
  void* cuda_event(std::shared_ptr<const void>& hold) const override;

 private:
  std::shared_ptr<StreamImpl> stream_;
  std::uint64_t seq_;
  std::shared_ptr<const void> keep_alive_;
  mutable std::atomic<bool> done_{false};
};

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

class StreamImpl : public std::enable_shared_from_this<StreamImpl> {
 public:
  // A stream of tessera's own; `pooled` for the pool's. With `foreign`, the GPU side is that
  // CUstream (never destroyed). Registered for synchronize().
  static std::shared_ptr<StreamImpl> make(bool pooled, CUstream foreign);
  ~StreamImpl();  // waits for the work submitted to it
  StreamImpl(const StreamImpl&) = delete;
  StreamImpl& operator=(const StreamImpl&) = delete;

  std::uint64_t id() const { return id_; }
  // The queue numbers of completions (see Completion::queue): its CPU worker, its GPU stream.
  std::uint64_t cpu_queue() const { return 2 * id_; }
  std::uint64_t gpu_queue() const { return 2 * id_ + 1; }
  bool pooled() const { return pooled_; }
  // Runs `task` on this stream's worker thread after the tasks posted before it.
  void post(std::function<void()> task);
  // The CUstream (made on first use, non-blocking with respect to the legacy default stream).
  CUstream cuda(CudaDriver& driver);
  // Waits for everything submitted so far (CPU tasks and GPU work).
  void synchronize();

  // The GPU timeline. Held while enqueueing GPU work, so that numbers follow enqueue order.
  std::unique_lock<std::mutex> lock_gpu() { return std::unique_lock<std::mutex>(gpu_mutex_); }
  // Under lock_gpu(), after enqueueing a submission: its number.
  std::uint64_t note_submitted() { return ++submitted_; }
  // An event reached once submission `seq` is done: the first mark at or after it, or one
  // recorded now. Not under lock_gpu().
  std::shared_ptr<const Mark> mark_covering(CudaDriver& driver, std::uint64_t seq);
  bool reached(std::uint64_t seq) const { return completed_.load(std::memory_order_acquire) >= seq; }
  void note_reached(std::uint64_t seq);
  // Blocks the host until submission `seq` is done: cuStreamSynchronize when it is the latest
  // submission (no event needed, the common case of a synchronous launch), else the covering mark.
  CUresult wait_for(CudaDriver& driver, std::uint64_t seq);

 private:
  StreamImpl(bool pooled, CUstream foreign);

  // The CPU worker's queue, shared with its thread, which may outlive the StreamImpl (when the last
  // reference goes on the worker itself, it is detached and drains the queue alone).
  struct Worker {
    std::mutex mutex;
    std::condition_variable cv;
    std::vector<std::function<void()>> tasks;  // FIFO, taken in batches
    bool stop = false;
    static void loop(std::shared_ptr<Worker> w);
  };

  const std::uint64_t id_;
  const bool pooled_;
  std::mutex mutex_;  // started_, worker_, cuda_
  bool started_ = false;
  std::shared_ptr<Worker> work_ = std::make_shared<Worker>();
  std::thread worker_;
  CUstream cuda_ = nullptr;
  bool foreign_ = false;
  std::mutex gpu_mutex_;  // below the storage locks; never held while taking another stream's
  std::uint64_t submitted_ = 0;
  std::deque<std::shared_ptr<const Mark>> marks_;  // ascending seq
  std::atomic<std::uint64_t> completed_{0};        // every submission up to it has finished
};

// The pool stream for work that depends on `deps`: the stream of the latest dependency that is on
// a pool stream, else the next one round robin.
std::shared_ptr<StreamImpl> pool_stream_for(std::span<const CompletionPtr> deps);
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
  bool overwrite = false;  // written whole and not read: no copy needs to be made current
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
