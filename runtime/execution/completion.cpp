// completion.cpp: HostCompletion, StreamCompletion and the event pool, ForeignCompletion.
#include <fmt/format.h>

#include "execution/execution.h"
#include "tessera/errors.h"

namespace tessera::detail {

std::uint64_t next_order() {
  static std::atomic<std::uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

// --- HostCompletion ------------------------------------------------------------------------

void HostCompletion::wait() const {
  if (!done()) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return done_.load(std::memory_order_acquire); });
  }
  if (error_) std::rethrow_exception(error_);
}

void HostCompletion::finish(std::exception_ptr error) {
  {
    std::lock_guard lock(mutex_);
    error_ = std::move(error);
    done_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

// --- events ----------------------------------------------------------------------------------

namespace {

struct EventPool {
  std::mutex mutex;
  std::vector<CUevent> free;
};

EventPool& event_pool() {
  static EventPool* pool = new EventPool();  // never destroyed: completions may outlive statics
  return *pool;
}

}  // namespace

CUevent acquire_event(CudaDriver& driver) {
  EventPool& pool = event_pool();
  {
    std::lock_guard lock(pool.mutex);
    if (!pool.free.empty()) {
      CUevent e = pool.free.back();
      pool.free.pop_back();
      return e;
    }
  }
  CUevent e = nullptr;
  driver.check(driver.cuEventCreate(&e, kEventDisableTiming), "cuEventCreate");
  return e;
}

void release_event(CUevent event) noexcept {
  if (!event) return;
  EventPool& pool = event_pool();
  std::lock_guard lock(pool.mutex);
  pool.free.push_back(event);
}

StreamCompletion::StreamCompletion(std::shared_ptr<StreamImpl> stream, std::uint64_t seq,
                                   std::shared_ptr<const void> keep_alive)
    : stream_(std::move(stream)), seq_(seq), keep_alive_(std::move(keep_alive)) {
  queue = stream_->gpu_queue();
}

bool StreamCompletion::done() const {
  if (done_.load(std::memory_order_acquire)) return true;
  if (!stream_->issued(seq_) && !gpu_shut_down()) return false;  // still queued for the launcher
  if (stream_->reached(seq_) || gpu_shut_down()) {
    done_.store(true, std::memory_order_release);
    return true;
  }
  CudaDriver* driver = CudaDriver::get_if_available();
  if (!driver) return true;
  try {
    auto mark = stream_->mark_covering(*driver, seq_);
    driver->cuCtxSetCurrent(driver->context());
    CUresult r = driver->cuEventQuery(mark->event);
    if (r == kCudaErrorNotReady) return false;
    if (r == kCudaSuccess) stream_->note_reached(mark->seq);
  } catch (...) {
    // Could not record an event: the context is broken; wait() reports it.
  }
  done_.store(true, std::memory_order_release);  // reached, or failed (wait() reports it)
  return true;
}

void StreamCompletion::wait() const {
  if (!stream_->reached(seq_) && !gpu_shut_down()) {
    CudaDriver& driver = CudaDriver::get();
    CUresult r = stream_->wait_for(driver, seq_);
    done_.store(true, std::memory_order_release);
    driver.check(r, fmt::format("{}: running", what()));
  }
  stream_->throw_launch_failure(seq_);
}

void* StreamCompletion::cuda_event(std::shared_ptr<const void>& hold) const {
  if (stream_->reached(seq_)) return nullptr;  // nothing to wait for
  auto mark = stream_->mark_covering(CudaDriver::get(), seq_);
  hold = mark;
  return mark->event;
}

// --- ForeignCompletion ------------------------------------------------------------------------

bool ForeignCompletion::done() const {
  if (open()) return false;
  return !after_ || after_->done();
}

void ForeignCompletion::wait() const {
  if (open())
    throw Error(fmt::format("tessera: waiting for {}, which has not ended (end() it first)", what()));
  if (after_) after_->wait();
}

void ForeignCompletion::end(CompletionPtr after) {
  after_ = std::move(after);  // published by the release below
  open_.store(false, std::memory_order_release);
}

}  // namespace tessera::detail
