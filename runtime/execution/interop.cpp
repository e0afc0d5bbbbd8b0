// interop.cpp: borrows of tessera tensors by foreign code (include/tessera/interop.h). A borrow
// is recorded in the tensor's tracker as a ForeignCompletion, open until end(): conflicting uses
// meanwhile are refused (submit_work, host access), later ones are ordered after the event end()
// records on the foreign stream (device) or after nothing (host code has finished by then).
#include <fmt/format.h>

#include "execution/execution.h"
#include "tessera/errors.h"
#include "tessera/interop.h"

namespace tessera::detail {

struct ForeignBorrowState {
  std::shared_ptr<Storage> storage;
  std::shared_ptr<ForeignCompletion> completion;
  std::shared_ptr<StreamImpl> stream;  // device borrows
  void* address = nullptr;
  bool ended = false;
};

std::shared_ptr<ForeignBorrowState> begin_foreign_borrow(std::shared_ptr<Storage> storage, bool write, bool device,
                                                         const Stream& stream) {
  if (!storage) throw Error("tessera: a moved-from tensor cannot be borrowed");
  if (device && !stream) throw Error("tessera::borrow_for_device: name the stream the foreign work runs on");
  sweep_retired();
  auto state = std::make_shared<ForeignBorrowState>();
  state->storage = storage;
  state->stream = stream.impl();
  auto c = std::make_shared<ForeignCompletion>();
  c->order = next_order();
  c->label = std::make_shared<const std::string>(
      fmt::format("a foreign {} borrow ({})", write ? "exclusive" : "shared", device ? "device" : "host"));
  Storage& s = *storage;
  std::lock_guard lock(s.mutex);
  if (write && s.frozen())  // under the lock Storage::freeze sets it under
    throw Error("tessera: an exclusive borrow of a frozen tensor (Tensor::freeze made it read-only)");
  std::vector<CompletionPtr> deps;
  auto add = [&](const CompletionPtr& d) {
    if (!d) return;
    if (d->open())
      throw Error(fmt::format("tessera: cannot take {}: the tensor is already borrowed by {}, which has not ended",
                              c->what(), d->what()));
    if (CompletionPtr r = d->resolved(d)) deps.push_back(std::move(r));
  };
  add(s.writer);
  if (write)
    for (const CompletionPtr& r : s.readers) add(r);
  if (device) {
    CudaDriver& driver = CudaDriver::get();
    driver.make_current();
    CUstream cs = state->stream->cuda(driver);
    add(s.device_ready);
    for (const CompletionPtr& d : deps) {
      if (d->queue == state->stream->gpu_queue()) continue;
      std::shared_ptr<const void> hold;
      if (void* e = d->cuda_event(hold))
        driver.check(driver.cuStreamWaitEvent(cs, static_cast<CUevent>(e), 0), "cuStreamWaitEvent");
      else
        wait_quietly(d);
    }
    CUdeviceptr address = device_address(driver, s);
    if (!s.device_valid) {
      if (s.bytes()) make_device_current(driver, s, cs);
      s.device_valid = true;
    }
    state->address = reinterpret_cast<void*>(address);
  } else {
    for (const CompletionPtr& d : deps) wait_quietly(d);
    if (!s.host_valid) {
      download(s);
      s.host_valid = true;
    }
    state->address = s.host_raw();  // zeros, if nothing was written yet
  }
  record_use(s, write, c, device);
  state->completion = std::move(c);
  return state;
}

void end_foreign_borrow(ForeignBorrowState& state) {
  if (state.ended) return;
  state.ended = true;
  CompletionPtr after;
  if (state.stream) {
    // The foreign work was enqueued on the stream before now: a point of its timeline after it.
    std::uint64_t seq;
    {
      auto timeline = state.stream->lock_gpu();
      seq = state.stream->note_submitted();
    }
    auto e = std::make_shared<StreamCompletion>(state.stream, seq, nullptr);
    e->order = next_order();
    e->label = state.completion->label;
    after = std::move(e);
  }
  state.completion->end(std::move(after));
  // Host access may find the tensor quiet again: let its slow path re-check.
  state.storage->host_read_ok.store(false, std::memory_order_release);
  state.storage->host_write_ok.store(false, std::memory_order_release);
}

void* foreign_borrow_address(const ForeignBorrowState& state) { return state.address; }

}  // namespace tessera::detail
