// test_static_shapes.cpp: kernels compiled for one launch's shapes (LaunchOptions::static_shapes)
// on the CPU target and on the GPU, against host references: whole tiles (no edge code left) and
// ragged ones, views with an offset and strides, one compile per distinct set of shapes, the PTX
// of a whole-tile launch (no edge copy, no bounds test), graphs of static launches, the shapes a
// launch's specialization records and static shapes that do not match the kernel.
#include "execution_helpers.h"
#include "row_kernels.h"

#include <cmath>

#include "compiler/specialization.h"
#include "frontend/ast.h"

using namespace tessera;

namespace {

using exec_test::random_tensor;

LaunchOptions static_on(Target target) {
  LaunchOptions o = exec_test::on(target);
  o.static_shapes = true;
  return o;
}

const auto add2 = kernel("static_add2", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });

}  // namespace

// Row sums and RMSNorm over 8192-wide rows (every tile whole: the kernel has no edge code) and
// over 8000-wide rows (every tile ragged), the same kernels with and without static shapes.
static void body_rows(Target target) {
  for (int64_t cols : {int64_t{8192}, int64_t{8000}}) {
    const int64_t rows = 5;
    auto x = random_tensor<bfloat16, 2>({rows, cols}, -2, 2, 50);
    auto w = random_tensor<bfloat16, 1>({8192}, -1, 1, 51);
    Tensor<float, 2> s({rows, 1});
    Tensor<bfloat16, 2> y({rows, cols}), y_generic({rows, cols});
    row_kernels::row_sum().launch(static_on(target), s.partition<1, 1>(), x);
    row_kernels::rmsnorm().launch(static_on(target), y.partition<1, 8192>(), x, w);
    row_kernels::rmsnorm().launch_on(target, y_generic.partition<1, 8192>(), x, w);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < cols; ++c) sum += static_cast<float>(x(r, c));
      bad += std::abs(s(r, 0) - sum) > 1e-3 * (1 + std::abs(sum));
      for (int64_t c = 0; c < cols; ++c) bad += static_cast<float>(y(r, c)) != static_cast<float>(y_generic(r, c));
    }
    INFO("columns " << cols);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("static shapes: row sum and RMSNorm over whole and ragged rows", "[static]", body_rows)

// A 2-D add over whole and ragged 64 x 64 tiles, and over views: a slice (an offset into its
// storage) and a transposed input (strides other than row-major).
static void body_views(Target target) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 512}, {200, 300}}) {
    auto a = random_tensor<float, 2>({rows + 3, cols}, -5, 5, 52);
    auto b = random_tensor<float, 2>({cols, rows}, -5, 5, 53);
    auto x = a.slice(0, 3, rows + 3);  // offset 3 * cols
    auto y = b.transposed();           // strides {1, rows}
    Tensor<float, 2> z({rows, cols});
    add2.launch(static_on(target), z.partition<64, 64>(), x, y);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) bad += z(r, c) != a(r + 3, c) + b(c, r);
    INFO(rows << " x " << cols);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("static shapes: views with an offset and strides, whole and ragged tiles", "[static]",
                         body_views)

TEST_CASE("static shapes: one compile per distinct set of shapes, apart from the generic kernel",
          "[cpu][static][counts-compiles]") {
  auto sub = kernel("static_sub", [](auto out, auto x) { return out.store(x.load_like(out) - c<1.0f>); });
  Tensor<float, 1> x100({100}), z100({100}), x300({300}), z300({300});
  x100.fill(4.0f);
  x300.fill(7.0f);
  auto compiles = [] { return cache_stats().compiles; };
  const int64_t before = compiles();
  sub.launch(static_on(Target::cpu), z100.partition<64>(), x100);
  CHECK(compiles() == before + 1);
  sub.launch(static_on(Target::cpu), z100.partition<64>(), x100);  // the same shapes: cached
  CHECK(compiles() == before + 1);
  sub.launch(static_on(Target::cpu), z300.partition<64>(), x300);  // other shapes: compiled again
  CHECK(compiles() == before + 2);
  sub.launch_on(Target::cpu, z300.partition<64>(), x300);  // the generic kernel, for any shapes
  sub.launch_on(Target::cpu, z100.partition<64>(), x100);
  CHECK(compiles() == before + 3);
  CHECK(z100(99) == 3.0f);
  CHECK(z300(299) == 6.0f);
}

TEST_CASE("static shapes: a whole-tile launch compiles without edge code or bounds test", "[static]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  Tensor<bfloat16, 2> x({4, 8192}), ragged({4, 8000});
  Tensor<float, 2> s({4, 1});
  LaunchOptions o;
  o.target = Target::sm_90;
  o.static_shapes = true;
  const std::string whole = row_kernels::row_sum().compile(o, s.partition<1, 1>(), x).ptx;
  const std::string edge = row_kernels::row_sum().compile(o, s.partition<1, 1>(), ragged).ptx;
  const std::string generic =
      row_kernels::row_sum().compile(exec_test::bounds_tested(Target::sm_90), s.partition<1, 1>(), x).ptx;
  // The edge copy loads element by element (16-bit loads); the interior copy 16 bytes at a time
  // (with the L2 policy of a reduction's streamed loads).
  auto scalar_loads = [](const std::string& ptx) { return ptx.find("ld.global.nc.b16") != std::string::npos; };
  CHECK(whole.find("ld.global.nc.L2::cache_hint.v4.b32") != std::string::npos);
  CHECK_FALSE(scalar_loads(whole));
  CHECK(whole.find("setp.") != std::string::npos);  // the reduction's lane test only
  CHECK(whole.find("setp.gt.u64") == std::string::npos);
  CHECK(scalar_loads(edge));
  CHECK(scalar_loads(generic));
}

TEST_CASE("static shapes: the launch's specialization holds its shapes and grid", "[static]") {
  Tensor<float, 2> s({4, 1});
  Tensor<bfloat16, 2> x({4, 8192});
  std::array<detail::ArgDesc, 2> args{detail::to_arg(s.partition<1, 1>()), detail::to_arg(x)};
  detail::Specialization spec;
  detail::specialize(args, Target::cpu, true, spec);
  REQUIRE(spec.shapes);
  CHECK(spec.shapes->grid == std::array<int64_t, 3>{4, 1, 1});
  CHECK(spec.shapes->tensors[1].sizes == llvm::SmallVector<int64_t, 4>{4, 8192});
  CHECK(spec.shapes->tensors[1].strides == llvm::SmallVector<int64_t, 4>{8192, 1});
  CHECK(spec.key_text() == "ca|0:4x1:1x1;0:4x8192:8192x1@4,1,1");
  // Static shapes of other arguments than the kernel's parameters (check_args would refuse the
  // launch, but the compile comes first): an error naming the kernel, not a crash.
  const std::string text(row_kernels::row_sum().ast<decltype(s.partition<1, 1>()), decltype((x))>());
  std::array<detail::ArgDesc, 3> three{args[0], args[1], args[1]};
  LaunchOptions o = static_on(Target::cpu);
  for (std::span<const detail::ArgDesc> bad : {std::span<const detail::ArgDesc>(args).first(1),
                                               std::span<const detail::ArgDesc>(three)}) {
    detail::LaunchRequest r{"rs", text, bad, nullptr, &o};
    CHECK_THROWS_WITH(detail::compile(r, Target::cpu), Catch::Contains("kernel 'rs'") && Catch::Contains("static shapes"));
  }
}

// A graph keeps the shapes it captured (a rebind to another shape throws), so a launch compiled for
// static shapes stays right across replays and rebinds.
static void body_graph(Target target) {
  auto sub = kernel("static_graph_sub", [](auto out, auto x) { return out.store(x.load_like(out) - c<1.0f>); });
  Tensor<float, 1> x({300}), x2({300}), y({300}), other({301});
  x.fill(4.0f);
  x2.fill(9.0f);
  other.fill(0.0f);
  LaunchOptions o;
  o.static_shapes = true;
  Graph g(target);
  {
    auto recording = g.capture();
    sub.launch(o, y.partition<128>(), x);
  }
  g.replay();
  CHECK(std::as_const(y)(299) == 3.0f);
  g.rebind(x, x2);
  g.replay();
  CHECK(std::as_const(y)(0) == 8.0f);
  CHECK(std::as_const(y)(299) == 8.0f);
  CHECK_THROWS_WITH(g.rebind(x2, other), Catch::Contains("another shape"));
}
TESSERA_TARGET_TEST_CASE("static shapes: a captured launch replays and rebinds with its shapes", "[static][graph]",
                         body_graph)
