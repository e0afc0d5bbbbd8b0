// compile_all.cpp: tessera::compile_all, a warm-up's compiles on threads (kernel.h).
//
// Compiles are independent and the kernel cache is thread-safe: compiles of one key meet in its
// single flight, and the disk cache locks an entry while it is compiled. So the threads take the
// next compile from a shared index until none is left; a compile that throws is noted in its
// slot, and the first noted one is rethrown once every thread has ended, so that no compile is
// still running (and no thread left behind) when the caller sees the error.
#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

#include "tessera/kernel.h"

namespace tessera {

void compile_all(std::span<const PendingCompile> compiles, unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, compiles.size()));
  std::vector<std::exception_ptr> errors(compiles.size());
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < compiles.size();) {
      try {
        compiles[i].compile();
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {
        break;  // no more threads to be had: those started and this one do the rest
      }
    }
    work();
  }  // the jthreads join here
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace tessera
