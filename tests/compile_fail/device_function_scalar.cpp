// A device function called on scalars alone (rank-0 values) is rejected: it is applied
// elementwise to tiles, so one argument must be a tile.
// expect: tessera: a device function is called elementwise on tiles
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto twice = cuda_function<"twice", R"(extern "C" __device__ float twice(float x) { return 2 * x; })",
                                     DType::f32, DType::f32>;

constexpr auto kernel = [](auto out, auto x) {
  auto p = cast<DType::f32>(program_id<0>());
#ifdef TESSERA_SHOULD_FAIL
  return out.store(x.load_like(out) + twice(p));
#else
  return out.store(x.load_like(out) + twice(broadcast_to<1>(p)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::f32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
