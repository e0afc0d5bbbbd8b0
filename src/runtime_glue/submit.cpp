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

#include "execution.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

// Sorted by address, one entry per storage (a write wins).
std::vector<Use> merged(const std::vector<Use>& given) {
  std::vector<Use> uses(given);
  std::sort(uses.begin(), uses.end(), [](const Use& a, const Use& b) { return a.storage < b.storage; });
  std::size_t n = 0;
  for (const Use& u : uses) {
    if (n > 0 && uses[n - 1].storage == u.storage)
      uses[n - 1].write = uses[n - 1].write || u.write;
    else
      uses[n++] = u;
  }
  uses.resize(n);
  return uses;
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
  std::vector<Use> uses = merged(sub.uses);
  std::vector<std::unique_lock<std::mutex>> locks;
  locks.reserve(uses.size());
  for (const Use& u : uses) locks.emplace_back(u.storage->mutex);

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

  StreamImpl* queue = options && options->stream ? options->stream.impl().get() : nullptr;
  const bool run_inline = !sub.gpu && sub.wait && !queue;
  if (!queue && !run_inline) queue = &pool_stream_for(deps);
  const bool strict = options && options->strict_host_access;

  CompletionPtr done;
  if (!sub.gpu) {
    // The host copies must be current: download what a GPU kernel wrote last (after it is done).
    for (const Use& u : uses) {
      Storage& s = *u.storage;
      s.host_raw();
      if (!s.host_valid) {
        wait_quietly(s.writer);
        download(s);
        s.host_valid = true;
      }
    }
    std::function<void()> task = work.cpu_task();
    auto c = std::make_shared<HostCompletion>();
    c->queue = run_inline ? 0 : queue->id();
    c->order = next_order();
    c->strict = strict;
    c->label = sub.label;
    for (const Use& u : uses) record_use(*u.storage, u.write, c, false);
    if (run_inline) {
      locks.clear();
      for (const CompletionPtr& d : deps) wait_quietly(d);
      try {
        task();
        c->finish();
      } catch (...) {
        c->finish(std::current_exception());
      }
    } else {
      std::erase_if(deps, [&](const CompletionPtr& d) { return d->queue == c->queue; });  // in order anyway
      // Posted before the locks are released: see the file comment.
      queue->post([deps = std::move(deps), task = std::move(task), c, keep = work.keep_alive()] {
        for (const CompletionPtr& d : deps) wait_quietly(d);
        try {
          task();
          c->finish();
        } catch (...) {
          c->finish(std::current_exception());
        }
      });
    }
    done = c;
  } else {
    CudaDriver& driver = CudaDriver::get();
    prepare_gpu_exit();
    driver.make_current();
    CUstream stream = queue->cuda(driver);
    for (const CompletionPtr& d : deps) {
      if (d->queue == queue->id()) continue;  // earlier on the same stream
      if (d->cuda_event)
        driver.check(driver.cuStreamWaitEvent(stream, static_cast<CUevent>(d->cuda_event), 0), "cuStreamWaitEvent");
      else
        wait_quietly(d);  // host work (CPU target, foreign host code): wait for it here
    }
    // The device copies must be current: upload what the host wrote last, ordered on this stream.
    std::vector<Storage*> uploaded;
    for (const Use& u : uses) {
      Storage& s = *u.storage;
      CUdeviceptr address = device_address(driver, s);
      if (!s.device_valid) {
        if (s.bytes())
          driver.check(driver.cuMemcpyHtoDAsync_v2(address, s.host_raw(), s.bytes(), stream),
                       "cuMemcpyHtoDAsync (tensor upload)");
        s.device_valid = true;
        uploaded.push_back(&s);
      }
    }
    CUevent event = acquire_event(driver);
    try {
      work.enqueue_gpu(driver, stream);
      driver.check(driver.cuEventRecord(event, stream), "cuEventRecord");
    } catch (...) {
      release_event(event);
      for (Storage* s : uploaded) s->device_valid = false;  // upload again next time
      throw;
    }
    auto c = std::make_shared<EventCompletion>(event, work.keep_alive());
    c->queue = queue->id();
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
