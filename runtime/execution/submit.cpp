// submit.cpp: submit_work(), the one place where work is ordered after what its tensors are in
// use by, put on a stream, and recorded as their new writer or reader (see execution.h).
//
// Why this cannot deadlock: a submission holds the locks of every storage it uses (taken in
// address order) from collecting its dependencies until it has been enqueued and recorded. So
// each piece of work depends only on work enqueued before it, every in-order queue runs work in
// enqueue order, and waiting therefore always points backwards in one total order. Worker threads
// never take storage locks.
#include <fmt/format.h>

#include <algorithm>

#include "execution/execution.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

// Runs a CPU task and finishes its completion with the task's exception, if any.
template <class C>
void run_to_completion(const std::function<void()>& task, C& c) {
  try {
    task();
    c.finish();
  } catch (...) {
    c.finish(std::current_exception());
  }
}

// Sorted by address, one entry per storage (a write wins), into `uses`.
void merge_uses(const std::vector<Use>& given, std::vector<Use>& uses) {
  uses.assign(given.begin(), given.end());
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.storage < b.storage; });
  std::size_t n = 0;
  for (const Use& u : uses) {
    if (n > 0 && uses[n - 1].storage == u.storage) {
      uses[n - 1].write = uses[n - 1].write || u.write;
      uses[n - 1].overwrite = uses[n - 1].overwrite && u.overwrite;
    } else
      uses[n++] = u;
  }
  uses.resize(n);
}

void add_dependency(std::vector<CompletionPtr>& deps, const CompletionPtr& c, const Submission& sub) {
  if (!c) return;
  if (c->open())
    throw Error(fmt::format("tessera: {} uses a tensor borrowed by {}, which has not ended: end the borrow first",
                            *sub.label, c->what()));
  if (CompletionPtr r = c->resolved(c)) deps.push_back(std::move(r));
}

}  // namespace

void record_use(Storage& s, bool write, const CompletionPtr& c, bool gpu) {
  if (write) {
    s.writer = c;
    s.readers.clear();
    s.host_valid = !gpu;
    s.device_valid = gpu;
    s.host_read_ok.store(false, std::memory_order_release);
  } else {
    if (c->queue != 0)
      std::erase_if(s.readers, [&](const CompletionPtr& r) { return r->queue == c->queue; });
    if (s.readers.size() >= 8) std::erase_if(s.readers, [](const CompletionPtr& r) { return r->done(); });
    s.readers.push_back(c);
  }
  s.host_write_ok.store(false, std::memory_order_release);
}

CompletionPtr submit_work(const Submission& sub, Work& work) {
  sweep_retired();
  const LaunchOptions* options = sub.options;
  // Scratch reused across submissions on this thread (submit_work is not re-entered).
  thread_local std::vector<Use> uses;
  thread_local std::vector<std::unique_lock<std::mutex>> locks;
  merge_uses(sub.uses, uses);
  locks.clear();
  struct Unlock {  // also on exceptions
    std::vector<std::unique_lock<std::mutex>>& locks;
    ~Unlock() { locks.clear(); }
  } unlock_on_exit{locks};
  for (const Use& u : uses) locks.emplace_back(u.storage->mutex);
  // Under the lock that Storage::freeze sets the flag under: a tensor frozen by another thread
  // after the launch's own checks is never written (the launchers' checks name the parameter;
  // this one closes the window between them and here).
  for (const Use& u : uses)
    if (u.write && u.storage->frozen())
      throw Error(fmt::format("tessera: {} writes a frozen tensor (Tensor::freeze made it read-only)", *sub.label));

  std::vector<CompletionPtr> deps;
  deps.reserve(uses.size() + 2 + (options ? options->after.size() : 0));
  if (options)
    for (const Event& e : options->after) add_dependency(deps, e.completion(), sub);
  for (const Use& u : uses) {
    Storage& s = *u.storage;
    add_dependency(deps, s.writer, sub);
    if (u.write)
      for (const CompletionPtr& r : s.readers) add_dependency(deps, r, sub);
    if (sub.gpu && s.device_ready) add_dependency(deps, s.device_ready, sub);
  }

  std::shared_ptr<StreamImpl> queue = options && options->stream ? options->stream.impl() : nullptr;
  const bool run_inline = !sub.gpu && sub.wait && !queue;
  if (!queue && !run_inline) queue = pool_stream_for(deps);
  const bool strict = options && options->strict_host_access;

  CompletionPtr done;
  if (!sub.gpu) {
    // The host copies must be current: download what a GPU kernel wrote last (after it is done).
    for (const Use& u : uses) {
      Storage& s = *u.storage;
      if (!s.host_valid && !u.overwrite) {
        wait_quietly(s.writer);
        download(s);
      }
      s.host_raw();  // zeros if new; before anything is recorded (std::bad_alloc leaves no trace)
      s.host_valid = true;
    }
    std::function<void()> task = work.cpu_task();
    if (!run_inline) {
      // Before anything is recorded: a stream whose worker thread cannot be started fails the
      // submission and leaves the tensors as they were.
      try {
        queue->start_worker();
      } catch (const Error& e) {
        throw Error(fmt::format("tessera: {}: {}", *sub.label, e.what()));
      }
    }
    auto c = std::make_shared<HostCompletion>();
    c->queue = run_inline ? 0 : queue->cpu_queue();
    c->order = next_order();
    c->strict = strict;
    c->label = sub.label;
    for (const Use& u : uses) record_use(*u.storage, u.write, c, false);
    if (run_inline) {
      locks.clear();
      for (const CompletionPtr& d : deps) wait_quietly(d);
      run_to_completion(task, *c);
    } else {
      std::erase_if(deps, [&](const CompletionPtr& d) { return d->queue == c->queue; });  // in order anyway
      // Posted before the locks are released: see the file comment.
      queue->post([deps = std::move(deps), task = std::move(task), c, keep = work.keep_alive()] {
        for (const CompletionPtr& d : deps) wait_quietly(d);
        run_to_completion(task, *c);
      });
    }
    done = c;
  } else {
    CudaDriver& driver = CudaDriver::get();
    prepare_gpu_exit();
    CUstream stream = queue->cuda(driver);
    if (queue->defers()) queue->throw_launch_failure(~std::uint64_t{0});  // the stream is broken
    // Work on other streams: their events (recorded now if need be), taken before this stream's
    // timeline is locked (one stream lock at a time). Host work: waited for here.
    std::vector<std::shared_ptr<const void>> holds;  // the marks waited for, kept until enqueued
    std::vector<CUevent> waits;
    for (const CompletionPtr& d : deps) {
      if (d->queue == queue->gpu_queue()) continue;  // earlier on the same stream
      std::shared_ptr<const void> hold;
      if (void* e = d->cuda_event(hold)) {
        waits.push_back(static_cast<CUevent>(e));
        holds.push_back(std::move(hold));
      } else {
        wait_quietly(d);
      }
    }
    // The device copies must be current: what the host wrote last is uploaded (ordered on the
    // stream) unless the work overwrites all of it.
    bool uploads = false;
    for (const Use& u : uses) {
      Storage& s = *u.storage;
      try {
        device_address(driver, s);  // made if missing
      } catch (const Error& e) {
        throw Error(fmt::format("tessera: {}: {}", *sub.label, e.what()));
      }
      uploads = uploads || (!s.device_valid && !u.overwrite && s.bytes());
    }
    auto timeline = queue->lock_gpu();
    std::uint64_t seq;
    std::vector<Storage*> uploaded;
    // An async launch in a burst (the stream's previous one was moments ago) goes to the launcher
    // thread; an isolated one is made here (no hand-over between threads in its latency), and
    // wakes the launcher, if it sleeps, for the launches that may follow.
    const bool async = queue->defers() && !sub.wait;
    const bool burst = async && queue->note_async_submission();
    const bool wake = async && queue->launcher_idle();
    if (burst && !wake && waits.empty() && !uploads && work.describe_launch(driver, queue->next_deferred())) {
      for (const Use& u : uses) u.storage->device_valid = true;  // written whole, or current already
      seq = queue->defer();
    } else {
      queue->drain();
      driver.make_current();
      for (CUevent e : waits) driver.check(driver.cuStreamWaitEvent(stream, e, 0), "cuStreamWaitEvent");
      for (const Use& u : uses) {
        Storage& s = *u.storage;
        if (!s.device_valid && u.overwrite) {
          s.device_valid = true;  // the kernel writes all of it
        } else if (!s.device_valid) {
          make_device_current(driver, s, stream);  // an upload, or zeros for a new tensor
          s.device_valid = true;
          uploaded.push_back(&s);
        }
      }
      try {
        work.enqueue_gpu(driver, stream);
      } catch (...) {
        for (Storage* s : uploaded) s->device_valid = false;  // upload again next time
        throw;
      }
      seq = queue->note_submitted();
    }
    timeline.unlock();
    if (wake) queue->wake_launcher(driver);  // for the launches that may follow this one
    auto c = std::make_shared<StreamCompletion>(queue, seq, work.keep_alive());
    c->order = next_order();
    c->strict = strict;
    c->label = sub.label;
    for (Storage* s : uploaded) s->device_ready = c;
    for (const Use& u : uses) record_use(*u.storage, u.write, c, true);
    done = c;
  }
  locks.clear();
  if (sub.wait) done->wait();
  return done;
}

}  // namespace tessera::detail
