// streams.cpp: StreamImpl (a CPU worker thread and a CUstream, made on first use), the pool of
// four, the registry of live streams behind tessera::synchronize(), the public Stream functions,
// and the process-exit drain: before the library's statics go, every stream is waited for and the
// retired memory freed, so no work in flight ever outlives what it uses.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <future>
#include <unordered_map>

#include "execution/execution.h"
#include "tessera/errors.h"
#include "execution/threads.h"

namespace tessera::detail {
namespace {

std::uint64_t next_stream_id() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Every live StreamImpl, for synchronize(), and the pool. Never destroyed (streams may be
// destroyed by user statics after ours); the exit drain below empties it.
class Streams {
 public:
  static Streams& get() {
    static Streams* streams = new Streams();
    return *streams;
  }

  void add(const std::shared_ptr<StreamImpl>& s) {
    std::lock_guard lock(mutex_);
    live_[s.get()] = s;
  }
  void remove(StreamImpl* s) {
    std::lock_guard lock(mutex_);
    live_.erase(s);
  }
  void synchronize_all() {
    // Synchronizing a stream must not hold mutex_ (a stream's tasks may make or drop streams).
    std::vector<std::shared_ptr<StreamImpl>> all;
    {
      std::lock_guard lock(mutex_);
      for (auto& [raw, weak] : live_)
        if (auto s = weak.lock()) all.push_back(std::move(s));
    }
    for (auto& s : all) s->synchronize();
  }

  std::shared_ptr<StreamImpl> pool(std::size_t i) {
    std::lock_guard lock(pool_mutex_);
    if (!pool_[i]) {
      pool_[i] = StreamImpl::make(true, nullptr);
      pool_ptr_[i].store(pool_[i].get(), std::memory_order_release);
      pool_id_[i].store(pool_[i]->id(), std::memory_order_release);
    }
    return pool_[i];
  }
  std::size_t next_round_robin() { return round_robin_.fetch_add(1, std::memory_order_relaxed) % pool_.size(); }
  // The pool stream with this id, if any (no lock: an id is published after its stream).
  StreamImpl* pool_by_id(std::uint64_t id) {
    for (std::size_t i = 0; i < pool_.size(); ++i)
      if (pool_id_[i].load(std::memory_order_acquire) == id) return pool_ptr_[i].load(std::memory_order_acquire);
    return nullptr;
  }
  // At exit: joins the pool's workers (unless work in flight still holds a pool stream).
  void drop_pool() {
    std::array<std::shared_ptr<StreamImpl>, 4> old;
    {
      std::lock_guard lock(pool_mutex_);
      for (std::size_t i = 0; i < pool_.size(); ++i) {
        pool_id_[i].store(0, std::memory_order_release);
        pool_ptr_[i].store(nullptr, std::memory_order_release);
        old[i] = std::move(pool_[i]);
      }
    }
  }

 private:
  Streams() = default;
  std::mutex mutex_;
  std::unordered_map<StreamImpl*, std::weak_ptr<StreamImpl>> live_;
  std::mutex pool_mutex_;
  std::array<std::shared_ptr<StreamImpl>, 4> pool_;
  std::array<std::atomic<std::uint64_t>, 4> pool_id_{};
  std::array<std::atomic<StreamImpl*>, 4> pool_ptr_{};
  std::atomic<std::size_t> round_robin_{0};
};

std::atomic<bool> gpu_exit_done{false};

// Process exit: constructed when libtessera is loaded, so destroyed after every static made later
// (the user's included): lets all work in flight finish, then frees the memory that waited for it.
// With a GPU in use, prepare_gpu_exit() has drained once already, before libcuda's exit handlers.
struct ExitDrain {
  ~ExitDrain() {
    try {
      Streams::get().synchronize_all();
      sweep_retired(/*wait_all=*/true);
      Streams::get().drop_pool();
    } catch (...) {
    }
  }
};
ExitDrain exit_drain;

}  // namespace

StreamImpl::StreamImpl(bool pooled, CUstream foreign)
    : id_(next_stream_id()), pooled_(pooled), cuda_(foreign), foreign_(foreign != nullptr) {}

std::shared_ptr<StreamImpl> StreamImpl::make(bool pooled, CUstream foreign) {
  std::shared_ptr<StreamImpl> s(new StreamImpl(pooled, foreign));
  Streams::get().add(s);
  return s;
}

StreamImpl::~StreamImpl() {
  Streams::get().remove(this);
  stop_launcher();  // makes the launches still queued
  {
    std::lock_guard lock(work_->mutex);
    work_->stop = true;
  }
  work_->cv.notify_all();
  if (worker_.joinable()) {
    // The last reference may go on the worker itself (a task held the last GPU completion of this
    // stream): it finishes its queue and exits on its own then.
    if (worker_.get_id() == std::this_thread::get_id())
      worker_.detach();
    else
      worker_.join();  // runs what was posted first
  }
  if (cuda_ && !foreign_ && !gpu_shut_down()) {
    if (CudaDriver* d = CudaDriver::get_if_available()) {
      d->cuCtxSetCurrent(d->context());
      d->cuStreamSynchronize(cuda_);
      d->cuStreamDestroy_v2(cuda_);
    }
  }
}

void StreamImpl::start_worker() {
  if (started_.load(std::memory_order_acquire)) return;  // no lock once it runs
  std::lock_guard lock(mutex_);
  if (started_.load(std::memory_order_relaxed)) return;
  worker_ = start_thread([w = work_] { Worker::loop(w); }, "a stream's CPU worker");  // throws Error
  started_.store(true, std::memory_order_release);
}

void StreamImpl::post(std::function<void()> task) {
  start_worker();
  {
    std::lock_guard lock(work_->mutex);
    if (work_->stop) throw Error("tessera: work posted to a stream that is being destroyed");
    work_->tasks.push_back(std::move(task));
  }
  work_->cv.notify_one();
}

void StreamImpl::Worker::loop(std::shared_ptr<Worker> w) {
  std::vector<std::function<void()>> batch;
  for (;;) {
    {
      std::unique_lock lock(w->mutex);
      w->cv.wait(lock, [&] { return w->stop || !w->tasks.empty(); });
      if (w->tasks.empty()) return;  // stopped and drained
      batch.swap(w->tasks);
    }
    for (auto& task : batch) task();  // tasks catch their own exceptions
    batch.clear();                    // may drop the last reference to the stream
  }
}

CUstream StreamImpl::cuda(CudaDriver& driver) {
  std::lock_guard lock(mutex_);
  if (!cuda_) {
    driver.make_current();
    driver.check(driver.cuStreamCreate(&cuda_, kStreamNonBlocking), "cuStreamCreate");
  }
  return cuda_;
}

void StreamImpl::synchronize() {
  bool has_worker;
  CUstream s;
  std::uint64_t upto;
  {
    std::lock_guard lock(mutex_);
    has_worker = started_.load(std::memory_order_relaxed);
    s = cuda_;
  }
  {
    std::lock_guard lock(gpu_mutex_);
    drain();
    upto = submitted_;
  }
  if (has_worker) {
    std::promise<void> reached;
    auto f = reached.get_future();
    post([&reached] { reached.set_value(); });
    f.wait();
  }
  if (s && !gpu_shut_down()) {
    CudaDriver& d = CudaDriver::get();
    d.make_current();
    d.check(d.cuStreamSynchronize(s), "cuStreamSynchronize");
    note_reached(upto);
  }
}

std::shared_ptr<const Mark> StreamImpl::mark_covering(CudaDriver& driver, std::uint64_t seq) {
  std::lock_guard lock(gpu_mutex_);
  const std::uint64_t done = completed_.load(std::memory_order_acquire);
  while (marks_.size() > 1 && marks_.front()->seq <= done) marks_.pop_front();  // holders keep theirs
  for (const auto& m : marks_)
    if (m->seq >= seq) return m;
  // Nothing covers it yet: record an event now, after everything submitted so far.
  drain();
  CUevent event = acquire_event(driver);
  driver.make_current();
  if (CUresult r = driver.cuEventRecord(event, cuda_); r != kCudaSuccess) {
    release_event(event);
    driver.check(r, "cuEventRecord");
  }
  auto m = std::make_shared<const Mark>(submitted_, event);
  marks_.push_back(m);
  return m;
}

CUresult StreamImpl::wait_for(CudaDriver& driver, std::uint64_t seq) {
  std::uint64_t latest;
  {
    std::lock_guard lock(gpu_mutex_);
    drain();
    latest = submitted_;
  }
  driver.make_current();
  if (latest == seq) {
    CUresult r = driver.cuStreamSynchronize(cuda_);
    if (r == kCudaSuccess) note_reached(latest);
    return r;
  }
  auto mark = mark_covering(driver, seq);
  CUresult r = driver.cuEventSynchronize(mark->event);
  if (r == kCudaSuccess) note_reached(mark->seq);
  return r;
}

// --- the launcher thread -------------------------------------------------------------------

namespace {

// Polling before sleeping (the launcher on its ring, a drain on the launcher): about 50 us.
constexpr int kPollSpins = 20000;

// A short pause while polling.
void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

}  // namespace

DeferredLaunch& StreamImpl::next_deferred() {
  if (!ring_) ring_ = std::make_unique<DeferredLaunch[]>(kRing);
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  while (tail - head_.load(std::memory_order_acquire) >= kRing) std::this_thread::yield();  // full: ~1 ms of launches
  return ring_[tail % kRing];
}

std::uint64_t StreamImpl::defer() {
  const std::uint64_t seq = ++submitted_;
  const std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  ring_[tail % kRing].seq = seq;
  tail_.store(tail + 1, std::memory_order_seq_cst);
  if (sleeping_.load(std::memory_order_seq_cst)) {
    signal_.fetch_add(1, std::memory_order_seq_cst);
    signal_.notify_one();
  }
  return seq;
}

void StreamImpl::wake_launcher(CudaDriver& driver) noexcept {
  if (launcher_refused_.load(std::memory_order_relaxed)) return;
  {
    std::lock_guard lock(mutex_);
    if (!launcher_thread_.joinable()) {
      try {
        launcher_thread_ = start_thread([this, &driver] { launcher_loop(driver); }, "a pool stream's launcher");
      } catch (const Error&) {
        // No launcher: every launch on this stream stays on its submitting thread (launcher_idle()
        // stays true), which is correct, only slower. Not retried: one refusal per stream.
        launcher_refused_.store(true, std::memory_order_relaxed);
        return;
      }
      launcher_started_.store(true, std::memory_order_release);
      return;
    }
  }
  signal_.fetch_add(1, std::memory_order_seq_cst);
  signal_.notify_one();
}

void StreamImpl::drain() {
  const std::uint64_t target = submitted_;
  // The launcher is at work (a launch takes it a few microseconds): poll first, since sleeping on
  // issued_ would add a thread wake-up (measured: 8-10 us on the H200's host) to a synchronous wait.
  for (int i = 0; i < kPollSpins && issued_.load(std::memory_order_acquire) < target; ++i) pause();
  for (std::uint64_t v = issued_.load(std::memory_order_acquire); v < target;
       v = issued_.load(std::memory_order_acquire))
    issued_.wait(v, std::memory_order_acquire);
}

void StreamImpl::throw_launch_failure(std::uint64_t seq) const {
  const std::uint64_t failed = failed_seq_.load(std::memory_order_acquire);
  if (failed != 0 && failed <= seq) throw Error(failure_);
}

void StreamImpl::launcher_loop(CudaDriver& driver) {
  std::array<void*, DeferredLaunch::kMaxSlots> params{};
  driver.cuCtxSetCurrent(driver.context());  // if this failed, so does every launch, and says so
  std::uint64_t head = head_.load(std::memory_order_relaxed);
  for (;;) {
    std::uint64_t tail = tail_.load(std::memory_order_acquire);
    for (int i = 0; i < kPollSpins && tail == head; ++i) {
      pause();
      tail = tail_.load(std::memory_order_acquire);
    }
    if (tail == head) {
      // Sleep, unless a producer handed something over meanwhile (it reads sleeping_ after its
      // store to tail_; both orders are seq_cst, so one of the two sees the other).
      sleeping_.store(true, std::memory_order_seq_cst);
      const std::uint32_t signal = signal_.load(std::memory_order_seq_cst);
      if (tail_.load(std::memory_order_seq_cst) == head) {
        if (stop_.load(std::memory_order_seq_cst)) return;  // stopped, and every launch was made
        signal_.wait(signal, std::memory_order_seq_cst);  // until a producer or wake_launcher()
      }
      sleeping_.store(false, std::memory_order_seq_cst);
      continue;  // poll again
    }
    for (; head != tail; ++head) {
      DeferredLaunch& d = ring_[head % kRing];
      if (!gpu_shut_down()) {
        for (std::uint32_t i = 0; i < d.count; ++i) params[i] = &d.slots[i];
        CUresult r = d.programmatic ? launch_programmatic(driver, d.function, d.grid, {d.block, 1, 1},
                                                          d.shared_bytes, cuda_, params.data())
                                    : driver.cuLaunchKernel(d.function, d.grid[0], d.grid[1], d.grid[2], d.block, 1, 1,
                                                            d.shared_bytes, cuda_, params.data(), nullptr);
        if (r != kCudaSuccess && failed_seq_.load(std::memory_order_relaxed) == 0) {
          failure_ = fmt::format("tessera: {} could not be launched (cuLaunchKernelEx, grid {}x{}x{}, block {}): {}",
                                 d.label ? *d.label : std::string("a kernel"), d.grid[0], d.grid[1], d.grid[2],
                                 d.block, driver.error_text(r));
          failed_seq_.store(d.seq, std::memory_order_release);
        }
      }
      const std::uint64_t seq = d.seq;
      d.keep_alive.reset();  // its completion keeps the compiled kernel too
      d.label.reset();
      head_.store(head + 1, std::memory_order_release);  // the entry may be reused now
      issued_.store(seq, std::memory_order_release);
    }
    issued_.notify_all();
  }
}

void StreamImpl::stop_launcher() noexcept {
  std::lock_guard lock(mutex_);  // no wake_launcher() meanwhile (there is no user left anyway)
  if (!launcher_thread_.joinable()) return;
  stop_.store(true, std::memory_order_seq_cst);
  signal_.fetch_add(1, std::memory_order_seq_cst);
  signal_.notify_all();
  launcher_thread_.join();
}

void StreamImpl::note_reached(std::uint64_t seq) {
  std::uint64_t cur = completed_.load(std::memory_order_relaxed);
  while (cur < seq && !completed_.compare_exchange_weak(cur, seq, std::memory_order_acq_rel)) {
  }
}

void prepare_gpu_exit() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::atexit([] {
      try {
        Streams::get().synchronize_all();
        sweep_retired(/*wait_all=*/true);
      } catch (...) {
      }
      gpu_exit_done.store(true, std::memory_order_release);
    });
  });
}

bool gpu_shut_down() { return gpu_exit_done.load(std::memory_order_acquire); }

std::shared_ptr<StreamImpl> pool_stream_for(std::span<const CompletionPtr> deps) {
  Streams& streams = Streams::get();
  std::uint64_t best_order = 0;
  StreamImpl* best = nullptr;
  for (const CompletionPtr& d : deps) {
    if (d->order <= best_order || d->queue == 0) continue;
    if (StreamImpl* s = streams.pool_by_id(d->queue / 2)) {
      best = s;
      best_order = d->order;
    }
  }
  return best ? best->shared_from_this() : streams.pool(streams.next_round_robin());
}

void synchronize_streams() { Streams::get().synchronize_all(); }

}  // namespace tessera::detail

namespace tessera {

namespace {
std::atomic<bool> strict_flag{false};
}  // namespace

Stream Stream::create() { return Stream(detail::StreamImpl::make(false, nullptr)); }

Stream Stream::from_cuda(void* cu_stream) {
  if (!cu_stream)
    throw Error("tessera::Stream::from_cuda: the legacy default stream (null) cannot be used; pass a created stream");
  return Stream(detail::StreamImpl::make(false, static_cast<detail::CUstream>(cu_stream)));
}

std::uint64_t Stream::id() const { return impl_ ? impl_->id() : 0; }

void Stream::synchronize() const {
  if (impl_) impl_->synchronize();
}

void* Stream::cuda_stream() const {
  if (!impl_) throw Error("tessera::Stream::cuda_stream: an empty Stream names no stream");
  return impl_->cuda(detail::CudaDriver::get());
}

void set_strict_host_access(bool strict) { strict_flag.store(strict, std::memory_order_relaxed); }
bool strict_host_access() { return strict_flag.load(std::memory_order_relaxed); }

void synchronize() {
  detail::synchronize_streams();
  detail::sweep_retired();
}

namespace detail {
void wait_quietly(const CompletionPtr& c) noexcept {
  if (!c) return;
  try {
    c->wait();
  } catch (...) {
  }
}
}  // namespace detail

}  // namespace tessera
