// thread_limit.cpp: tessera in a process that the system refuses every new thread (test
// execution.thread_limit). It lowers RLIMIT_NPROC to 1 (as root it first becomes user nobody,
// since root ignores that limit), checks that std::thread now fails, and then launches on the CPU
// target a kernel compiled before: a synchronous launch of many programs runs them on the calling
// thread with the right results; the first compile of another kernel, which runs on a thread of
// known stack (kCompilerStackBytes), fails with a tessera::Error naming that kernel; an asynchronous launch, which needs a stream's worker thread, fails with a
// tessera::Error naming the kernel; afterwards host access and synchronous launches still work and
// the process exits normally. Prints "PASSED", or "skipped: ..." where the limit cannot be set up.
#include <tessera/tessera.h>

#include <grp.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <system_error>
#include <thread>

using namespace tessera;

namespace {

int failures = 0;
void check(bool ok, const std::string& what) {
  std::printf("%s: %s\n", ok ? "ok" : "FAIL", what.c_str());
  failures += ok ? 0 : 1;
}

// Whether the system refuses a new thread now.
bool threads_refused() {
  try {
    std::thread t([] {});
    t.join();
    return false;
  } catch (const std::system_error&) {
    return true;
  }
}

}  // namespace

int main() {
  auto inc = kernel("limit_inc", [](auto out, auto a) { return out.store(a.load_like(out) + c<1>); });
  const int64_t n = 1 << 16;
  LaunchOptions cpu;
  cpu.target = Target::cpu;
  {
    Tensor<float, 1> x({n}), y({n});
    inc.launch(cpu, y.partition<64>(), x);  // compiled while threads may start
  }
  if (geteuid() == 0) {
    const uid_t nobody = 65534;
    if (setgroups(0, nullptr) != 0 || setgid(nobody) != 0 || setuid(nobody) != 0) {
      std::printf("skipped: cannot drop root privileges to apply RLIMIT_NPROC\n");
      return 0;
    }
  }
  const rlimit one{1, 1};
  if (setrlimit(RLIMIT_NPROC, &one) != 0 || !threads_refused()) {
    std::printf("skipped: the system still starts threads under RLIMIT_NPROC = 1\n");
    return 0;
  }
  std::printf("ok: std::thread fails under RLIMIT_NPROC = 1\n");
  try {
    Tensor<float, 1> x({n}), y({n});
    for (int64_t i = 0; i < n; ++i) x(i) = static_cast<float>(i);
    inc.launch(cpu, y.partition<64>(), x);  // 1024 programs, normally on several threads
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += y(i) != x(i) + 1;
    check(bad == 0, "a synchronous launch runs its programs on the calling thread");
    std::string message;
    try {
      inc.launch_async(cpu, y.partition<64>(), x).wait();
    } catch (const Error& e) {
      message = e.what();
    }
    check(message.find("kernel 'limit_inc'") != std::string::npos &&
              message.find("could not start a host thread") != std::string::npos,
          "an asynchronous launch fails with an Error naming the kernel: " + message);
    std::string compile_message;
    try {
      kernel("limit_new", [](auto out, auto a) { return out.store(a.load_like(out) * c<2>); })
          .launch(cpu, y.partition<64>(), x);
    } catch (const Error& e) {
      compile_message = e.what();
    }
    check(compile_message.find("kernel 'limit_new'") != std::string::npos &&
              compile_message.find("could not start a host thread") != std::string::npos,
          "a first compile fails with an Error naming the kernel: " + compile_message);
    y(0) = 7;  // nothing of the failed launch is in flight
    check(y(0) == 7, "host access goes on");
    inc.launch(cpu, x.partition<64>(), y);
    check(x(0) == 8 && x(n - 1) == static_cast<float>(n - 1) + 2, "and so do synchronous launches");
    synchronize();
  } catch (const std::exception& e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  std::printf("%s\n", failures ? "FAILED" : "PASSED");
  return failures ? 1 : 0;
}
