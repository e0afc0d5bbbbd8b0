// threads.h: the one way libtessera starts a host thread (a stream's CPU worker, a pool stream's
// launcher, the CPU target's program runners). std::thread reports a refusal by the system (the
// limit on processes and threads, ulimit -u, or memory for the stack) with std::system_error, and a
// refusal met at the wrong place terminates the process; here it becomes a tessera::Error naming
// what the thread was for, so that each caller can fall back (run the work on its own thread) or
// fail the launch cleanly. Internal to libtessera.
//
// Some work needs more stack than an arbitrary caller's thread is known to have: compiling a kernel
// (the AST parser and walkers, MLIR's and LLVM's recursions go one level deeper per level of
// nesting; compiler/pipeline.h, kCompilerStackBytes) and running a CPU kernel's programs (each
// program's frame, which the compile measures: CpuProgram::stack_bytes). StackThread starts a
// thread with a stack of a given size (POSIX threads; glibc's pthread_getattr_np gives a thread's
// stack bounds for stack_left).
#pragma once

#include <pthread.h>

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <thread>

namespace tessera::detail {

// A running thread executing `body`; throws tessera::Error ("could not start a host thread for
// <purpose>: ...") if the system refuses one.
std::thread start_thread(std::function<void()> body, std::string_view purpose);

// A thread with `stack_bytes` of stack (rounded up to the page size, at least PTHREAD_STACK_MIN)
// running `body`. join() waits for it and rethrows what body threw; the destructor joins (and
// drops that exception). The constructor throws tessera::Error as start_thread does when the
// system refuses the thread (its stack too: a lowered RLIMIT_AS). Failures injected by
// fail_next_thread_starts apply to it only when `injectable` (threads whose refusal the caller
// falls back from, like the CPU target's program runners; not the compiler's).
class StackThread {
 public:
  StackThread(std::size_t stack_bytes, std::function<void()> body, std::string_view purpose,
              bool injectable = false);
  StackThread(const StackThread&) = delete;
  StackThread& operator=(const StackThread&) = delete;
  ~StackThread();
  void join();

 private:
  static void* start(void* self);
  std::function<void()> body_;
  std::exception_ptr error_;
  pthread_t thread_{};
  bool joined_ = false;
};

// Runs `body` on a StackThread of `stack_bytes` and waits for it; rethrows what body threw.
void run_with_stack(std::size_t stack_bytes, const std::function<void()>& body, std::string_view purpose);

// Bytes of stack left below the caller's frame on this thread (0 if its bounds are unknown). The
// bounds are read once per thread.
std::size_t stack_left();

// For tests: the next `n` calls of start_thread (and injectable StackThreads) fail as if the
// system had refused a thread (n = 0 ends a failure injected earlier). Costs start_thread one
// atomic load.
void fail_next_thread_starts(int n);

}  // namespace tessera::detail
