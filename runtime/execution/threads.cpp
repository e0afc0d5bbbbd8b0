// threads.cpp: see threads.h.
#include "execution/threads.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <utility>

#include "tessera/errors.h"

namespace tessera::detail {
namespace {
std::atomic<int> injected_failures{0};

// Whether a failure injected by fail_next_thread_starts is due (and takes it).
bool injected_failure() {
  for (int n = injected_failures.load(std::memory_order_relaxed); n > 0;)
    if (injected_failures.compare_exchange_weak(n, n - 1)) return true;
  return false;
}

[[noreturn]] void refused(std::string_view purpose, std::string_view why) {
  throw Error(fmt::format("could not start a host thread for {}: {} (is the limit on threads, ulimit -u, "
                          "reached?)",
                          purpose, why));
}

// The lowest address of this thread's stack, or 0 when unknown.
std::uintptr_t stack_low_end() {
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  void* low = nullptr;
  std::size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  return rc == 0 ? reinterpret_cast<std::uintptr_t>(low) : 0;
}

}  // namespace

std::thread start_thread(std::function<void()> body, std::string_view purpose) {
  try {
    if (injected_failure()) throw std::system_error(EAGAIN, std::generic_category(), "injected by a test");
    return std::thread(std::move(body));
  } catch (const std::system_error& e) {
    refused(purpose, e.what());
  }
}

StackThread::StackThread(std::size_t stack_bytes, std::function<void()> body, std::string_view purpose,
                         bool injectable)
    : body_(std::move(body)) {
  if (injectable && injected_failure()) refused(purpose, "injected by a test");
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::size_t size = std::max<std::size_t>(stack_bytes, PTHREAD_STACK_MIN);
  size = (size + page - 1) / page * page;
  pthread_attr_t attr;
  int rc = pthread_attr_init(&attr);
  if (rc == 0) {
    rc = pthread_attr_setstacksize(&attr, size);
    if (rc == 0) rc = pthread_create(&thread_, &attr, &StackThread::start, this);
    pthread_attr_destroy(&attr);
  }
  if (rc != 0) refused(purpose, fmt::format("{} bytes of stack: {}", size, std::strerror(rc)));
}

StackThread::~StackThread() {
  if (!joined_) pthread_join(thread_, nullptr);
}

void StackThread::join() {
  if (!joined_) {
    pthread_join(thread_, nullptr);
    joined_ = true;
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

void* StackThread::start(void* self) {
  auto* t = static_cast<StackThread*>(self);
  try {
    t->body_();
  } catch (...) {
    t->error_ = std::current_exception();
  }
  return nullptr;
}

void run_with_stack(std::size_t stack_bytes, const std::function<void()>& body, std::string_view purpose) {
  StackThread thread(stack_bytes, body, purpose);
  thread.join();
}

std::size_t stack_left() {
  thread_local const std::uintptr_t low = stack_low_end();
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  return low != 0 && here > low ? here - low : 0;
}

void fail_next_thread_starts(int n) { injected_failures.store(n < 0 ? 0 : n, std::memory_order_relaxed); }

}  // namespace tessera::detail
