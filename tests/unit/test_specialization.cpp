// test_specialization.cpp: a launch's Specialization (compiler/specialization.h): the layout of each
// argument, the shapes of a static launch, equality and hashing (the process cache's key), the key
// text (the disk cache's key, which must not change: entries written by earlier builds still hit),
// and the launch path's promise to build one without allocating.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <array>

#include "compiler/kernels.h"
#include "compiler/specialization.h"
#include "execution_helpers.h"

using namespace tessera;
using detail::ArgLayout;
using detail::Specialization;

namespace {

template <class... A>
Specialization specialization_of(bool static_shapes, const A&... args) {
  std::array<detail::ArgDesc, sizeof...(A)> descs{detail::to_arg(args)...};
  Specialization s;
  detail::specialize(descs, Target::cpu, static_shapes, s);
  return s;
}

}  // namespace

TEST_CASE("specialization: each argument's layout", "[cache][specialization]") {
  Tensor<float, 2> z({8, 64}), x({8, 64}), narrow({8, 3});
  auto view = x.slice(1, 1, 64);  // offset 1 float: rows contiguous, base not 16-byte aligned
  // x.transposed(): columns contiguous, their stride 64 floats (16-byte multiples); narrow.transposed():
  // a column stride of 3 floats, and a strided view of x's rows: any strides.
  const Specialization s = specialization_of(false, z.partition<1, 64>(), x, x.transposed(), view, narrow, 2.0f,
                                             narrow.transposed(), x.slice(1, 0, 32).transposed().slice(0, 0, 16));
  CHECK(s.layouts == llvm::SmallVector<ArgLayout, 16>{ArgLayout::aligned, ArgLayout::aligned,
                                                      ArgLayout::aligned_columns, ArgLayout::contiguous,
                                                      ArgLayout::contiguous, ArgLayout::scalar, ArgLayout::strided,
                                                      ArgLayout::aligned_columns});
  CHECK_FALSE(s.shapes);
  CHECK_FALSE(s.whole_tiles);
  CHECK(s.layout(5) == ArgLayout::scalar);
  CHECK(s.layout(8) == ArgLayout::strided);  // past the arguments: assume nothing
  CHECK(Specialization{}.layout(0) == ArgLayout::strided);
}

TEST_CASE("specialization: the key text is the disk cache's, unchanged", "[cache][specialization]") {
  Tensor<float, 2> z({8, 64}), x({8, 64});
  Tensor<bfloat16, 2> rows({4, 8192});
  Tensor<float, 2> sums({4, 1});
  Specialization s = specialization_of(false, z.partition<1, 64>(), x, x.transposed(), 2.0f);
  CHECK(s.key_text() == "aat-");
  s.whole_tiles = true;
  CHECK(s.key_text() == "aat-/whole");
  const Specialization fixed = specialization_of(true, sums.partition<1, 1>(), rows, 3);
  CHECK(fixed.key_text() == "ca-|0:4x1:1x1;0:4x8192:8192x1;-@4,1,1");
  // A view: its offset and strides; an empty output still counts one program per axis.
  Tensor<float, 1> empty({0});
  const Specialization view = specialization_of(true, empty.partition<128>(), x.slice(0, 2, 5));
  CHECK(view.key_text() == "aa|0:0:1;128:3x64:64x1@1,1,1");
}

TEST_CASE("specialization: equality and hashing", "[cache][specialization]") {
  Tensor<float, 2> z({8, 64}), x({8, 64}), y({16, 64});
  const Specialization a = specialization_of(false, z.partition<1, 64>(), x);
  const Specialization b = specialization_of(false, z.partition<1, 64>(), x);
  CHECK(a == b);
  CHECK(a.hash() == b.hash());
  // Shapes do not count without static shapes; they do with them.
  CHECK(specialization_of(false, z.partition<1, 64>(), y) == a);
  CHECK(specialization_of(true, z.partition<1, 64>(), x) != a);
  CHECK(specialization_of(true, z.partition<1, 64>(), y) != specialization_of(true, z.partition<1, 64>(), x));
  CHECK(specialization_of(true, z.partition<1, 64>(), y).hash() !=
        specialization_of(true, z.partition<1, 64>(), x).hash());
  CHECK(specialization_of(false, z.partition<1, 64>(), x.transposed()) != a);
  Specialization whole = a;
  whole.whole_tiles = true;
  CHECK(whole != a);
  CHECK(whole.hash() != a.hash());
}

TEST_CASE("specialization: the launch path builds one without allocating", "[cache][specialization]") {
  // Inline storage: up to 16 arguments, static shapes for up to 8 of rank up to 4.
  Tensor<float, 4> x({2, 2, 2, 4});
  Tensor<float, 1> z({128});
  std::array<detail::ArgDesc, 8> args;
  args.fill(detail::to_arg(x));
  args[0] = detail::to_arg(z.partition<128>());
  Specialization s;
  detail::specialize(args, Target::cpu, true, s);
  CHECK(s.layouts.capacity() == 16);
  REQUIRE(s.shapes);
  CHECK(s.shapes->tensors.capacity() == 8);
  for (const detail::StaticTensor& t : s.shapes->tensors) {
    CHECK(t.sizes.capacity() == 4);
    CHECK(t.strides.capacity() == 4);
  }
}
