// test_async.cpp: synchronous and asynchronous launches under one set of rules (launch.h).
//
// Covers: handles and owned outputs (moved in, given back by get()); chains ordered by their
// tensors without host synchronisation; readers share while a writer waits for them; host access
// to a tensor in flight waits, or throws in strict mode (process-wide and per launch); a handle,
// a tensor or a stream destroyed while its work is in flight never frees memory early; several
// streams, joins and LaunchOptions::after; a burst of async launches interrupted by host reads,
// other streams and synchronous launches (on a GPU: by work that drains the launcher thread's
// queue); a CPU launch after a GPU one and back (coherence).
#include "execution_helpers.h"

#include <chrono>
#include <thread>

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

// Restores process-wide strict host access when a test ends.
struct StrictScope {
  explicit StrictScope(bool on) { set_strict_host_access(on); }
  ~StrictScope() { set_strict_host_access(false); }
};

}  // namespace

static void handle_returns_owned_outputs(Target t) {
  auto x = iota_tensor(1000);
  Tensor<float, 1> z({1000});
  auto h = add_one_kernel().launch_async(on(t), std::move(z).partition<128>(), x);
  static_assert(std::is_same_v<decltype(h), LaunchHandle<Tensor<float, 1>>>);
  Tensor<float, 1> back = std::move(h).get();
  CHECK(back(0) == 1.0f);
  CHECK(back(999) == 1000.0f);
  // A synchronous launch gives the owned output back as its result.
  Tensor<float, 1> again = add_one_kernel().launch(on(t), std::move(back).partition<128>(), x);
  CHECK(again(10) == 11.0f);
  // Two outputs moved in come back as a tuple.
  auto two = kernel("exec_two_outputs", [](auto o1, auto o2, auto a) {
    return seq(o1.store(a.load_like(o1)), o2.store(a.load_like(o2) + c<2>));
  });
  Tensor<float, 1> p({1000}), q({1000});
  auto [p2, q2] = two.launch_async(on(t), std::move(p).partition<128>(), std::move(q).partition<128>(), x).get();
  CHECK(p2(5) == 5.0f);
  CHECK(q2(5) == 7.0f);
}
TESSERA_TARGET_TEST_CASE("an async launch owns moved-in outputs until get() gives them back", "[async]",
                         handle_returns_owned_outputs)

static void chain_is_ordered(Target t) {
  const int64_t n = 4097;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n});
  auto inc = add_one_kernel();
  std::vector<LaunchHandle<>> handles;
  handles.push_back(inc.launch_async(on(t), a.partition<128>(), x));
  for (int i = 0; i < 50; ++i) {  // a -> b -> a -> ...: each reads the previous one's output
    if (i % 2 == 0)
      handles.push_back(inc.launch_async(on(t), b.partition<128>(), a));
    else
      handles.push_back(inc.launch_async(on(t), a.partition<128>(), b));
  }
  // No wait: host access waits for the last writer (a: 51 increments, b: 50).
  CHECK(std::as_const(b)(0) == 50.0f);
  CHECK(std::as_const(a)(0) == 51.0f);
  CHECK(std::as_const(a)(n - 1) == static_cast<float>(n - 1 + 51));
  for (auto& h : handles) CHECK(h.ready());
}
TESSERA_TARGET_TEST_CASE("a chain of async launches is ordered by its tensors, with no host wait between",
                         "[async]", chain_is_ordered)

// On a GPU, a burst of async launches on a pool stream is made by its launcher thread; host reads,
// reads from another stream and synchronous launches in the middle of it must still see exactly
// the launches submitted before them (they drain the launcher's queue first).
static void burst_with_interruptions(Target t) {
  const int64_t n = 3000;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n}), side({n}), joined({n});
  auto inc = add_one_kernel();
  inc.launch(on(t), a.partition<128>(), x);  // a = x + 1
  Stream other = Stream::create();
  LaunchOptions elsewhere = on(t);
  elsewhere.stream = other;
  for (int i = 0; i < 600; ++i) {  // launch i writes x + i + 2 into b (even i) or a (odd i)
    Tensor<float, 1>& written = i % 2 == 0 ? b : a;
    if (i % 2 == 0)
      inc.launch_async(on(t), b.partition<128>(), a).detach();
    else
      inc.launch_async(on(t), a.partition<128>(), b).detach();
    const float expect = static_cast<float>(i + 2);
    if (i % 97 == 0) CHECK(std::as_const(written)(n - 1) == expect + static_cast<float>(n - 1));
    if (i % 151 == 0) {
      copy_kernel().launch_async(elsewhere, side.partition<128>(), written).detach();  // read on another stream
      CHECK(std::as_const(side)(7) == expect + 7.0f);
    }
    if (i % 211 == 0) {
      inc.launch(on(t), joined.partition<128>(), written);  // synchronous, in the middle
      CHECK(joined(9) == expect + 10.0f);
    }
  }
  CHECK(std::as_const(a)(5) == 601.0f + 5.0f);
  CHECK(std::as_const(b)(5) == 600.0f + 5.0f);
}
TESSERA_TARGET_TEST_CASE("a burst of async launches, interrupted by host reads, other streams and synchronous "
                         "launches, stays exact",
                         "[async][streams]", burst_with_interruptions)

static void readers_share_writer_waits(Target t) {
  const int64_t n = 1024;
  auto x = iota_tensor(n);
  Tensor<float, 1> r1({n}), r2({n});
  auto slow = slow_copy_kernel();
  auto h1 = slow.launch_async(on(t), r1.partition<128>(), x, slow_iterations(t) / 4);
  auto h2 = slow.launch_async(on(t), r2.partition<128>(), x, slow_iterations(t) / 4);
  // A writer of x must wait for both readers: they see the old x.
  Tensor<float, 1> seven({n});
  seven.fill(7.0f);
  auto w = copy_kernel().launch_async(on(t), x.partition<128>(), seven);
  w.wait();
  CHECK(h1.ready());
  CHECK(h2.ready());
  CHECK(std::as_const(r1)(100) == 100.0f);
  CHECK(std::as_const(r2)(1000) == 1000.0f);
  CHECK(std::as_const(x)(3) == 7.0f);
}
TESSERA_TARGET_TEST_CASE("readers share a tensor; a writer is ordered after every reader", "[async]",
                         readers_share_writer_waits)

static void host_access_waits(Target t) {
  const int64_t n = 256;
  auto x = iota_tensor(n, 3);
  Tensor<float, 1> z({n});
  auto h = slow_copy_kernel().launch_async(on(t), z.partition<128>(), x, slow_iterations(t) / 4);
  // Reading z waits for its writer; writing x waits for its reader.
  CHECK(std::as_const(z)(7) == 10.0f);
  CHECK(h.ready());
  auto h2 = slow_copy_kernel().launch_async(on(t), z.partition<128>(), x, slow_iterations(t) / 4);
  x(0) = -1.0f;  // waits for h2 to stop reading x
  CHECK(h2.ready());
  CHECK(std::as_const(z)(0) == 3.0f);
}
TESSERA_TARGET_TEST_CASE("host access to a tensor in flight waits for the work", "[async]", host_access_waits)

TEST_CASE("strict host access: touching a tensor in flight throws", "[cpu][async][borrow]") {
  auto gate = make_gate();
  auto x = iota_tensor(300);
  Tensor<float, 1> z({300});
  StrictScope strict(true);
  auto h = copy_kernel().launch_async(after_gate(gate), z.partition<128>(), x);
  CHECK_FALSE(h.ready());
  CHECK_THROWS_WITH(std::as_const(z)(0), Contains("host read of a tensor in use by kernel 'exec_copy' in flight"));
  CHECK_THROWS_WITH(z.fill(1.0f), Contains("host write") && Contains("kernel 'exec_copy'"));
  CHECK(std::as_const(x)(299) == 299.0f);  // reading an input in flight is fine
  CHECK_THROWS_WITH(x(0) = 5.0f, Contains("host write of a tensor in use by kernel 'exec_copy'"));
  gate->open();
  h.wait();
  CHECK(std::as_const(z)(299) == 299.0f);
  x(0) = 5.0f;
}

TEST_CASE("strict host access for one launch", "[cpu][async][borrow]") {
  auto gate = make_gate();
  auto x = iota_tensor(300);
  Tensor<float, 1> z({300}), w({300});
  auto options = after_gate(gate);
  options.strict_host_access = true;
  auto strict = copy_kernel().launch_async(options, z.partition<128>(), x);
  auto lenient = copy_kernel().launch_async(on(Target::cpu), w.partition<128>(), x);
  CHECK_THROWS_WITH(std::as_const(z)(0), Contains("in flight"));
  CHECK(std::as_const(w)(4) == 4.0f);  // waits
  gate->open();
  strict.wait();
  CHECK(std::as_const(z)(4) == 4.0f);
}

TEST_CASE("a handle destroyed while its launch is in flight waits for it", "[cpu][async][borrow]") {
  auto gate = make_gate();
  auto x = iota_tensor(300);
  Tensor<float, 1> z({300});
  std::thread opener;
  std::chrono::steady_clock::time_point t0;
  {
    auto h = copy_kernel().launch_async(after_gate(gate), z.partition<128>(), x);
    CHECK_FALSE(h.ready());
    // The gate opens 50 ms after the launch was submitted (not after the test began: the compile
    // may take longer than that, e.g. under a sanitizer).
    t0 = std::chrono::steady_clock::now();
    opener = std::thread([gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      gate->open();
    });
  }  // waits here
  auto waited = std::chrono::steady_clock::now() - t0;
  opener.join();
  CHECK(waited >= std::chrono::milliseconds(40));
  REQUIRE(z.storage()->writer);
  CHECK(z.storage()->writer->done());
  CHECK(std::as_const(z)(299) == 299.0f);
}

TEST_CASE("a tensor destroyed while a launch writes it is freed only after the launch", "[cpu][async][borrow]") {
  synchronize();
  REQUIRE(detail::retired_count() == 0);
  auto gate = make_gate();
  auto x = iota_tensor(300);
  Tensor<float, 1> out({300});
  {
    Tensor<float, 1> tmp({300});
    copy_kernel().launch_async(after_gate(gate), tmp.partition<128>(), x).detach();
    // The next launch reads tmp, then tmp's last handle goes: its memory must outlive both.
    copy_kernel().launch_async(on(Target::cpu), out.partition<128>(), tmp).detach();
  }
  CHECK(detail::retired_count() == 1);
  gate->open();
  CHECK(std::as_const(out)(123) == 123.0f);  // waits for the chain
  synchronize();                              // frees what waited for it
  CHECK(detail::retired_count() == 0);
}

TEST_CASE("an input moved into a temporary keeps its memory until the launch ends", "[cpu][async][borrow]") {
  auto gate = make_gate();
  Tensor<float, 1> z({300});
  auto h = copy_kernel().launch_async(after_gate(gate), z.partition<128>(), iota_tensor(300, 1));
  gate->open();
  h.wait();
  CHECK(std::as_const(z)(0) == 1.0f);
}

TEST_CASE("a moved-from tensor is rejected at launch", "[cpu][async][errors]") {
  Tensor<float, 1> x({10}), z({10});
  Tensor<float, 1> y = std::move(x);
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  CHECK_THROWS_WITH(copy_kernel().launch_on(Target::cpu, z.partition<128>(), x), Contains("moved-from tensor"));
}

TEST_CASE("a handle without outputs throws on get and detach", "[cpu][async][errors]") {
  Tensor<float, 1> z({10});
  auto h = copy_kernel().launch_async(on(Target::cpu), std::move(z).partition<128>(), iota_tensor(10));
  auto moved = std::move(h);
  Tensor<float, 1> back = std::move(moved).get();
  CHECK(std::as_const(back)(9) == 9.0f);
  // NOLINTNEXTLINE(bugprone-use-after-move): the misuse under test
  CHECK_THROWS_WITH(std::move(moved).get(), Contains("holds no outputs"));
  LaunchHandle<Tensor<float, 1>> empty;
  CHECK_THROWS_WITH(std::move(empty).detach(), Contains("holds no outputs"));
}

static void streams_and_join(Target t) {
  const int64_t n = 2048;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n}), sum({n});
  Stream s1 = Stream::create(), s2 = Stream::create();
  LaunchOptions o1 = on(t), o2 = on(t);
  o1.stream = s1;
  o2.stream = s2;
  auto ha = slow_copy_kernel().launch_async(o1, a.partition<128>(), x, slow_iterations(t) / 8);
  auto hb = add_one_kernel().launch_async(o2, b.partition<128>(), x);
  CHECK(ha.event().completion()->queue / 2 == s1.id());
  CHECK(hb.event().completion()->queue / 2 == s2.id());
  // The join reads both: ordered after both without a host wait.
  auto j = add_kernel().launch_async(on(t), sum.partition<128>(), a, b);
  j.wait();
  CHECK(ha.ready());
  CHECK(hb.ready());
  CHECK(std::as_const(sum)(10) == 21.0f);
  s1.synchronize();
  s2.synchronize();
}
TESSERA_TARGET_TEST_CASE("launches on two streams, joined by a launch that reads both", "[async][streams]",
                         streams_and_join)

static void after_orders_unrelated_work(Target t) {
  const int64_t n = 512;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n});
  auto first = slow_copy_kernel().launch_async(on(t), a.partition<128>(), x, slow_iterations(t) / 8);
  LaunchOptions o = on(t);
  o.after = {first.event()};
  auto second = add_one_kernel().launch_async(o, b.partition<128>(), x);  // shares nothing with `first`
  second.wait();
  CHECK(first.ready());
  CHECK(std::as_const(b)(1) == 2.0f);
}
TESSERA_TARGET_TEST_CASE("LaunchOptions::after orders work that shares no tensor", "[async][streams]",
                         after_orders_unrelated_work)

static void pool_keeps_chains_on_one_stream(Target t) {
  auto x = iota_tensor(256);
  Tensor<float, 1> a({256}), b({256});
  auto inc = add_one_kernel();
  auto h1 = inc.launch_async(on(t), a.partition<128>(), x);
  auto h2 = inc.launch_async(on(t), b.partition<128>(), a);  // depends on h1: same pool stream
  CHECK(h1.event().completion()->queue == h2.event().completion()->queue);
  h2.wait();
}
TESSERA_TARGET_TEST_CASE("a launch that depends on work in flight follows it onto its pool stream", "[async][streams]",
                         pool_keeps_chains_on_one_stream)

TEST_CASE("a stream destroyed with work in flight finishes it first", "[cpu][async][streams]") {
  auto gate = make_gate();
  auto x = iota_tensor(300);
  Tensor<float, 1> z({300});
  LaunchHandle<> h;
  {
    Stream s = Stream::create();
    auto o = after_gate(gate);
    o.stream = s;
    h = copy_kernel().launch_async(o, z.partition<128>(), x);
    std::thread opener([gate] {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      gate->open();
    });
    opener.detach();
  }  // the stream's worker runs what was posted before it goes
  CHECK(h.ready());
  CHECK(std::as_const(z)(77) == 77.0f);
}

TEST_CASE("synchronous CPU launches still run inline and report errors at once", "[cpu][async]") {
  auto x = iota_tensor(100);
  Tensor<float, 1> z({100});
  CHECK_THROWS_WITH(copy_kernel().launch_on(Target::cpu, x.partition<128>(), x), Contains("aliases"));
  add_one_kernel().launch_on(Target::cpu, z.partition<128>(), x);
  REQUIRE(z.storage()->writer);
  CHECK(z.storage()->writer->queue == 0);  // ran on the calling thread
  CHECK(std::as_const(z)(99) == 100.0f);
}

static void mixed_targets(Target t) {
  if (t == Target::cpu) return;  // the GPU variant exercises the CPU <-> GPU hand-over
  const int64_t n = 5000;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n}), c2({n});
  auto inc = add_one_kernel();
  auto h1 = inc.launch_async(on(t), a.partition<128>(), x);              // GPU writes a
  auto h2 = inc.launch_async(on(Target::cpu), b.partition<128>(), a);    // CPU reads a (downloaded)
  auto h3 = inc.launch_async(on(t), c2.partition<128>(), b);             // GPU reads b (uploaded)
  CHECK(std::as_const(c2)(n - 1) == static_cast<float>(n - 1 + 3));
  CHECK(std::as_const(a)(0) == 1.0f);
}
TESSERA_TARGET_TEST_CASE("work moves between the CPU target and the GPU with the tensors kept coherent", "[async]",
                         mixed_targets)

static void strict_in_flight_gpu(Target t) {
  if (t == Target::cpu) return;  // covered deterministically with gates above
  auto x = iota_tensor(128);
  Tensor<float, 1> z({128});
  StrictScope strict(true);
  auto h = slow_copy_kernel().launch_async(on(t), z.partition<128>(), x, slow_iterations(t));
  if (h.ready()) {
    WARN("the slow kernel finished before the check: strict access not exercised");
  } else {
    CHECK_THROWS_WITH(std::as_const(z)(0), Contains("in flight"));
  }
  h.wait();
  CHECK(std::as_const(z)(5) == 5.0f);
}
TESSERA_TARGET_TEST_CASE("strict host access on the GPU: reading a tensor a kernel still writes throws",
                         "[async][borrow]", strict_in_flight_gpu)

static void freed_after_gpu_work(Target t) {
  if (t == Target::cpu) return;  // covered with gates above
  synchronize();
  auto x = iota_tensor(128);
  Tensor<float, 1> out({128});
  bool in_flight;
  {
    Tensor<float, 1> tmp({128});
    auto h = slow_copy_kernel().launch_async(on(t), tmp.partition<128>(), x, slow_iterations(t));
    copy_kernel().launch_async(on(t), out.partition<128>(), tmp).detach();
    in_flight = !h.ready();
    std::move(h).detach();
  }
  if (in_flight) CHECK(detail::retired_count() == 1);
  CHECK(std::as_const(out)(100) == 100.0f);
  synchronize();
  CHECK(detail::retired_count() == 0);
}
TESSERA_TARGET_TEST_CASE("a tensor destroyed while a GPU kernel uses it is freed after the kernel", "[async][borrow]",
                         freed_after_gpu_work)
