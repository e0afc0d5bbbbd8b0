// execution.h: the machinery behind launch.h, shared by kernel launches, graph replays, unsafe
// CUDA kernels and foreign borrows. Internal to libtessera. The execution layer (runtime/execution/)
// has one file per concern; those declared here:
//
//   completions  HostCompletion (work on a host thread), StreamCompletion (a point of a GPU
//                stream's timeline), ForeignCompletion (a borrow by foreign code, open until it
//                ends) (completion.cpp);
//   queues       StreamImpl: a CPU worker thread and/or a CUstream, both made on first use; the
//                pool of four; every live stream registered for synchronize() (streams.cpp);
//   timelines    GPU submissions on a stream are numbered; an event is recorded only when someone
//                must wait for or test a point (a host wait, a wait from another stream, a poll),
//                and then covers every submission before it. A chain of launches on one stream
//                costs no event at all;
//   launchers    a pool stream hands plain kernel launches (nothing to wait for or upload first)
//                to a thread of its own that makes the driver call, so the submitting thread does
//                only the bookkeeping: the driver's own cost per launch (~3 us on the H200's host)
//                overlaps the next submission. Anything else on that stream first drains the queue;
//   submission   submit_work(): lock the storages used (in address order), collect the work they
//                are in flight with, pick a stream, make the right copy current, enqueue, record
//                the new completion in each storage's tracker (detail/storage.h) (submit.cpp);
//   retirement   memory of dead Storages still used by work in flight, freed once it completes
//                (storage.cpp).
//
// and beside it: launch plans, the one type every launch fills in (launch_plan.h; submitted by
// launch_work.cpp, the CPU target's programs run by cpu_programs.cpp), graphs (graph.cpp), unsafe
// kernels (unsafe_kernels.cpp), foreign borrows (interop.cpp), host threads (threads.h), the
// overlap check of a launch's outputs (output_overlap.h) and device memory (device_memory.h).
#pragma once

#include <array>
#include <atomic>
#include <chrono>
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

#include "driver/cuda_driver.h"
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

// A kernel launch queued for a pool stream's launcher thread (StreamImpl::defer).
struct DeferredLaunch {
  static constexpr std::size_t kMaxSlots = 48;  // a launch with more parameters is made at once
  CUfunction function = nullptr;
  std::array<unsigned, 3> grid{};
  unsigned block = 0;
  unsigned shared_bytes = 0;  // dynamic shared memory (the function is opted into it)
  bool programmatic = true;   // launched with programmatic stream serialization (see cuda_driver.h)
  std::uint64_t seq = 0;  // its submission number, set by defer()
  std::uint32_t count = 0;  // parameter slots used (8 bytes each)
  std::array<std::int64_t, kMaxSlots> slots;
  std::shared_ptr<const void> keep_alive;     // the compiled kernel, until the launch is made
  std::shared_ptr<const std::string> label;   // for a failure's message
};

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
  // Starts this stream's CPU worker thread if it has none; throws tessera::Error if the system
  // refuses a thread (threads.h), leaving the stream as it was.
  void start_worker();
  // Runs `task` on this stream's worker thread after the tasks posted before it (start_worker()
  // first: throws as it does).
  void post(std::function<void()> task);
  // The CUstream (made on first use, non-blocking with respect to the legacy default stream).
  CUstream cuda(CudaDriver& driver);
  // Waits for everything submitted so far (CPU tasks and GPU work).
  void synchronize();

  // The GPU timeline. Held while enqueueing GPU work, so that numbers follow enqueue order.
  std::unique_lock<std::mutex> lock_gpu() { return std::unique_lock<std::mutex>(gpu_mutex_); }
  // Under lock_gpu(), after enqueueing a submission on the CUstream (after drain()): its number.
  std::uint64_t note_submitted() {
    issued_.store(++submitted_, std::memory_order_release);
    return submitted_;
  }
  // Whether launches may be queued for this stream's launcher thread (pool streams: no one else
  // enqueues on their CUstream).
  bool defers() const { return pooled_; }
  // Under lock_gpu(), for each async submission: whether it follows the previous one by less than
  // kBurstGap (a burst, whose launches are worth handing to the launcher thread).
  bool note_async_submission() {
    const auto now = std::chrono::steady_clock::now();
    const bool burst = now - last_async_ < kBurstGap;
    last_async_ = now;
    return burst;
  }
  // Under lock_gpu(): whether the launcher thread is asleep (or not started), its queue empty. A
  // launch is then made by the submitting thread, which wakes the launcher for the launches that
  // may follow (wake_launcher()): an isolated launch does not wait for a thread to wake up.
  bool launcher_idle() const {
    return !launcher_started_.load(std::memory_order_acquire) || sleeping_.load(std::memory_order_seq_cst);
  }
  // Starts the launcher thread, or wakes it to poll for a while. If the system refuses the thread,
  // launches on this stream are made by their submitting threads from then on (never throws: the
  // launch that calls it has been made and must still be recorded).
  void wake_launcher(CudaDriver& driver) noexcept;
  // Under lock_gpu(): the next free entry of the launcher thread's queue (made on first use; waits
  // while the queue is full), to be filled and then handed over with defer(), or left unused.
  DeferredLaunch& next_deferred();
  // Under lock_gpu(), with the launcher thread started: numbers the entry filled last as the next
  // submission, hands it to the launcher thread and returns its number.
  std::uint64_t defer();
  // Under lock_gpu(): returns once every queued launch has been made, before anything else is
  // enqueued on the CUstream, an event is recorded on it or it is synchronized.
  void drain();
  // Whether submission `seq` has been handed to the driver (queued launches: made).
  bool issued(std::uint64_t seq) const { return issued_.load(std::memory_order_acquire) >= seq; }
  // Throws the failure of a queued launch numbered at or before `seq`, if the driver rejected one.
  // Sticky: the work after it on the stream read what the failed kernel did not write.
  void throw_launch_failure(std::uint64_t seq) const;
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

  // The launcher thread of a pool stream and its queue: a ring with one producer at a time (the
  // submitter holding lock_gpu()) and one consumer (the thread). The thread polls for a while when
  // the ring runs empty, then sleeps until a producer sees `sleeping_` and bumps `signal_`.
  static constexpr std::uint64_t kRing = 512;
  static constexpr std::chrono::microseconds kBurstGap{20};
  std::chrono::steady_clock::time_point last_async_{};  // under lock_gpu()
  void launcher_loop(CudaDriver& driver);
  void stop_launcher() noexcept;
  std::unique_ptr<DeferredLaunch[]> ring_;
  alignas(64) std::atomic<std::uint64_t> head_{0};  // entries taken by the thread (written by it)
  alignas(64) std::atomic<std::uint64_t> tail_{0};  // entries handed over (written under lock_gpu())
  std::atomic<bool> launcher_started_{false};
  std::atomic<bool> launcher_refused_{false};  // the system refused the launcher thread
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint32_t> signal_{0};  // bumped to wake the sleeping thread

  const std::uint64_t id_;
  const bool pooled_;
  std::mutex mutex_;  // worker_, cuda_, the start of the launcher
  std::atomic<bool> started_{false};  // worker_ runs (set under mutex_)
  std::shared_ptr<Worker> work_ = std::make_shared<Worker>();
  std::thread worker_;
  CUstream cuda_ = nullptr;
  bool foreign_ = false;
  std::mutex gpu_mutex_;  // below the storage locks; never held while taking another stream's
  std::uint64_t submitted_ = 0;
  std::deque<std::shared_ptr<const Mark>> marks_;  // ascending seq
  std::atomic<std::uint64_t> completed_{0};        // every submission up to it has finished
  alignas(64) std::atomic<std::uint64_t> issued_{0};  // every submission up to it reached the driver
  std::thread launcher_thread_;                    // started by the first wake_launcher()
  std::atomic<std::uint64_t> failed_seq_{0};       // the first queued launch the driver rejected
  std::string failure_;                            // its message, written before failed_seq_
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
  // GPU targets, instead of enqueue_gpu for an asynchronous submission to a pool stream that needs
  // nothing else enqueued first: describes the work as one kernel launch for the stream's launcher
  // thread and returns true, or returns false (then enqueue_gpu is called).
  virtual bool describe_launch(CudaDriver&, DeferredLaunch&) { return false; }
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
// The device address of `s`'s copy (made if missing: a failed allocation throws tessera::Error
// naming the bytes asked and the GPU's free memory). Under s.mutex.
CUdeviceptr device_address(CudaDriver& driver, Storage& s);
// Enqueues on `stream` what makes the device copy of `s` current (it exists): a zero fill for the
// zeros of a new storage (no host copy is made), else the upload of the host copy. Under s.mutex.
void make_device_current(CudaDriver& driver, Storage& s, CUstream stream);
// Copies the device copy to the host copy. Under s.mutex, with the writer done.
void download(Storage& s);

// --- retirement (storage.cpp) -------------------------------------------------------------

// Frees `host` and `mirror` once every completion in `pending` is done.
void retire(std::byte* host, std::unique_ptr<DeviceMirror> mirror, std::vector<CompletionPtr> pending);
// Frees what has become free; `wait_all` first waits for everything (at exit, synchronize()).
void sweep_retired(bool wait_all = false);

}  // namespace tessera::detail
