// test_padding.cpp: loads padded with a value other than zero (x.load_like(out).padded(c<V>),
// load<...>(x, ...).padded(c<V>), out.load().padded(c<V>)).
//
// Covers, on the CPU target and on the GPU against host references: ragged row max and min with
// -inf / +inf padding (f32, f16, bf16; i32 with its least and greatest values), ragged softmax
// with -inf padding and no mask, NaN padding (counted lane by lane), constant padding of every
// dtype (f32, f16, bf16, i32, i1), an output's own tile read back padded, 2-D tiles ragged in both
// dims, a loop over a row in chunks, whole-tile, bounds-tested and static-shape launches. Also
// the AST text of padded loads (the old forms unchanged), the parse of the (pad ...) item, the
// whole-tiles check and the launcher's checks on padded nodes, and a padded kernel's PTX.
#include "execution_helpers.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "compiler/whole_tiles.h"
#include "frontend/ast.h"
#include "frontend/ast_nodes.h"

using namespace tessera;
using Catch::Matchers::Contains;
using exec_test::bounds_tested;
using exec_test::on;
using exec_test::random_tensor;

namespace {

constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

template <class T>
float f(T v) {
  return static_cast<float>(v);
}

// Row lengths over a 128-wide tile: ragged (1, 100, 127) and whole (128).
constexpr int64_t kLengths[] = {1, 100, 127, 128};

// Row r of the [rows x 1] output: the max / min of row r of `a`, read as one 128-wide tile.
const auto row_max = kernel("pad_row_max", [](auto o, auto a) {
  return o.store(max<1>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<-inf>)));
});
const auto row_min = kernel("pad_row_min", [](auto o, auto a) {
  return o.store(min<1>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<inf>)));
});
const auto row_max_i32 = kernel("pad_row_max_i32", [](auto o, auto a) {
  return o.store(max<1>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<kI32Min>)));
});
const auto row_min_i32 = kernel("pad_row_min_i32", [](auto o, auto a) {
  return o.store(min<1>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<kI32Max>)));
});

// Softmax of rows of up to 1024 elements, the padding at -inf (exp(-inf - max) = 0): no mask.
const auto softmax = kernel("pad_softmax", [](auto o, auto a) {
  auto t = cast<DType::f32>(a.load_like(o).padded(c<-inf>));
  auto e = exp(t - max<1>(t));
  return o.store(cast<decltype(o)::dtype>(e / sum<1>(e)));
});

// Row r: how many lanes of its 128-wide tile are NaN (the padding: the data has none).
const auto nan_lanes = kernel("pad_nan_lanes", [](auto o, auto a) {
  auto t = load<1, 128>(a, program_id<0>(), c<0>).padded(c<quiet_nan>);
  return o.store(sum<1>(cast<DType::i32>(t != t)));
});

// Row sums with constant padding: 2.5 for floats, -7 for i32, true for i1 (counted).
const auto sum_pad_float = kernel("pad_sum_float", [](auto o, auto a) {
  return o.store(sum<1>(cast<DType::f32>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<2.5>))));
});
const auto sum_pad_i32 = kernel("pad_sum_i32", [](auto o, auto a) {
  return o.store(sum<1>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<-7>)));
});
const auto count_pad_i1 = kernel("pad_count_i1", [](auto o, auto a) {
  return o.store(sum<1>(cast<DType::i32>(load<1, 128>(a, program_id<0>(), c<0>).padded(c<1>))));
});

// Each element of an output row becomes the sum of the row's current contents, read back padded
// with 1: sum + (128 - length).
const auto own_sum = kernel("pad_own_sum", [](auto o) {
  auto t = o.load().padded(c<1>);
  return o.store(t * c<0> + sum<1>(t));
});

// The max of each 64 x 64 tile of a matrix ragged in both dims.
const auto tile_max = kernel("pad_tile_max", [](auto o, auto a) {
  return o.store(max<0>(max<1>(load<64, 64>(a, program_id<0>(), program_id<1>()).padded(c<-inf>))));
});

// The row max read in 256-wide chunks (the last one ragged).
const auto chunked_max = kernel("pad_chunked_max", [](auto o, auto a) {
  auto m = for_range(
      (dim<1>(a) + c<255>) / c<256>,
      [=](auto j, auto acc) { return maximum(acc, load<1, 256>(a, program_id<0>(), j).padded(c<-inf>)); },
      full<DType::f32, 1, 256>(c<-inf>));
  return o.store(max<1>(m));
});

// Launches `k` for every row length, whole-tile variant on and off.
template <class Fn>
void for_each_launch(Fn&& fn) {
  for (int64_t n : kLengths)
    for (bool whole : {true, false}) {
      INFO("rows of " << n << (whole ? "" : ", whole_tiles off"));
      fn(n, whole);
    }
}

LaunchOptions options(Target t, bool whole) { return whole ? on(t) : bounds_tested(t); }

template <class T>
void check_row_max_min(Target target) {
  INFO(dtype_name(dtype_v<T>));
  for_each_launch([&](int64_t n, bool whole) {
    auto a = random_tensor<T, 2>({5, n}, -10, -1, 70);  // all negative: a zero padding would win the max
    auto b = random_tensor<T, 2>({5, n}, 1, 10, 71);    // all positive: it would win the min
    Tensor<T, 2> mx({5, 1}), mn({5, 1});
    row_max.launch(options(target, whole), mx.template partition<1, 1>(), a);
    row_min.launch(options(target, whole), mn.template partition<1, 1>(), b);
    for (int64_t r = 0; r < 5; ++r) {
      float want_max = -INFINITY, want_min = INFINITY;
      for (int64_t c = 0; c < n; ++c) {
        want_max = std::max(want_max, f(a(r, c)));
        want_min = std::min(want_min, f(b(r, c)));
      }
      CHECK(f(mx(r, 0)) == want_max);
      CHECK(f(mn(r, 0)) == want_min);
    }
  });
}

void body_row_max_min(Target target) {
  check_row_max_min<float>(target);
  check_row_max_min<half>(target);
  check_row_max_min<bfloat16>(target);
  for_each_launch([&](int64_t n, bool whole) {
    Tensor<int32_t, 2> a({3, n}), mx({3, 1}), mn({3, 1});
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) a(r, c) = r == 0 ? kI32Min + 5 + int32_t(c) : int32_t(c * 37 % 101) - 50;
    Tensor<int32_t, 2> b = a.clone();
    for (int64_t c = 0; c < n; ++c) b(0, c) = kI32Max - 5 - int32_t(c);
    row_max_i32.launch(options(target, whole), mx.partition<1, 1>(), a);
    row_min_i32.launch(options(target, whole), mn.partition<1, 1>(), b);
    for (int64_t r = 0; r < 3; ++r) {
      int32_t want_max = kI32Min, want_min = kI32Max;
      for (int64_t c = 0; c < n; ++c) {
        want_max = std::max(want_max, a(r, c));
        want_min = std::min(want_min, b(r, c));
      }
      CHECK(mx(r, 0) == want_max);
      CHECK(mn(r, 0) == want_min);
    }
  });
}

// `tolerance` relative, `tiny` absolute (f16 results below 2^-14 are subnormal).
template <class T>
void check_softmax(Target target, float tolerance, double tiny) {
  INFO(dtype_name(dtype_v<T>));
  for (int64_t n : {1, 1000, 1024})
    for (bool whole : {true, false}) {
      INFO("rows of " << n << (whole ? "" : ", whole_tiles off"));
      auto a = random_tensor<T, 2>({6, n}, -20, 5, 72);  // negative rows: zero padding would take part
      Tensor<T, 2> y({6, n});
      softmax.launch(options(target, whole), y.template partition<1, 1024>(), a);
      int64_t bad = 0;
      for (int64_t r = 0; r < 6; ++r) {
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < n; ++c) m = std::max<double>(m, f(a(r, c)));
        for (int64_t c = 0; c < n; ++c) s += std::exp(f(a(r, c)) - m);
        for (int64_t c = 0; c < n; ++c) {
          double want = std::exp(f(a(r, c)) - m) / s;
          bad += !(std::abs(f(y(r, c)) - want) <= tolerance * want + tiny);
        }
      }
      CHECK(bad == 0);
    }
}

void body_softmax(Target target) {
  check_softmax<float>(target, 1e-5f, 1e-30);
  check_softmax<half>(target, 1e-3f, 1e-7);      // one rounding to f16: 2^-11, subnormals 2^-24 apart
  check_softmax<bfloat16>(target, 8e-3f, 1e-30);  // one rounding to bf16: 2^-8
}

template <class T>
void check_nan_lanes(Target target) {
  INFO(dtype_name(dtype_v<T>));
  for_each_launch([&](int64_t n, bool whole) {
    auto a = random_tensor<T, 2>({4, n}, -3, 3, 73);
    Tensor<int32_t, 2> count({4, 1});
    nan_lanes.launch(options(target, whole), count.partition<1, 1>(), a);
    for (int64_t r = 0; r < 4; ++r) CHECK(count(r, 0) == 128 - n);
  });
}

void body_nan(Target target) {
  check_nan_lanes<float>(target);
  check_nan_lanes<half>(target);
  check_nan_lanes<bfloat16>(target);
}

template <class T>
void check_constant_pad(Target target) {
  INFO(dtype_name(dtype_v<T>));
  for_each_launch([&](int64_t n, bool whole) {
    Tensor<T, 2> a({3, n});
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) a(r, c) = static_cast<T>(static_cast<float>((r + c) % 7) - 3.0f);
    Tensor<float, 2> s({3, 1});
    sum_pad_float.launch(options(target, whole), s.partition<1, 1>(), a);
    for (int64_t r = 0; r < 3; ++r) {
      float want = 2.5f * static_cast<float>(128 - n);  // small integers and halves: exact
      for (int64_t c = 0; c < n; ++c) want += f(a(r, c));
      CHECK(s(r, 0) == want);
    }
  });
}

void body_constant(Target target) {
  check_constant_pad<float>(target);
  check_constant_pad<half>(target);
  check_constant_pad<bfloat16>(target);
  for_each_launch([&](int64_t n, bool whole) {
    Tensor<int32_t, 2> a({3, n}), s({3, 1}), count({3, 1});
    Tensor<bool, 2> b({3, n});
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) {
        a(r, c) = int32_t(r * 1000 + c);
        b(r, c) = (r + c) % 3 == 0;
      }
    sum_pad_i32.launch(options(target, whole), s.partition<1, 1>(), a);
    count_pad_i1.launch(options(target, whole), count.partition<1, 1>(), b);
    for (int64_t r = 0; r < 3; ++r) {
      int32_t want = -7 * int32_t(128 - n), trues = int32_t(128 - n);
      for (int64_t c = 0; c < n; ++c) {
        want += a(r, c);
        trues += b(r, c);
      }
      CHECK(s(r, 0) == want);
      CHECK(count(r, 0) == trues);
    }
  });
}

// An output's own tile, read back with padding 1 (on a GPU, its current contents are uploaded).
void body_own(Target target) {
  for_each_launch([&](int64_t n, bool whole) {
    Tensor<float, 2> o({3, n});
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) o(r, c) = float(r + 2 * c);
    std::vector<float> want(3, float(128 - n));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) want[r] += o(r, c);
    own_sum.launch(options(target, whole), o.partition<1, 128>());
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < n; ++c) CHECK(o(r, c) == want[r]);
  });
}

// 2-D tiles ragged in both dims, and a chunked loop whose last chunk is ragged.
void body_tiles_and_loops(Target target) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{100, 70}, {128, 192}, {1, 1}}) {
    auto a = random_tensor<float, 2>({rows, cols}, -9, -1, 74);
    const int64_t gr = (rows + 63) / 64, gc = (cols + 63) / 64;
    for (bool whole : {true, false}) {
      INFO(rows << " x " << cols << (whole ? "" : ", whole_tiles off"));
      Tensor<float, 2> m({gr, gc});
      tile_max.launch(options(target, whole), m.partition<1, 1>(), a);
      for (int64_t i = 0; i < gr; ++i)
        for (int64_t j = 0; j < gc; ++j) {
          float want = -INFINITY;
          for (int64_t r = 64 * i; r < std::min(rows, 64 * i + 64); ++r)
            for (int64_t c = 64 * j; c < std::min(cols, 64 * j + 64); ++c) want = std::max(want, a(r, c));
          CHECK(m(i, j) == want);
        }
    }
  }
  for (int64_t n : {1, 700, 768}) {
    auto a = random_tensor<float, 2>({4, n}, -9, -1, 75);
    for (bool whole : {true, false}) {
      INFO("rows of " << n << (whole ? "" : ", whole_tiles off"));
      Tensor<float, 2> m({4, 1});
      chunked_max.launch(options(target, whole), m.partition<1, 1>(), a);
      for (int64_t r = 0; r < 4; ++r) {
        float want = -INFINITY;
        for (int64_t c = 0; c < n; ++c) want = std::max(want, a(r, c));
        CHECK(m(r, 0) == want);
      }
    }
  }
}

// Kernels compiled for the launch's exact shapes (LaunchOptions::static_shapes) pad the same.
void body_static_shapes(Target target) {
  LaunchOptions o = on(target);
  o.static_shapes = true;
  auto a = random_tensor<float, 2>({3, 1000}, -20, -1, 76);
  Tensor<float, 2> y({3, 1000});
  softmax.launch(o, y.partition<1, 1024>(), a);
  Tensor<float, 2> m({2, 16});
  auto b = random_tensor<float, 2>({100, 1000}, -9, -1, 77);
  tile_max.launch(o, m.partition<1, 1>(), b);
  for (int64_t r = 0; r < 3; ++r) {
    double mx = -INFINITY, sum = 0;
    for (int64_t c = 0; c < 1000; ++c) mx = std::max<double>(mx, a(r, c));
    for (int64_t c = 0; c < 1000; ++c) sum += std::exp(a(r, c) - mx);
    for (int64_t c = 0; c < 1000; ++c) CHECK(std::abs(y(r, c) - std::exp(a(r, c) - mx) / sum) <= 1e-5 * y(r, c) + 1e-30);
  }
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 16; ++j) {
      float want = -INFINITY;
      for (int64_t r = 64 * i; r < std::min<int64_t>(100, 64 * i + 64); ++r)
        for (int64_t c = 64 * j; c < std::min<int64_t>(1000, 64 * j + 64); ++c) want = std::max(want, b(r, c));
      CHECK(m(i, j) == want);
    }
}

}  // namespace

TESSERA_TARGET_TEST_CASE("padding: ragged row max and min with -inf / +inf (i32: its least and greatest)",
                         "[padding]", body_row_max_min)
TESSERA_TARGET_TEST_CASE("padding: ragged softmax with -inf padding needs no mask", "[padding]", body_softmax)
TESSERA_TARGET_TEST_CASE("padding: NaN padding fills exactly the lanes past the edge", "[padding]", body_nan)
TESSERA_TARGET_TEST_CASE("padding: constant padding of every dtype", "[padding]", body_constant)
TESSERA_TARGET_TEST_CASE("padding: an output's own tile read back padded", "[padding]", body_own)
TESSERA_TARGET_TEST_CASE("padding: 2-D tiles ragged in both dims and a chunked loop", "[padding]",
                         body_tiles_and_loops)
TESSERA_TARGET_TEST_CASE("padding: kernels compiled for static shapes", "[padding][static]", body_static_shapes)

namespace {

using detail::InParam;
using detail::OutParam;

template <class... P, class Fn>
constexpr std::string_view ast_of(Fn) {
  return detail::kernel_ast<Fn, P...>::view();
}

constexpr auto k_padded = [](auto o, auto a) {
  return o.store(a.load_like(o).padded(c<-inf>) + load<128>(a, program_id<0>()).padded(c<quiet_nan>) +
                 o.load().padded(c<2.5>));
};
constexpr auto k_zero = [](auto o, auto a) {
  return o.store(a.load_like(o).padded(c<0>) + load<128>(a, program_id<0>()) + o.load().padded(c<-0.0>));
};
constexpr auto k_negative_nan = [](auto o, auto a) { return o.store(a.load_like(o).padded(c<-quiet_nan>)); };

using F1 = OutParam<0, DType::f32, 1, 128>;
using I1 = InParam<1, DType::f32, 1>;

}  // namespace

TEST_CASE("padding: the AST of padded loads; unpadded loads and zero padding keep the old forms", "[padding][ast]") {
  CHECK(ast_of<F1, I1>(k_padded) ==
        "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (add f32 [128] "
        "(load_like f32 [128] 1 0 (pad 0xfff0000000000000)) "
        "(load f32 [128] 1 (program_id i32 [] 0) (pad 0x7ff8000000000000))) "
        "(own f32 [128] 0 (pad 0x4004000000000000))))))");
  // +0 is the default: no item. -0 is another value.
  CHECK(ast_of<F1, I1>(k_zero) ==
        "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (add f32 [128] "
        "(load_like f32 [128] 1 0) (load f32 [128] 1 (program_id i32 [] 0))) "
        "(own f32 [128] 0 (pad 0x8000000000000000))))))");
  // Every NaN is written as the one quiet NaN.
  CHECK(ast_of<F1, I1>(k_negative_nan) ==
        "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (load_like f32 [128] 1 0 (pad "
        "0x7ff8000000000000)))))");
  STATIC_REQUIRE(detail::pad_representable(kI32Min, DType::i32));
  STATIC_REQUIRE_FALSE(detail::pad_representable(inf, DType::i32));
  STATIC_REQUIRE_FALSE(detail::pad_representable(quiet_nan, DType::i1));
  STATIC_REQUIRE_FALSE(detail::pad_representable(2, DType::i1));
  STATIC_REQUIRE(detail::pad_representable(65504, DType::f16));
  STATIC_REQUIRE_FALSE(detail::pad_representable(65536, DType::f16));
  STATIC_REQUIRE(detail::pad_representable(1e38, DType::bf16));
  STATIC_REQUIRE_FALSE(detail::pad_representable(1e39, DType::f32));
}

TEST_CASE("padding: the (pad ...) item is read back; malformed ones are named", "[padding][ast]") {
  const std::string_view text =
      "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] "
      "(load_like f32 [128] 1 0 (pad 0xfff0000000000000)) (load_like f32 [128] 1 0)))))";
  detail::KernelAst ast = detail::parse_ast("k", text);
  const detail::StoreNode store(*detail::BodyNode(*ast.body).statements().begin());
  const detail::BinaryNode add(store.value());
  const detail::LoadLikeNode padded(add.lhs()), plain(add.rhs());
  CHECK(padded.input() == 1);
  CHECK(padded.output() == 0);
  CHECK(padded.padding() == -std::numeric_limits<double>::infinity());
  CHECK(plain.output() == 0);
  CHECK_FALSE(plain.padding().has_value());
  for (std::string_view bad : {"(pad)", "(pad 0x12)", "(pad (x) 0xfff0000000000000)", "(pad 1 2)"}) {
    std::string t = "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (load_like f32 [128] 1 0 " +
                    std::string(bad) + "))))";
    INFO(bad);
    CHECK_THROWS_WITH(detail::parse_ast("k", t), Contains("kernel 'k'") && Contains("malformed AST"));
  }
}

TEST_CASE("padding: the whole-tiles check and the launcher's checks see through the padding", "[padding][whole]") {
  auto check = [](const auto& k, const auto&... args) {
    using K = std::remove_cvref_t<decltype(k)>;
    detail::WholeTiles w(detail::parse_ast(k.name(), K::template ast<decltype(args)...>()));
    std::array<detail::ArgDesc, sizeof...(args)> descs{detail::to_arg(args)...};
    const detail::ArgDesc& out = descs[0];
    std::array<int64_t, 3> grid{1, 1, 1};
    for (int d = 0; d < out.rank; ++d) grid[d] = (out.shape[d] + out.tile[d] - 1) / out.tile[d];
    return std::pair{w.analyzable(), w.holds(descs, grid)};
  };
  Tensor<float, 2> a({8, 1024}), y({8, 1024}), ar({8, 1000}), yr({8, 1000}), m({8, 1});
  CHECK(check(softmax, y.partition<1, 1024>(), a) == std::pair{true, true});
  CHECK(check(softmax, yr.partition<1, 1024>(), ar) == std::pair{true, false});
  CHECK(check(row_max, m.partition<1, 1>(), a) == std::pair{true, true});  // reads columns [0, 128)
  CHECK(check(row_max, m.partition<1, 1>(), ar) == std::pair{true, true});
  Tensor<float, 2> narrow({8, 100});
  CHECK(check(row_max, m.partition<1, 1>(), narrow) == std::pair{true, false});
  Tensor<float, 2> own({8, 256});
  CHECK(check(own_sum, own.partition<1, 128>()) == std::pair{true, true});
  Tensor<float, 2> chunks({8, 768});
  CHECK(check(chunked_max, m.partition<1, 1>(), chunks) == std::pair{true, true});
  // A padded load_like still needs the input's shape to be the output's.
  Tensor<float, 2> other({8, 999});
  CHECK_THROWS_WITH(softmax.launch_on(Target::cpu, yr.partition<1, 1024>(), other),
                    Contains("kernel 'pad_softmax'") && Contains("input parameter 1 has shape [8 999]"));
}

TEST_CASE("padding: a padded kernel compiles for sm_90 and sm_100a with its padding constant", "[padding][ptx]") {
  Tensor<float, 2> a({8, 100}), s({8, 1});
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    CompiledArtifact padded = sum_pad_float.compile(t, s.partition<1, 1>(), a);
    INFO(padded.target);
    CHECK(padded.ptx.find(".entry") != std::string::npos);
    CHECK(padded.cubin.size() > 4);
    CHECK(padded.ptx.find("0f40200000") != std::string::npos);  // 2.5f, selected for the lanes past the edge
    auto unpadded = kernel("pad_sum_unpadded", [](auto o, auto x) {
      return o.store(sum<1>(cast<DType::f32>(load<1, 128>(x, program_id<0>(), c<0>))));
    });
    CHECK(unpadded.compile(t, s.partition<1, 1>(), a).ptx.find("0f40200000") == std::string::npos);
    Tensor<float, 2> y({8, 100});
    CompiledArtifact softmax_ptx = softmax.compile(t, y.partition<1, 1024>(), a);
    CHECK(softmax_ptx.ptx.find(".entry") != std::string::npos);
  }
}
