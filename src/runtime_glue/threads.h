// threads.h: the one way libtessera starts a host thread (a stream's CPU worker, a pool stream's
// launcher, the CPU target's program runners). std::thread reports a refusal by the system (the
// limit on processes and threads, ulimit -u, or memory for the stack) with std::system_error, and a
// refusal met at the wrong place terminates the process; here it becomes a tessera::Error naming
// what the thread was for, so that each caller can fall back (run the work on its own thread) or
// fail the launch cleanly. Internal to libtessera.
#pragma once

#include <functional>
#include <string_view>
#include <thread>

namespace tessera::detail {

// A running thread executing `body`; throws tessera::Error ("could not start a host thread for
// <purpose>: ...") if the system refuses one.
std::thread start_thread(std::function<void()> body, std::string_view purpose);

// For tests: the next `n` calls of start_thread fail as if the system had refused a thread (n = 0
// ends a failure injected earlier). Costs start_thread one atomic load.
void fail_next_thread_starts(int n);

}  // namespace tessera::detail
