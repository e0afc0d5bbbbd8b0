// test_whole_tiles.cpp: a launch whose tiles all lie wholly inside their tensors runs a variant of
// the kernel without bounds tests or edge code (LaunchOptions::whole_tiles; the host-side check is
// compiler/whole_tiles.h). Tested here: the check on kernels as users write them (tiles a program
// owns, loads at computed indices, loops, scalars, divisions, overflow, indices it cannot bound),
// results on both targets against host references for whole and ragged launches, for a load that
// leaves its tensor in the last program only and for a graph whose Scalar moves a load out of
// bounds at a replay, the compiles it takes, and the PTX of a whole-tile launch.
#include "execution_helpers.h"
#include "row_kernels.h"

#include "compiler/whole_tiles.h"
#include "frontend/ast.h"

using namespace tessera;

namespace {

using exec_test::random_tensor;

// The check of kernel `k` for arguments of these types.
template <class K, class... A>
detail::WholeTiles check_of(const K& k, const A&...) {
  return detail::WholeTiles(detail::parse_ast(k.name(), K::template ast<A...>()));
}

// What the check answers for a launch of `k` with `args` (the grid of its first output).
template <class K, class... A>
bool whole(const K& k, const A&... args) {
  std::array<detail::ArgDesc, sizeof...(A)> descs{detail::to_arg(args)...};
  std::array<int64_t, 3> grid{1, 1, 1};
  for (const detail::ArgDesc& a : descs) {
    if (a.kind != detail::ArgDesc::Kind::out) continue;
    for (int d = 0; d < a.rank; ++d) grid[d] = (a.shape[d] + a.tile[d] - 1) / a.tile[d];
    break;
  }
  return check_of(k, args...).holds(descs, grid);
}

// Whether the check can answer yes for some launch of `k` with arguments of these types.
template <class K, class... A>
bool analyzable(const K& k, const A&... args) {
  return check_of(k, args...).analyzable();
}

const auto add2 = kernel("whole_add2", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); });
// out[i] = a[i + 128]: the next tile of the input (zeros past its end).
const auto next_tile = kernel("whole_next_tile", [](auto o, auto a) { return o.store(load<128>(a, program_id<0>() + c<1>)); });
// out[i] = a[i + 128 * off].
const auto shifted = kernel("whole_shifted", [](auto o, auto off, auto a) {
  return o.store(load<128>(a, program_id<0>() + off));
});

LaunchOptions with_whole_tiles(Target t, bool on) { return on ? exec_test::on(t) : exec_test::bounds_tested(t); }

}  // namespace

TEST_CASE("whole tiles: tiles a program owns are whole when the sizes are multiples of the tile", "[whole]") {
  Tensor<float, 1> x1024({1024}), x1000({1000}), x0({0});
  Tensor<float, 1> z1024({1024}), z1000({1000}), z0({0});
  CHECK(whole(add2, z1024.partition<128>(), x1024, x1024));
  CHECK_FALSE(whole(add2, z1000.partition<128>(), x1000, x1000));
  CHECK_FALSE(whole(add2, z0.partition<128>(), x0, x0));  // no program: nothing to gain
  Tensor<float, 2> m({256, 512}), mz({256, 512}), r({200, 512}), rz({200, 512});
  auto add2d = kernel("whole_add2d", [](auto o, auto a) { return o.store(a.load_like(o) * c<2.0f>); });
  CHECK(whole(add2d, mz.partition<64, 64>(), m));
  CHECK_FALSE(whole(add2d, rz.partition<64, 64>(), r));
  // The rows of RMSNorm (and its weight, read at tile 0 by every program).
  Tensor<bfloat16, 2> x({4, 8192}), y({4, 8192}), xr({4, 8000}), yr({4, 8000});
  Tensor<bfloat16, 1> w({8192}), wr({8000});
  CHECK(whole(row_kernels::rmsnorm(), y.partition<1, 8192>(), x, w));
  CHECK_FALSE(whole(row_kernels::rmsnorm(), yr.partition<1, 8192>(), xr, wr));
  CHECK_FALSE(whole(row_kernels::rmsnorm(), y.partition<1, 8192>(), x, wr));  // a short weight
}

TEST_CASE("whole tiles: a load at a computed index is bounded over every program", "[whole]") {
  Tensor<float, 1> z({1024}), a1024({1024}), a1152({1152});
  // The last program reads tile 8: only an input of 9 tiles has it.
  CHECK_FALSE(whole(next_tile, z.partition<128>(), a1024));
  CHECK(whole(next_tile, z.partition<128>(), a1152));
  // Indices that fall as the program id grows are bounded too (interval arithmetic, not a
  // monotonicity rule).
  auto reversed = kernel("whole_reversed", [](auto o, auto a) {
    return o.store(load<128>(a, num_programs<0>() - c<1> - program_id<0>()));
  });
  CHECK(whole(reversed, z.partition<128>(), a1024));
  // A division by a positive constant, and by a tensor's size (here 1024: every index is 0).
  auto halved = kernel("whole_halved", [](auto o, auto a) { return o.store(load<128>(a, program_id<0>() / c<2>)); });
  Tensor<float, 1> a512({512}), a384({384});
  CHECK(whole(halved, z.partition<128>(), a512));
  CHECK_FALSE(whole(halved, z.partition<128>(), a384));
  auto by_size = kernel("whole_by_size", [](auto o, auto a) {
    return o.store(load<128>(a, program_id<0>() / dim<0>(a)));
  });
  CHECK(whole(by_size, z.partition<128>(), a1024));
  // maximum / minimum clamp an index.
  auto clamped = kernel("whole_clamped", [](auto o, auto a) {
    return o.store(load<128>(a, minimum(program_id<0>() + c<1>, num_programs<0>() - c<1>)));
  });
  CHECK(whole(clamped, z.partition<128>(), a1024));
  // An index beyond the i32 range (program 8191 times 2^20: the kernel's value would wrap) answers no.
  Tensor<float, 1> big({8192 * 128}), zbig({8192 * 128});
  auto strided = kernel("whole_strided", [](auto o, auto a) {
    return o.store(load<128>(a, program_id<0>() * c<1048576>));
  });
  CHECK_FALSE(whole(strided, zbig.partition<128>(), big));
}

TEST_CASE("whole tiles: loops, scalars and indices the check cannot bound", "[whole]") {
  // A row read in 2048-wide chunks by a loop: its last chunk is whole only for whole rows.
  Tensor<bfloat16, 2> x({4, 8192}), xr({4, 8000});
  Tensor<float, 2> s({4, 1});
  CHECK(whole(row_kernels::row_sum_loop(), s.partition<1, 1>(), x));
  CHECK_FALSE(whole(row_kernels::row_sum_loop(), s.partition<1, 1>(), xr));
  // A scalar offset: its value at the launch.
  Tensor<float, 1> z({1024}), a({1152});
  CHECK(whole(shifted, z.partition<128>(), int32_t{0}, a));
  CHECK(whole(shifted, z.partition<128>(), int32_t{1}, a));
  CHECK_FALSE(whole(shifted, z.partition<128>(), int32_t{2}, a));
  CHECK_FALSE(whole(shifted, z.partition<128>(), int32_t{-1}, a));
  // A tessera::Scalar may change before a graph's next replay: it bounds nothing.
  Scalar<int32_t> cell(0);
  CHECK(analyzable(shifted, z.partition<128>(), cell, a));
  CHECK_FALSE(whole(shifted, z.partition<128>(), cell, a));
  // An index computed from a float scalar, or chosen by a select: never whole.
  auto from_float = kernel("whole_from_float", [](auto o, auto f, auto a) {
    return o.store(load<128>(a, cast<DType::i32>(f)));
  });
  CHECK_FALSE(analyzable(from_float, z.partition<128>(), 0.0f, a));
  CHECK_FALSE(whole(from_float, z.partition<128>(), 0.0f, a));
  auto chosen = kernel("whole_chosen", [](auto o, auto a) {
    return o.store(load<128>(a, select(program_id<0>() > c<0>, program_id<0>(), c<0>)));
  });
  CHECK_FALSE(analyzable(chosen, z.partition<128>(), a));
  // Arguments that do not match the kernel (check_args then says why): no.
  std::array<detail::ArgDesc, 1> one{detail::to_arg(z.partition<128>())};
  CHECK_FALSE(check_of(add2, z.partition<128>(), z, z).holds(one, {8, 1, 1}));
}

TEST_CASE("whole tiles: AST constants are read as the front end writes them, malformed ones named", "[whole]") {
  CHECK(detail::parse_const("k", "0x407ff00000000000") == 511.0);  // c<511>
  CHECK(detail::parse_const("k", "0xbff0000000000000") == -1.0);
  for (std::string_view bad : {"0x407ff0000000000", "407ff00000000000ab", "0x407ff0000000000g", "0x", ""})
    CHECK_THROWS_WITH(detail::parse_const("k", bad), Catch::Contains("kernel 'k'") && Catch::Contains("bad constant"));
}

// A load that leaves its tensor in the last program only: the launch must run the kernel that
// tests (zeros past the end), while a longer input runs the whole-tiles variant; and 2-D adds over
// whole and ragged tiles with the variant on and off.
static void body_results(Target target) {
  const int64_t n = 1024;
  for (int64_t len : {int64_t{1024}, int64_t{1152}}) {
    auto a = random_tensor<float, 1>({len}, -1, 1, 60);
    Tensor<float, 1> z({n});
    next_tile.launch_on(target, z.partition<128>(), a);
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += z(i) != (i + 128 < len ? a(i + 128) : 0.0f);
    INFO("input of " << len);
    CHECK(bad == 0);
  }
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 512}, {200, 300}}) {
    auto a = random_tensor<float, 2>({rows, cols}, -5, 5, 61);
    auto b = random_tensor<float, 2>({rows, cols}, -5, 5, 62);
    for (bool on : {true, false}) {
      Tensor<float, 2> z({rows, cols});
      add2.launch(with_whole_tiles(target, on), z.partition<64, 64>(), a, b);
      int64_t bad = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) bad += z(r, c) != a(r, c) + b(r, c);
      INFO(rows << " x " << cols << (on ? "" : ", whole_tiles off"));
      CHECK(bad == 0);
    }
  }
}
TESSERA_TARGET_TEST_CASE("whole tiles: results of whole and ragged launches", "[whole]", body_results)

// A graph captured while its Scalar keeps a load in bounds, replayed after the Scalar moved it past
// the input's end: the captured launch must be the kernel that tests (zeros past the end).
static void body_graph_scalar(Target target) {
  const int64_t n = 1024;
  auto a = random_tensor<float, 1>({n + 128}, -1, 1, 63);
  Tensor<float, 1> z({n});
  Scalar<int32_t> off(0);
  Graph g(target);
  {
    auto recording = g.capture();
    shifted.launch(z.partition<128>(), off, a);
  }
  for (int32_t step : {0, 1, 3}) {
    off.set(step);
    g.replay();
    int64_t bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t j = i + 128 * step;
      bad += std::as_const(z)(i) != (j < n + 128 ? a(j) : 0.0f);
    }
    INFO("offset " << step);
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("whole tiles: a Scalar index in a graph keeps the kernel that tests", "[whole][graph]",
                         body_graph_scalar)

TEST_CASE("whole tiles: one more compile for a kernel launched both ways, none with the variant off",
          "[cpu][whole][counts-compiles]") {
  auto k = kernel("whole_count", [](auto o, auto a) { return o.store(a.load_like(o) + c<1.0f>); });
  Tensor<float, 1> x1024({1024}), z1024({1024}), x1000({1000}), z1000({1000});
  x1024.fill(1.0f);
  x1000.fill(2.0f);
  auto compiles = [] { return cache_stats().compiles; };
  const int64_t before = compiles();
  k.launch_on(Target::cpu, z1024.partition<128>(), x1024);  // whole: the variant
  k.launch_on(Target::cpu, z1024.partition<128>(), x1024);
  CHECK(compiles() == before + 1);
  k.launch_on(Target::cpu, z1000.partition<128>(), x1000);  // ragged: the kernel that tests
  CHECK(compiles() == before + 2);
  k.launch(with_whole_tiles(Target::cpu, false), z1024.partition<128>(), x1024);  // that one again
  CHECK(compiles() == before + 2);
  CHECK(z1024(1023) == 2.0f);
  CHECK(z1000(999) == 3.0f);
}

TEST_CASE("whole tiles: a whole-tile launch compiles without edge code or bounds test", "[whole]") {
  if (!detail::nvjitlink_available()) {
    WARN("nvJitLink missing: skipped");
    return;
  }
  Tensor<bfloat16, 2> x({4, 8192}), y({4, 8192}), xr({4, 8000}), yr({4, 8000});
  Tensor<bfloat16, 1> w({8192}), wr({8000});
  const std::string whole_ptx = row_kernels::rmsnorm().compile(Target::sm_90, y.partition<1, 8192>(), x, w).ptx;
  const std::string ragged_ptx = row_kernels::rmsnorm().compile(Target::sm_90, yr.partition<1, 8192>(), xr, wr).ptx;
  // The edge copy loads element by element (16-bit loads) and the interior test compares the
  // shapes (64-bit, unsigned); the whole-tiles variant has neither, and no stack frame.
  auto scalar_loads = [](const std::string& ptx) { return ptx.find("ld.global.nc.b16") != std::string::npos; };
  CHECK(whole_ptx.find("ld.global.nc.L2::cache_hint.v4.b32") != std::string::npos);
  CHECK_FALSE(scalar_loads(whole_ptx));
  CHECK(whole_ptx.find("setp.gt.u64") == std::string::npos);
  CHECK(whole_ptx.find("__local_depot") == std::string::npos);
  CHECK(scalar_loads(ragged_ptx));
  CHECK(ragged_ptx.find("__local_depot") != std::string::npos);
}
