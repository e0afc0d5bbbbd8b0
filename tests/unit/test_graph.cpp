// test_graph.cpp: capturing launches into a tessera::Graph and replaying them (graph.h).
//
// Covers: capture records without running; replay runs in order and sees new input contents;
// Scalars and rebound tensors are picked up without re-capture (on a GPU: node parameters
// patched, or the CUDA graph rebuilt when a rebind changes which launches share a tensor); a
// replay is ordered with launches and host access like any launch; failure cases: replay after a
// bound tensor was destroyed (named by launch and parameter, and rebound there), rebind to another
// shape or into an aliasing output, capturing twice or nested, replay while capturing, a launch
// for another target inside the capture, any use of a moved-from graph.
#include "execution_helpers.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

auto axpb_kernel() {
  return kernel("graph_axpb", [](auto out, auto x, auto a, auto b) { return out.store(x.load_like(out) * a + b); });
}

}  // namespace

static void capture_and_replay(Target t) {
  const int64_t n = 3000;
  auto x = iota_tensor(n);
  Tensor<float, 1> y({n}), z({n});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), x);  // y = x + 1
    add_kernel().launch(z.partition<4096>(), y, x);  // z = y + x (on a GPU: 4 CTAs per program)
    auto h = add_one_kernel().launch_async(y.partition<128>(), z);  // y = z + 1 (after the read of y)
    CHECK(h.ready());  // nothing ran
  }
  CHECK(g.size() == 3);
  CHECK(std::as_const(z)(5) == 0.0f);  // capture does not run anything
  g.replay();
  CHECK(std::as_const(z)(5) == 11.0f);
  CHECK(std::as_const(y)(5) == 12.0f);
  x.fill(1.0f);  // replays read the current contents
  auto h = g.replay_async();
  h.wait();
  CHECK(std::as_const(z)(n - 1) == 3.0f);
  CHECK(std::as_const(y)(n - 1) == 4.0f);
}
TESSERA_TARGET_TEST_CASE("a captured graph replays its launches in order, on the current contents", "[graph]",
                         capture_and_replay)

static void scalars_update_without_recapture(Target t) {
  const int64_t n = 1000;
  auto x = iota_tensor(n);
  Tensor<float, 1> y({n});
  Scalar<float> a(2.0f);
  Graph g(t);
  {
    auto recording = g.capture();
    axpb_kernel().launch(y.partition<128>(), x, a, 0.5f);  // a by cell, 0.5 by value
  }
  g.replay();
  CHECK(std::as_const(y)(3) == 6.5f);
  for (int step = 0; step < 5; ++step) {
    a.set(static_cast<float>(step));
    g.replay();
    CHECK(std::as_const(y)(10) == static_cast<float>(10 * step) + 0.5f);
  }
  // Outside a graph a Scalar is read when the launch is submitted.
  a.set(-1.0f);
  axpb_kernel().launch(on(t), y.partition<128>(), x, a, 0.0f);
  CHECK(std::as_const(y)(4) == -4.0f);
}
TESSERA_TARGET_TEST_CASE("Scalars bound at capture are read at every replay", "[graph]",
                         scalars_update_without_recapture)

// On a GPU, tile kernels are launched programmatically (streams) and joined by programmatic edges
// (graphs): each may start while the kernel it depends on still runs, and waits in its first
// instruction. It must still read everything that kernel wrote and must not overwrite what that
// kernel still reads. The first kernel here runs for milliseconds, long enough for an early start
// without the wait to read stale data or clobber its input.
static void dependent_kernels_start_early_but_wait(Target t) {
  const int64_t n = 1 << 16;
  auto x = iota_tensor(n);
  Tensor<float, 1> y({n}), z({n}), w({n});
  w.fill(-1.0f);
  const int32_t iterations = slow_iterations(t) / 50;
  auto check = [&] {
    for (int64_t i : {int64_t{0}, int64_t{777}, n - 1}) {
      CHECK(std::as_const(y)(i) == static_cast<float>(i));         // read x before it was overwritten
      CHECK(std::as_const(z)(i) == static_cast<float>(i) + 1.0f);  // read y after it was written
      CHECK(std::as_const(x)(i) == -1.0f);
    }
  };
  auto reset_x = [&] {
    for (int64_t i = 0; i < n; ++i) x(i) = static_cast<float>(i);
  };
  Graph g(t);
  {
    auto recording = g.capture();
    slow_copy_kernel().launch(y.partition<1024>(), x, iterations);  // y = x, slowly
    add_one_kernel().launch(z.partition<1024>(), y);                 // z = y + 1
    copy_kernel().launch(x.partition<1024>(), w);                    // x = w (-1)
  }
  for (int replay = 0; replay < 2; ++replay) {
    reset_x();
    g.replay();
    check();
  }
  // The same chain as async launches on one stream, no host wait between them.
  reset_x();
  auto h1 = slow_copy_kernel().launch_async(on(t), y.partition<1024>(), x, iterations);
  auto h2 = add_one_kernel().launch_async(on(t), z.partition<1024>(), y);
  auto h3 = copy_kernel().launch_async(on(t), x.partition<1024>(), w);
  check();
}
TESSERA_TARGET_TEST_CASE("kernels that may start early still wait for the kernels they depend on", "[graph][async]",
                         dependent_kernels_start_early_but_wait)

static void rebind_tensors(Target t) {
  const int64_t n = 700;
  auto x = iota_tensor(n), x2 = iota_tensor(n, 100);
  Tensor<float, 1> y({n}), y2({n});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), x);
  }
  g.replay();
  CHECK(std::as_const(y)(0) == 1.0f);
  g.rebind(x, x2);
  g.replay();
  CHECK(std::as_const(y)(0) == 101.0f);
  g.rebind(y, y2);  // an output
  g.replay();
  CHECK(std::as_const(y2)(1) == 102.0f);
  CHECK(std::as_const(y)(1) == 102.0f);  // unchanged since
}
TESSERA_TARGET_TEST_CASE("rebinding a tensor changes what the next replays use", "[graph]", rebind_tensors)

// Views in a graph: replays read the view's elements; a view is rebound to a view at the same
// storage offset only.
static void rebind_views(Target t) {
  const int64_t n = 700;
  auto x = iota_tensor(2 * n), x2 = iota_tensor(2 * n, 100);
  Tensor<float, 1> y({n});
  Tensor<float, 1> upper = x.slice(0, n, 2 * n);
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), upper);
  }
  g.replay();
  CHECK(std::as_const(y)(0) == n + 1.0f);
  Tensor<float, 1> upper2 = x2.slice(0, n, 2 * n), lower2 = x2.slice(0, 0, n);
  CHECK_THROWS_WITH(g.rebind(upper, lower2), Catch::Matchers::Contains("starts at element 0 of its storage"));
  g.rebind(upper, upper2);
  g.replay();
  CHECK(std::as_const(y)(0) == n + 101.0f);
}
TESSERA_TARGET_TEST_CASE("views in a graph, rebound at the same storage offset", "[graph][views]", rebind_views)

// A graph whose first launch writes one row of a cache, moved to the next row between replays (a
// decode step's KV-cache append), and whose second launch reads the whole cache.
static void move_views(Target t) {
  const int64_t rows = 4, n = 256;
  Tensor<float, 1> cache({rows * n}), copy({rows * n});
  cache.fill(-1.0f);
  auto x = iota_tensor(n);
  Tensor<float, 1> row = cache.slice(0, 0, n);
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(row.partition<128>(), x);      // the row = x + 1
    add_one_kernel().launch(copy.partition<128>(), cache);  // reads the cache whole, after the row
  }
  for (int64_t i = 0; i < rows; ++i) {
    Tensor<float, 1> next = cache.slice(0, i * n, (i + 1) * n);
    g.move_view(0, 0, next);
    x.fill(static_cast<float>(10 * i));
    g.replay();
    for (int64_t r = 0; r < rows; ++r) {
      INFO("replay " << i << ", row " << r);
      CHECK(std::as_const(cache)(r * n + 7) == (r <= i ? 10.0f * r + 1 : -1.0f));
      CHECK(std::as_const(copy)(r * n + 7) == (r <= i ? 10.0f * r + 2 : 0.0f));
    }
  }
  Tensor<float, 1> shorter = cache.slice(0, 0, n / 2), elsewhere({n});
  CHECK_THROWS_WITH(g.move_view(0, 0, shorter), Contains("same dtype, shape and strides"));
  CHECK_THROWS_WITH(g.move_view(0, 0, elsewhere), Contains("of the storage bound there"));
  CHECK_THROWS_WITH(g.move_view(1, 1, elsewhere), Contains("of the storage bound there"));
  CHECK_THROWS_WITH(g.move_view(2, 0, row), Contains("launch 2 of a graph of 2 launches"));
  // A kernel compiled for its static shapes has the offset in its code.
  LaunchOptions o;
  o.static_shapes = true;
  Graph fixed(t);
  {
    auto recording = fixed.capture();
    add_one_kernel().launch(o, row.partition<128>(), x);
  }
  Tensor<float, 1> second = cache.slice(0, n, 2 * n);
  CHECK_THROWS_WITH(fixed.move_view(0, 0, second), Contains("static shapes"));
}
TESSERA_TARGET_TEST_CASE("a graph moves a parameter's view along its storage between replays", "[graph][views]",
                         move_views)

static void rebind_changes_sharing(Target t) {
  const int64_t n = 512;
  auto x = iota_tensor(n);
  Tensor<float, 1> a({n}), b({n}), c2({n});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(a.partition<128>(), x);   // writes a
    add_one_kernel().launch(c2.partition<128>(), b);  // reads b: independent of the first
  }
  g.replay();
  CHECK(std::as_const(c2)(0) == 1.0f);
  g.rebind(b, a);  // now the second reads what the first writes: must be ordered after it
  for (int i = 0; i < 3; ++i) {
    x.fill(static_cast<float>(10 * i));
    g.replay();
    CHECK(std::as_const(c2)(n - 1) == static_cast<float>(10 * i + 2));
  }
}
TESSERA_TARGET_TEST_CASE("a rebind that makes two launches share a tensor orders them", "[graph]",
                         rebind_changes_sharing)

static void replay_is_ordered_like_a_launch(Target t) {
  const int64_t n = 1024;
  auto x = iota_tensor(n);
  Tensor<float, 1> src({n}), y({n});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), src);
  }
  // A launch writing src in flight, then the replay (reads src), then host access to y.
  auto w = slow_copy_kernel().launch_async(on(t), src.partition<128>(), x, slow_iterations(t) / 8);
  auto r = g.replay_async();
  CHECK(std::as_const(y)(7) == 8.0f);
  CHECK(w.ready());
  CHECK(r.ready());
}
TESSERA_TARGET_TEST_CASE("a replay is ordered after the work in flight on its tensors", "[graph]",
                         replay_is_ordered_like_a_launch)

static void moved_binding_follows_memory(Target t) {
  auto x = iota_tensor(200);
  Tensor<float, 1> y({200});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), x);
  }
  Tensor<float, 1> moved = std::move(y);  // the binding follows the memory, not the variable
  g.replay();
  CHECK(std::as_const(moved)(199) == 200.0f);
  { Tensor<float, 1> gone = std::move(moved); }  // the last handle goes: the binding is dead
  CHECK_THROWS_WITH(g.replay(), Contains("parameter 0 of launch 0 (kernel 'exec_add_one') no longer exists"));
  Tensor<float, 1> fresh({200});
  CHECK_THROWS_WITH(g.rebind(fresh, fresh), Contains("not bound in this graph"));
}
TESSERA_TARGET_TEST_CASE("replay after a bound tensor moved away and was destroyed", "[graph][errors]",
                         moved_binding_follows_memory)

// A tensor that no longer exists cannot be named to rebind(bound, replacement): the replay's error
// names the kernel, the launch and the parameter, and how to bind a live tensor there.
static void rebind_dead_tensor_by_parameter(Target t) {
  auto x = iota_tensor(300);
  Tensor<float, 1> y({300}), z({300});
  Graph g(t);
  {
    auto recording = g.capture();
    add_one_kernel().launch(y.partition<128>(), x);  // launch 0: y = x + 1
    {
      auto tmp = iota_tensor(300, 1000);
      add_kernel().launch(z.partition<128>(), y, tmp);  // launch 1: z = y + tmp; tmp dies at once
    }
  }
  CHECK_THROWS_WITH(g.replay(), Contains("the tensor bound to parameter 2 of launch 1 (kernel 'exec_add') no longer "
                                         "exists") &&
                                    Contains("bind a live f32 tensor of shape [300] and strides [1] there with "
                                             "g.rebind(1, 2, tensor)") &&
                                    Contains("capture again"));
  CHECK_THROWS_WITH(g.rebind(2, 0, z), Contains("launch 2 of a graph of 2 launches"));
  CHECK_THROWS_WITH(g.rebind(1, 3, z), Contains("parameter 3 of launch 1 (kernel 'exec_add', 3 parameters) is not a "
                                                "tensor"));
  Tensor<float, 1> short_one({299});
  CHECK_THROWS_WITH(g.rebind(1, 2, short_one), Contains("parameter 2 of launch 1 (kernel 'exec_add') was captured "
                                                        "with another shape"));
  CHECK_THROWS_WITH(g.rebind(1, 2, z), Contains("one of them is an output"));  // z is launch 1's output
  auto w = iota_tensor(300, 10);
  g.rebind(1, 2, w);
  g.replay();
  CHECK(std::as_const(z)(7) == 8.0f + 17.0f);
  // By parameter, every use of the tensor bound there is rebound: y is launch 0's output and
  // launch 1's input.
  Tensor<float, 1> y2({300});
  g.rebind(0, 0, y2);
  x.fill(2.0f);
  g.replay();
  CHECK(std::as_const(y2)(5) == 3.0f);
  CHECK(std::as_const(z)(5) == 3.0f + 15.0f);
  CHECK(std::as_const(y)(5) == 6.0f);  // no longer bound: from the first replay
}
TESSERA_TARGET_TEST_CASE("a dead tensor is named by launch and parameter and rebound there", "[graph][errors]",
                         rebind_dead_tensor_by_parameter)

static void several_dead_tensors(Target t) {
  Tensor<float, 1> y({100});
  Graph g(t);
  {
    auto recording = g.capture();
    auto a = iota_tensor(100), b = iota_tensor(100);
    add_kernel().launch(y.partition<128>(), a, b);
  }
  CHECK_THROWS_WITH(g.replay(), Contains("parameter 1 of launch 0 (kernel 'exec_add') no longer exists (nor do 1 "
                                         "other tensors of the graph)"));
  auto a = iota_tensor(100), b = iota_tensor(100, 1);
  g.rebind(0, 1, a);
  CHECK_THROWS_WITH(g.replay(), Contains("parameter 2 of launch 0 (kernel 'exec_add') no longer exists;"));
  g.rebind(0, 2, b);
  g.replay();
  CHECK(std::as_const(y)(99) == 199.0f);
}
TESSERA_TARGET_TEST_CASE("each dead tensor of a graph is named in turn", "[graph][errors]", several_dead_tensors)

static void graph_errors(Target t) {
  auto x = iota_tensor(100);
  Tensor<float, 1> y({100}), z({100}), other({50});
  Graph g(t);
  {
    auto recording = g.capture();
    CHECK_THROWS_WITH(g.capture(), Contains("already capturing"));
    CHECK_THROWS_WITH(g.replay(), Contains("while it is being captured"));
    add_kernel().launch(y.partition<128>(), x, z);
    // Misuse inside a capture is still reported at once.
    CHECK_THROWS_WITH(add_kernel().launch(y.partition<128>(), y, z), Contains("aliases"));
  }
  CHECK_THROWS_WITH(g.capture(), Contains("captured once"));
  CHECK_THROWS_WITH(g.rebind(x, other), Contains("another shape, strides or view"));
  CHECK_THROWS_WITH(g.rebind(z, y), Contains("one of them is an output"));  // y written, would be read too
  Target other_target = t == Target::cpu ? Target::sm_90 : Target::cpu;
  LaunchOptions wrong = on(other_target);
  CHECK_THROWS_WITH(g.replay(wrong), Contains("cannot be replayed on"));
  Graph g2(t);
  {
    auto recording = g2.capture();
    CHECK_THROWS_WITH(add_one_kernel().launch(wrong, y.partition<128>(), x), Contains("while capturing a graph for"));
  }
  CHECK(g2.size() == 0);
  g2.replay();  // an empty graph replays as nothing
  // A moved-from graph throws on every use.
  Graph g3 = std::move(g2);
  CHECK(g3.size() == 0);
  // NOLINTBEGIN(bugprone-use-after-move): the moved-from state under test
  CHECK_THROWS_WITH(g2.replay(), Contains("Graph::replay: the graph was moved from"));
  CHECK_THROWS_WITH(g2.replay_async(), Contains("Graph::replay_async: the graph was moved from"));
  CHECK_THROWS_WITH(g2.size(), Contains("Graph::size: the graph was moved from"));
  CHECK_THROWS_WITH(g2.target(), Contains("Graph::target: the graph was moved from"));
  CHECK_THROWS_WITH(g2.capture(), Contains("Graph::capture: the graph was moved from"));
  CHECK_THROWS_WITH(g2.rebind(x, other), Contains("Graph::rebind: the graph was moved from"));
  CHECK_THROWS_WITH(g2.rebind(0, 1, other), Contains("Graph::rebind: the graph was moved from"));
  // NOLINTEND(bugprone-use-after-move)
}
TESSERA_TARGET_TEST_CASE("graph misuse is reported", "[graph][errors]", graph_errors)

static void owned_outputs_in_capture(Target t) {
  auto x = iota_tensor(300);
  Graph g(t);
  Tensor<float, 1> kept({300});
  {
    auto recording = g.capture();
    kept = add_one_kernel().launch(std::move(kept).partition<128>(), x);  // given back at once
  }
  g.replay();
  CHECK(std::as_const(kept)(299) == 300.0f);
}
TESSERA_TARGET_TEST_CASE("outputs moved into a captured launch come back at once and stay bound", "[graph]",
                         owned_outputs_in_capture)

TEST_CASE("captures on two threads do not see each other", "[cpu][graph]") {
  auto x = iota_tensor(400);
  Tensor<float, 1> y1({400}), y2({400});
  Graph g1(Target::cpu), g2(Target::cpu);
  auto body = [&](Graph& g, Tensor<float, 1>& y) {
    auto recording = g.capture();
    for (int i = 0; i < 10; ++i) add_one_kernel().launch(y.partition<128>(), x);
  };
  std::thread a([&] { body(g1, y1); }), b([&] { body(g2, y2); });
  a.join();
  b.join();
  CHECK(g1.size() == 10);
  CHECK(g2.size() == 10);
  // Launches on this thread were never captured.
  add_one_kernel().launch_on(Target::cpu, y1.partition<128>(), x);
  CHECK(std::as_const(y1)(0) == 1.0f);
}
