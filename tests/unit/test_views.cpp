// test_views.cpp: tensor views (Tensor::slice, Tensor::transposed) in launches, on the CPU target
// and on the GPU: views as inputs and outputs read and write the right elements (offsets, strides,
// unaligned offsets), share the storage (ordering, host access), and a view cannot alias another
// argument of the same launch.
#include "execution_helpers.h"

using namespace tessera;
using Catch::Matchers::Contains;

namespace {

Tensor<float, 2> iota_matrix(int64_t r, int64_t c) {
  Tensor<float, 2> m({r, c});
  for (int64_t i = 0; i < r * c; ++i) m.data()[i] = static_cast<float>(i);
  return m;
}

auto plus_one() {
  return kernel("view_plus_one", [](auto o, auto a) { return o.store(a.load_like(o) + c<1>); });
}

void views_in_and_out(Target target) {
  auto x = iota_matrix(100, 60);
  Tensor<float, 2> y({100, 60});
  // Rows 10..49 of x (an offset view, 16-byte aligned) into rows 0..39 of y (a view too).
  Tensor<float, 2> rows_in = x.slice(0, 10, 50), rows_out = y.slice(0, 0, 40);
  plus_one().launch_on(target, rows_out.partition<16, 32>(), rows_in);
  // Columns 3..58 (an unaligned offset) into columns 1..56 of rows 40..99.
  Tensor<float, 2> cols_in = x.slice(0, 0, 60).slice(1, 3, 59), cols_out = y.slice(0, 40, 100).slice(1, 1, 57);
  plus_one().launch_on(target, cols_out.partition<16, 32>(), cols_in);
  int64_t bad = 0;
  for (int64_t i = 0; i < 40; ++i)
    for (int64_t j = 0; j < 60; ++j) bad += y(i, j) != x(i + 10, j) + 1;
  for (int64_t i = 0; i < 60; ++i)
    for (int64_t j = 0; j < 60; ++j) bad += y(40 + i, j) != (j >= 1 && j < 57 ? x(i, j + 2) + 1 : 0.0f);
  CHECK(bad == 0);
  CHECK(rows_out.storage_offset() == 0);
  CHECK(cols_in.storage_offset() == 3);
}

void transposed_view(Target target) {
  auto x = iota_matrix(70, 130);
  Tensor<float, 2> y({130, 70});
  plus_one().launch_on(target, y.partition<32, 32>(), x.transposed());
  Tensor<float, 2> back({70, 130});
  // Writing through a transposed (strided) output view.
  Tensor<float, 2> back_t = back.transposed();
  plus_one().launch_on(target, back_t.partition<32, 32>(), y);
  int64_t bad = 0;
  for (int64_t i = 0; i < 130; ++i)
    for (int64_t j = 0; j < 70; ++j) bad += y(i, j) != x(j, i) + 1 || back(j, i) != x(j, i) + 2;
  CHECK(bad == 0);
}

void view_aliasing(Target target) {
  auto x = iota_matrix(64, 64);
  Tensor<float, 2> top = x.slice(0, 0, 32), bottom = x.slice(0, 32, 64);
  // Disjoint or not, two handles of one storage cannot be an output and an input of one launch.
  CHECK_THROWS_WITH(plus_one().launch_on(target, top.partition<32, 32>(), bottom),
                    Contains("view_plus_one") && Contains("alias"));
  // A launch writing through a view is waited for by host access through any handle.
  auto z = iota_matrix(32, 64);
  auto h = plus_one().launch_async(LaunchOptions{.target = target}, top.partition<32, 32>(), z);
  CHECK(x(0, 0) == 1);
  CHECK(x(31, 63) == 31 * 64 + 63 + 1);
  CHECK(x(32, 0) == 32 * 64);  // the rows outside the view are untouched
  h.wait();
}

}  // namespace

TESSERA_TARGET_TEST_CASE("views (slices) as kernel inputs and outputs", "[views]", views_in_and_out)
TESSERA_TARGET_TEST_CASE("a transposed view, read and written", "[views]", transposed_view)
TESSERA_TARGET_TEST_CASE("views of one storage alias in a launch", "[views]", view_aliasing)

TEST_CASE("slices out of range are errors", "[views][errors]") {
  Tensor<float, 2> x({10, 20});
  CHECK_THROWS_WITH(x.slice(2, 0, 1), Contains("dimension 2 of a rank-2 tensor"));
  CHECK_THROWS_WITH(x.slice(1, 5, 21), Contains("[5, 21) is not within dimension 1 of size 20"));
  CHECK_THROWS_WITH(x.slice(0, 4, 3), Contains("[4, 3)"));
  Tensor<float, 2> v = x.slice(1, 5, 5);
  CHECK(v.numel() == 0);
}
