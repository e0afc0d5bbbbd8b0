// single_flight.h: one computation per key in the process, however many threads ask for it at
// once. The first caller of a key computes its value on its own thread; callers that come
// meanwhile wait for that result (or rethrow its exception), later ones get it at once. A
// computation that throws is forgotten, so that a later call tries again (after the user fixed the
// environment, say). The kernel cache (src/compiler/kernel_cache.cpp) and unsafe kernels
// (execution/unsafe_kernels.cpp) use it for their compiles, which take long enough that holding
// one lock around them would serialize unrelated kernels; across processes the disk cache's
// compile lock does the same (disk_cache.h). Thread-safe.
#pragma once

#include <exception>
#include <future>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace tessera::detail {

template <class Value, class Key = std::string>
class SingleFlight {
 public:
  // The value of `key`: the one computed or being computed by an earlier call, else `make()`'s,
  // computed here. `found`, if not null, is set to whether an earlier call had the key. Rethrows
  // the computation's exception.
  template <class Make>
  Value get(const Key& key, Make&& make, bool* found = nullptr) {
    std::promise<Value> promise;
    std::shared_future<Value> future;
    bool ours = false;
    {
      std::lock_guard lock(mutex_);
      auto [it, inserted] = entries_.try_emplace(key);
      if (inserted) it->second = promise.get_future().share();
      future = it->second;
      ours = inserted;
    }
    if (found) *found = !ours;
    if (!ours) return future.get();
    try {
      promise.set_value(std::forward<Make>(make)());
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard lock(mutex_);
      entries_.erase(key);
    }
    return future.get();
  }

  // Forgets every key (computations under way finish for their callers).
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, std::shared_future<Value>> entries_;
};

}  // namespace tessera::detail
