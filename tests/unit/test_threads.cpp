// test_threads.cpp: launching from several host threads.
//
// Covers: concurrent first launches of one kernel compile it once (single flight, counted with
// cache_stats()); threads sharing inputs and writing their own outputs; threads writing one tensor
// (read-modify-write kernels: the writers are serialized, no update is lost); threads chaining
// async work through tensors another thread writes; host access from one thread while others
// launch. (Concurrent processes sharing the disk cache: cache.across_processes in ctest.)
#include "execution_helpers.h"

#include <atomic>
#include <latch>
#include <thread>

using namespace tessera;
using namespace exec_test;

static void compiled_once(Target t) {
  // A kernel no other test uses, so that this is its first launch in the process.
  auto k = kernel(t == Target::cpu ? "threads_first_cpu" : "threads_first_gpu",
                  [](auto out, auto a) { return out.store(a.load_like(out) * c<3>); });
  const int threads = 8;
  auto x = iota_tensor(1000);
  std::vector<Tensor<float, 1>> outs;
  for (int i = 0; i < threads; ++i) outs.emplace_back(std::array<int64_t, 1>{1000});
  CacheStats before = cache_stats();
  std::latch start(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      start.arrive_and_wait();
      k.launch(on(t), outs[i].partition<128>(), x);
    });
  for (auto& th : pool) th.join();
  CacheStats after = cache_stats();
  CHECK(after.compiles + after.disk_hits - before.compiles - before.disk_hits == 1);
  CHECK(after.memory_hits - before.memory_hits >= threads - 1);
  for (auto& o : outs) CHECK(std::as_const(o)(999) == 2997.0f);
}
TESSERA_TARGET_TEST_CASE("concurrent first launches in a process compile the kernel once", "[threads][counts-compiles]",
                         compiled_once)

static void shared_inputs_private_outputs(Target t) {
  const int threads = 4, launches = 40;
  auto x = iota_tensor(2048);
  std::vector<Tensor<float, 1>> outs;
  for (int i = 0; i < threads; ++i) outs.emplace_back(std::array<int64_t, 1>{2048});
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&, i] {
      Tensor<float, 1> tmp({2048});
      for (int j = 0; j < launches; ++j) {
        // Alternate sync and async launches: tmp = x + 1, out = tmp + 1.
        add_one_kernel().launch_async(on(t), tmp.partition<256>(), x).detach();
        if (j % 2) add_one_kernel().launch(on(t), outs[i].partition<256>(), tmp);
        else add_one_kernel().launch_async(on(t), outs[i].partition<256>(), tmp).detach();
      }
    });
  for (auto& th : pool) th.join();
  for (auto& o : outs) CHECK(std::as_const(o)(2047) == 2049.0f);
}
TESSERA_TARGET_TEST_CASE("threads launching with a shared input and outputs of their own", "[threads]",
                         shared_inputs_private_outputs)

static void writers_serialized(Target t) {
  const int threads = 4, launches = 25;
  Tensor<float, 1> counter({1000});
  std::latch start(threads);
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back([&] {
      start.arrive_and_wait();
      std::vector<LaunchHandle<>> hs;
      for (int j = 0; j < launches; ++j) hs.push_back(increment_kernel().launch_async(on(t), counter.partition<128>()));
    });
  for (auto& th : pool) th.join();
  CHECK(std::as_const(counter)(0) == static_cast<float>(threads * launches));
  CHECK(std::as_const(counter)(999) == static_cast<float>(threads * launches));
}
TESSERA_TARGET_TEST_CASE("threads writing one tensor are serialized: no update is lost", "[threads][borrow]",
                         writers_serialized)

static void chains_across_threads(Target t) {
  // Thread A writes a, thread B (started later) reads a and writes b, and so on, all async.
  const int stages = 6;
  std::vector<Tensor<float, 1>> bufs;
  for (int i = 0; i <= stages; ++i) bufs.emplace_back(std::array<int64_t, 1>{512});
  bufs[0].fill(1.0f);
  std::atomic<int> submitted{0};
  std::vector<std::thread> pool;
  for (int s = 0; s < stages; ++s)
    pool.emplace_back([&, s] {
      while (submitted.load() != s) std::this_thread::yield();  // submit in stage order
      add_one_kernel().launch_async(on(t), bufs[s + 1].partition<128>(), bufs[s]).detach();
      submitted.store(s + 1);
    });
  for (auto& th : pool) th.join();
  CHECK(std::as_const(bufs[stages])(511) == 1.0f + stages);
}
TESSERA_TARGET_TEST_CASE("async work submitted from different threads chains through tensors", "[threads]",
                         chains_across_threads)

TEST_CASE("host reads on one thread while other threads launch on other tensors", "[cpu][threads]") {
  auto x = iota_tensor(4096);
  Tensor<float, 1> mine({4096}), theirs({4096});
  mine.fill(2.0f);
  std::atomic<bool> stop{false};
  std::atomic<int> launched{0};
  std::thread launcher([&] {
    while (!stop.load()) {
      add_one_kernel().launch_async(on(Target::cpu), theirs.partition<128>(), x).detach();
      launched++;
    }
  });
  double sum = 0;
  int rounds = 0;
  for (; rounds < 50 || launched.load() < 100; ++rounds)
    for (int64_t i = 0; i < 4096; ++i) sum += std::as_const(mine)(i);
  stop = true;
  launcher.join();
  CHECK(sum == rounds * 4096.0 * 2);
  CHECK(std::as_const(theirs)(10) == 11.0f);
}
