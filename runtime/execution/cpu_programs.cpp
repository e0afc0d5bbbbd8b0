// cpu_programs.cpp: see cpu_programs.h.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <exception>
#include <new>
#include <thread>
#include <vector>

#include "execution/cpu_programs.h"
#include "execution/threads.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

// A program's workspace (CpuProgram::workspace_bytes): 64-byte aligned, freed at the end of the
// scope; none for 0 bytes. Throws std::bad_alloc.
class Workspace {
 public:
  explicit Workspace(std::size_t bytes)
      : bytes_(bytes), data_(bytes ? ::operator new(bytes, std::align_val_t{64}) : nullptr) {}
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  ~Workspace() {
    if (data_) ::operator delete(data_, std::align_val_t{64});
  }
  // The five int64 of its descriptor (see CpuProgram::run).
  std::array<int64_t, 5> descriptor() const {
    const auto address = reinterpret_cast<int64_t>(data_);
    return {address, address, 0, static_cast<int64_t>(bytes_), 1};
  }

 private:
  std::size_t bytes_;
  void* data_;
};

// Stack that run_programs' own frames take below a program's (the loop over programs).
constexpr std::size_t kRunnerStackBytes = std::size_t{16} << 10;
// Smallest stack of the threads run_programs starts.
constexpr std::size_t kMinWorkerStackBytes = std::size_t{1} << 20;

}  // namespace

// Programs run on the calling thread (all of them when there are few) when its stack has room for
// a program's frames (CpuProgram::stack_bytes), else on a thread started with that much stack (the
// caller's may be small: a user's thread pool, a low RLIMIT_STACK); the other workers' threads
// too. Each thread has a workspace of its own.
void run_programs(const CpuProgram& k, std::span<const int64_t> base, const Grid& grid) {
  const int64_t programs = grid.count();
  if (programs == 0) return;
  static const unsigned cores = std::thread::hardware_concurrency();  // reads sysfs: once
  unsigned workers = std::max(1u, std::min<unsigned>(cores, 16));
  if (programs < 64) workers = 1;
  const std::size_t workspace_bytes = k.workspace_bytes;
  const std::size_t stack = k.stack_bytes + kRunnerStackBytes;
  auto work = [&](int64_t begin, int64_t end) {
    Workspace workspace(workspace_bytes);
    std::vector<int64_t> slots(base.begin(), base.end());
    std::array<int32_t, 6> ids{0, 0, 0, static_cast<int32_t>(grid.dims[0]), static_cast<int32_t>(grid.dims[1]),
                               static_cast<int32_t>(grid.dims[2])};
    std::array<int64_t, 5> workspace_slots = workspace.descriptor();
    std::vector<void*> argv;
    for (auto& s : slots) argv.push_back(&s);
    for (auto& id : ids) argv.push_back(&id);
    for (auto& w : workspace_slots) argv.push_back(&w);
    for (int64_t p = begin; p < end; ++p) {
      ids[0] = static_cast<int32_t>(p % grid.dims[0]);
      ids[1] = static_cast<int32_t>((p / grid.dims[0]) % grid.dims[1]);
      ids[2] = static_cast<int32_t>(p / (grid.dims[0] * grid.dims[1]));
      k.run(k.code, argv.data());
    }
  };
  // Programs run on the calling thread only if its stack has room for a program's frames.
  const bool room_here = stack_left() >= stack;
  const std::size_t thread_stack = std::max(stack, kMinWorkerStackBytes);
  auto run_here = [&](int64_t begin, int64_t end) {
    if (room_here) return work(begin, end);
    run_with_stack(thread_stack, [&] { work(begin, end); }, "the CPU target's programs");  // or Error
  };
  if (workers == 1) return run_here(0, programs);
  // Chunks 0..workers-2 on threads of their own, the last on the calling thread. If the system
  // refuses a thread (threads.h), the calling thread runs every chunk from that one on: fewer
  // threads, same result. The threads are destroyed (joined) before `work` if run_here throws.
  std::vector<std::unique_ptr<StackThread>> threads;
  threads.reserve(workers);
  const int64_t chunk = (programs + workers - 1) / workers;
  int64_t here = 0;  // the first program the calling thread runs
  while (here + chunk < programs && threads.size() + 1 < workers) {
    try {
      threads.push_back(std::make_unique<StackThread>(
          thread_stack, [&work, b = here, e = here + chunk] { work(b, e); }, "the CPU target's programs",
          /*injectable=*/true));
    } catch (const Error&) {
      break;
    }
    here += chunk;
  }
  run_here(here, programs);
  // An exception on a worker (std::bad_alloc for its workspace) is rethrown once all have ended.
  std::exception_ptr failure;
  for (auto& t : threads) {
    try {
      t->join();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
  if (failure) std::rethrow_exception(failure);
}

}  // namespace tessera::detail
