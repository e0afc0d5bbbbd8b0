// test_freeze.cpp: Tensor::freeze, a tensor read-only for good. A frozen tensor cannot be a
// launch's output (safe or unsafe, a graph's replay included), be written on the host or be
// borrowed exclusively; it can be read (on the host through a const handle, by kernels as an
// input). A graph whose kernel was compiled for a frozen input takes only frozen replacements. A matrix-vector product whose
// weight is frozen computes the same results on both targets, with and without bulk rings
// (CompilerHints::stream_stages, bulk_streams) and with its first K steps loaded before the grid
// dependency wait (CompilerHints::early_frozen_steps: loops of 4 steps, 1 step, fewer than the
// early steps, ragged tiles); on sm_90 (PTX, no GPU needed) its rings copy the frozen weight's
// first tiles before the kernel waits for the grids it depends on, or its registers load them
// there, and the vector only after it.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <array>
#include <string>
#include <vector>
#include <utility>

#include "execution_helpers.h"
#include "matvec_reference.h"

using namespace tessera;
using exec_test::random_tensor;
using matvec_reference::mismatches;
using matvec_reference::product;
using matvec_reference::Rows;

namespace {

auto frozen_matvec() { return matvec_reference::matvec_16x512("frozen_matvec"); }

auto twice() {
  return kernel("freeze_twice", [](auto out, auto x) { return out.store(load<64>(x, program_id<0>()) * c<2.0f>); });
}

void frozen_products(Target target) {
  const std::pair<int64_t, int64_t> shapes[] = {{37, 1000}, {64, 2048}, {16, 512}};
  const std::pair<int, int> variants[] = {{0, 0}, {4, 0}, {0, 1}, {0, 2}, {0, 4}};  // (stream stages, early steps)
  for (auto [n, k] : shapes)
    for (auto [stages, early] : variants) {
      INFO("N = " << n << ", K = " << k << ", stream_stages = " << stages << ", early_frozen_steps = " << early);
      auto w = random_tensor<bfloat16, 2>({n, k}, -1, 1, 51);
      auto v = random_tensor<float, 1>({k}, -1, 1, 52);
      w.freeze();
      LaunchOptions options;
      options.target = target;
      options.hints.stream_stages = stages;
      options.hints.bulk_streams = stages > 0;
      options.hints.early_frozen_steps = early;
      Tensor<float, 1> y({n});
      frozen_matvec().launch(options, y.partition<16>(), w, v);
      const Rows want = product(w, v);
      CHECK(mismatches(y, want.value, want.magnitude, k) == 0);
    }
}

}  // namespace

TESSERA_TARGET_TEST_CASE("freeze: a product reading a frozen weight", "[freeze]", frozen_products)

TEST_CASE("freeze: a frozen tensor is never written again", "[freeze]") {
  Tensor<float, 1> x({64}), y({64});
  x.fill(1.5f);
  x.freeze();
  CHECK(x.frozen());
  CHECK_FALSE(y.frozen());
  // Read: as an input, and on the host through a const handle.
  LaunchOptions cpu;
  cpu.target = Target::cpu;
  twice().launch(cpu, y.partition<64>(), x);
  CHECK(y.to_vector()[3] == 3.0f);
  CHECK(std::as_const(x).data()[5] == 1.5f);
  CHECK(x.to_vector()[7] == 1.5f);
  // Never written: as an output (a view of it too), on the host, through an exclusive borrow.
  CHECK_THROWS_WITH(twice().launch(cpu, x.partition<64>(), y),
                    Catch::Contains("kernel 'freeze_twice'") && Catch::Contains("output parameter 0 is frozen"));
  Tensor<float, 1> view = x.slice(0, 0, 64);
  CHECK(view.frozen());
  CHECK_THROWS_WITH(twice().launch(cpu, view.partition<64>(), y), Catch::Contains("is frozen"));
  CHECK_THROWS_WITH(x.data(), Catch::Contains("host write of a frozen tensor"));
  CHECK_THROWS_WITH(x.fill(0.0f), Catch::Contains("host write of a frozen tensor"));
  CHECK_THROWS_WITH(borrow_for_host(x), Catch::Contains("exclusive borrow of a frozen tensor"));
  auto shared = borrow_for_host(std::as_const(x));
  shared.end();
  CHECK(x.to_vector()[0] == 1.5f);
}

TEST_CASE("freeze: a graph that writes a tensor frozen after its capture does not replay", "[freeze][graph]") {
  Tensor<float, 1> x({64}), y({64});
  x.fill(1.0f);
  Graph g(Target::cpu);
  {
    auto recording = g.capture();
    twice().launch(y.partition<64>(), x);
  }
  g.replay();
  CHECK(y.to_vector()[0] == 2.0f);
  y.freeze();
  CHECK_THROWS_WITH(g.replay(), Catch::Contains("writes a frozen tensor"));
  CHECK(y.to_vector()[0] == 2.0f);
  // Rebound to a tensor that is not frozen, it replays again.
  Tensor<float, 1> z({64});
  g.rebind(y, z);
  g.replay();
  CHECK(z.to_vector()[63] == 2.0f);
}

TEST_CASE("freeze: a graph compiled for a frozen input takes only frozen replacements", "[freeze][graph][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  auto w = random_tensor<bfloat16, 2>({64, 2048}, -1, 1, 53);
  auto v = random_tensor<float, 1>({2048}, -1, 1, 54);
  Tensor<float, 1> y({64});
  w.freeze();
  LaunchOptions options;
  options.hints.stream_stages = 4;
  options.hints.bulk_streams = true;
  Graph g;
  {
    auto recording = g.capture();
    frozen_matvec().launch(options, y.partition<16>(), w, v);
  }
  g.replay();
  Tensor<bfloat16, 2> other = random_tensor<bfloat16, 2>({64, 2048}, -1, 1, 55);
  CHECK_THROWS_WITH(g.rebind(w, other), Catch::Contains("compiled for a frozen tensor in parameter 1"));
  other.freeze();
  g.rebind(w, other);
  g.replay();
  const Rows want = product(other, v);
  CHECK(mismatches(y, want.value, want.magnitude, 2048) == 0);
}

TEST_CASE("freeze: on sm_90 the frozen weight's first tiles are copied before the grid dependency wait",
          "[freeze][compile]") {
  Tensor<bfloat16, 2> w({64, 2048}), w_frozen({64, 2048});
  Tensor<float, 1> v({2048}), y({64});
  w_frozen.freeze();
  auto ptx = [&](const Tensor<bfloat16, 2>& weight, int stages) {
    LaunchOptions o;
    o.target = Target::sm_90;
    o.hints.stream_stages = stages;
    o.hints.bulk_streams = true;
    return frozen_matvec().compile(o, y.partition<16>(), weight, v).ptx;
  };
  const std::string entry_wait = "griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;";
  // Frozen, with rings: the entry only launches the dependents; bulk copies (the weight's) come
  // before the kernel's own wait, and more (the vector's, and the loop's) after it.
  const std::string early = ptx(w_frozen, 4);
  const auto wait = early.find("griddepcontrol.wait;");
  REQUIRE(wait != std::string::npos);
  CHECK(early.find(entry_wait) == std::string::npos);
  CHECK(early.find("griddepcontrol.launch_dependents;") < wait);
  const auto first_copy = early.find("cp.async.bulk.shared::cluster.global");
  CHECK(first_copy < wait);
  CHECK(early.find("cp.async.bulk.shared::cluster.global", wait) != std::string::npos);
  // Not frozen, or no rings: the wait stays at the entry, before any copy.
  const std::string plain = ptx(w, 4);
  CHECK(plain.find(entry_wait) != std::string::npos);
  CHECK(plain.find(entry_wait) < plain.find("cp.async.bulk"));
  CHECK(ptx(w_frozen, 0).find(entry_wait) != std::string::npos);
}

TEST_CASE("freeze: on sm_90 a product loads its frozen weight's first steps before the grid dependency wait",
          "[freeze][compile]") {
  Tensor<bfloat16, 2> w({64, 2048}), w_frozen({64, 2048});
  Tensor<float, 1> v({2048}), y({64});
  w_frozen.freeze();
  auto ptx = [&](Target target, const Tensor<bfloat16, 2>& weight, int early) {
    LaunchOptions o;
    o.target = target;
    o.hints.early_frozen_steps = early;
    return frozen_matvec().compile(o, y.partition<16>(), weight, v).ptx;
  };
  const std::string entry_wait = "griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;";
  // Frozen: the entry only launches the dependents, global loads (the weight's two steps) come
  // before the kernel's own wait, and more (the vector's, and the loop's) after it. The wait is
  // one, after the loads' block (tessera-mark-grid-waits-convergent: a copy of it in that block
  // would let ptxas issue the loads after it).
  const std::string early = ptx(Target::sm_90, w_frozen, 2);
  const auto wait = early.find("griddepcontrol.wait;");
  REQUIRE(wait != std::string::npos);
  CHECK(early.find(entry_wait) == std::string::npos);
  CHECK(early.find("griddepcontrol.launch_dependents;") < wait);
  CHECK(early.find("ld.global") < wait);
  CHECK(early.find("ld.global", wait) != std::string::npos);
  CHECK(early.find("griddepcontrol.wait;", wait + 1) == std::string::npos);
  // Not frozen, or no early steps: the wait stays at the entry, before any load.
  for (const std::string& plain : {ptx(Target::sm_90, w, 2), ptx(Target::sm_90, w_frozen, 0)}) {
    REQUIRE(plain.find(entry_wait) != std::string::npos);
    CHECK(plain.find(entry_wait) < plain.find("ld.global"));
  }
  // Before sm_90 there is no wait to load before.
  CHECK(ptx(Target::sm_80, w_frozen, 2).find("griddepcontrol") == std::string::npos);
}

TEST_CASE("freeze: early_frozen_steps outside 0 to 4 is an error naming the kernel", "[freeze]") {
  Tensor<bfloat16, 2> w({64, 2048});
  Tensor<float, 1> v({2048}), y({64});
  for (int bad : {-1, 5}) {
    LaunchOptions o;
    o.target = Target::cpu;
    o.hints.early_frozen_steps = bad;
    CHECK_THROWS_WITH(frozen_matvec().launch(o, y.partition<16>(), w, v),
                      Catch::Contains("kernel 'frozen_matvec'") && Catch::Contains("early_frozen_steps is") &&
                          Catch::Contains("expected 0"));
  }
}

TEST_CASE("freeze: in a chain of products with early frozen steps each reads the vector the one before wrote",
          "[freeze][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  // y_i = W_i y_{i-1}: each product loads its first weight steps before it waits for the one
  // before it (programmatic launches, in a graph and launched one by one); a read of y_{i-1}
  // before that wait would see the vector before the earlier product wrote it.
  constexpr int64_t n = 1024, steps = 6;
  std::vector<Tensor<bfloat16, 2>> w;
  std::vector<Tensor<float, 1>> y;
  y.push_back(random_tensor<float, 1>({n}, -1, 1, 60));
  for (int64_t i = 0; i < steps; ++i) {
    w.push_back(random_tensor<bfloat16, 2>({n, n}, -0.0625f, 0.0625f, 61 + static_cast<int>(i)));
    w.back().freeze();
    y.emplace_back(std::array<int64_t, 1>{n});
  }
  LaunchOptions options;
  options.hints.early_frozen_steps = 2;
  auto chain = [&] {
    for (int64_t i = 0; i < steps; ++i)
      frozen_matvec().launch_async(options, y[i + 1].partition<16>(), w[i], y[i]).detach();
  };
  for (bool graph : {false, true}) {
    INFO((graph ? "a graph" : "launched one by one"));
    for (int64_t i = 1; i <= steps; ++i) y[i].fill(0.0f);
    if (graph) {
      Graph g;
      {
        auto recording = g.capture();
        chain();
      }
      g.replay();
    } else {
      chain();
    }
    for (int64_t i = 0; i < steps; ++i) {
      INFO("product " << i);
      const Rows want = product(w[i], y[i]);
      CHECK(mismatches(y[i + 1], want.value, want.magnitude, n) == 0);
    }
  }
}
