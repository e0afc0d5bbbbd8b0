// test_errors.cpp: misuse that C++ cannot reject at compile time fails at launch with a
// tessera::Error naming the kernel, the parameter and what was expected.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <array>
#include <cstdlib>
#include <memory>

using namespace tessera;
using Catch::Matchers::Contains;

namespace {
auto add_kernel() {
  return kernel("err_add", [](auto out, auto x, auto y) { return out.store(x.load_like(out) + y.load_like(out)); });
}
}  // namespace

TEST_CASE("an output that aliases an input is rejected", "[errors]") {
  Tensor<float, 1> x({100}), y({100});
  auto add = add_kernel();
  CHECK_THROWS_WITH(add.launch_on(Target::cpu, x.partition<128>(), x, y),
                    Contains("kernel 'err_add'") && Contains("output parameter 0 aliases input parameter 1"));
}

TEST_CASE("the same tensor as two outputs is rejected", "[errors]") {
  Tensor<float, 1> x({100}), z({100});
  auto two = kernel("err_two_outputs", [](auto o1, auto o2, auto a) {
    return seq(o1.store(a.load_like(o1)), o2.store(a.load_like(o2)));
  });
  CHECK_THROWS_WITH(two.launch_on(Target::cpu, z.partition<128>(), z.partition<128>(), x),
                    Contains("output parameter 0 aliases output parameter 1"));
}

TEST_CASE("an input loaded like an output must have its shape", "[errors]") {
  Tensor<float, 1> x({100}), y({99}), z({100});
  auto add = add_kernel();
  CHECK_THROWS_WITH(add.launch_on(Target::cpu, z.partition<128>(), x, y),
                    Contains("kernel 'err_add'") && Contains("input parameter 2 has shape [99]") &&
                        Contains("output parameter 0 of shape [100]"));
}

TEST_CASE("outputs must agree on the grid", "[errors]") {
  Tensor<float, 1> x({1000}), z1({1000}), z2({500});
  auto two = kernel("err_grids", [](auto o1, auto o2, auto a) {
    return seq(o1.store(load<128>(a, program_id<0>())), o2.store(load<128>(a, program_id<0>())));
  });
  CHECK_THROWS_WITH(two.launch_on(Target::cpu, z1.partition<128>(), z2.partition<128>(), x),
                    Contains("output parameter 1 has grid [4 1 1] but output parameter 0 has grid [8 1 1]"));
}

TEST_CASE("a bad TESSERA_TARGET is reported, not ignored", "[errors]") {
  ::setenv("TESSERA_TARGET", "sm_75", 1);
  CHECK_THROWS_WITH(default_target(), Contains("TESSERA_TARGET='sm_75'"));
  ::unsetenv("TESSERA_TARGET");
}

TEST_CASE("a tensor in use by a launch in flight is ordered after it, not raced", "[errors][borrow]") {
  Tensor<float, 1> x({100}), z({100});
  x.fill(1.0f);
  auto copy = kernel("err_copy", [](auto out, auto a) { return out.store(a.load_like(out)); });
  auto h = copy.launch_async({.target = Target::cpu}, z.partition<128>(), x);  // z borrowed exclusively
  x.fill(2.0f);  // a host write to an input in flight waits for the launch
  copy.launch_on(Target::cpu, z.partition<128>(), x);  // a second writer of z is ordered after h
  h.wait();
  REQUIRE(z.storage()->writer != nullptr);  // the synchronous launch, the last writer
  CHECK(z.storage()->writer->done());
  CHECK(z(99) == 2.0f);
}

TEST_CASE("tensor construction errors", "[errors]") {
  std::vector<float> v(3);
  CHECK_THROWS_WITH((Tensor<float, 1>({4}, std::span<const float>(v))), Contains("3 values given for 4 elements"));
  CHECK_THROWS_WITH((Tensor<float, 2>({-1, 2})), Contains("negative size"));
}

TEST_CASE("fill and reshape keep one owner of the storage", "[tensor]") {
  Tensor<float, 1> v({6});
  v.fill(2.5f);
  auto m = std::move(v).reshape<2>({2, 3});
  CHECK(m.shape(0) == 2);
  CHECK(m.strides()[0] == 3);
  CHECK(m(1, 2) == 2.5f);
  CHECK(v.storage() == nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state under test
  CHECK_THROWS_WITH(std::move(m).reshape<1>({7}), Contains("6 elements cannot have 7"));
}

// The internal entry point takes AST text with argument descriptions: a store, own or load_like
// tile other than the output's declared tile, or a partition tile other than the kernel's, is
// refused (the grid and the whole-tiles check assume the declared tile: a larger tile would be
// accessed past the tensor without masks).
TEST_CASE("AST tiles that disagree with the output's tile are refused", "[errors]") {
  auto out = std::make_shared<detail::Storage>(58 * 4);
  auto args_for = [&](int64_t tile) {
    std::array<detail::ArgDesc, 1> a{};
    a[0].kind = detail::ArgDesc::Kind::out;
    a[0].rank = 2;
    a[0].shape = {58, 1};
    a[0].strides = {1, 1};
    a[0].tile = {tile, 1};
    a[0].storage = out;
    return a;
  };
  auto launch = [&](std::string_view ast, int64_t tile) {
    auto args = args_for(tile);
    detail::launch(detail::LaunchRequest{"err_tiles", ast, args}, Target::cpu);
  };
  CHECK_THROWS_WITH(launch("(kernel (params (out f32 2 [8 1])) (body (store 0 (const f32 [32 1] 0x3ff0000000000000))))", 8),
                    Contains("kernel 'err_tiles'") && Contains("is not output 0's tile"));
  CHECK_THROWS_WITH(launch("(kernel (params (out f32 2 [8 1])) (body (store 0 (own f32 [32 1] 0))))", 8),
                    Contains("is not output 0's tile"));
  CHECK_THROWS_WITH(launch("(kernel (params (out f32 2 [8 1])) (body (store 0 (const f32 [8 1] 0x3ff0000000000000))))", 32),
                    Contains("parameter 0: the partition's tile [32 1] is not the kernel's tile [8 1]"));
}

TEST_CASE("an AST dim past the tensor's rank is refused", "[errors]") {
  auto out = std::make_shared<detail::Storage>(64 * 4);
  std::array<detail::ArgDesc, 1> args{};
  args[0].kind = detail::ArgDesc::Kind::out;
  args[0].dtype = DType::i32;
  args[0].rank = 1;
  args[0].shape = {64};
  args[0].strides = {1};
  args[0].tile = {64};
  args[0].storage = out;
  const std::string_view ast = "(kernel (params (out i32 1 [64])) (body (store 0 (broadcast i32 [64] (dim i32 [] 0 65536)))))";
  CHECK_THROWS_WITH(detail::launch(detail::LaunchRequest{"err_dim", ast, args}, Target::cpu),
                    Contains("kernel 'err_dim'") && Contains("names dim 65536 of a rank-1 tensor"));
}
