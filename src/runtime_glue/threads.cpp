// threads.cpp: see threads.h.
#include "threads.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <system_error>

#include "tessera/errors.h"

namespace tessera::detail {
namespace {
std::atomic<int> injected_failures{0};
}  // namespace

std::thread start_thread(std::function<void()> body, std::string_view purpose) {
  try {
    for (int n = injected_failures.load(std::memory_order_relaxed); n > 0;)
      if (injected_failures.compare_exchange_weak(n, n - 1))
        throw std::system_error(EAGAIN, std::generic_category(), "injected by a test");
    return std::thread(std::move(body));
  } catch (const std::system_error& e) {
    throw Error(fmt::format("could not start a host thread for {}: {} (is the limit on threads, ulimit -u, "
                            "reached?)",
                            purpose, e.what()));
  }
}

void fail_next_thread_starts(int n) { injected_failures.store(n < 0 ? 0 : n, std::memory_order_relaxed); }

}  // namespace tessera::detail
