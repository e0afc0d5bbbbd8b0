// A device function called with an argument of another dtype than declared is rejected.
// expect: tessera: dtype mismatch in a call of a device function
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
#ifdef TESSERA_SHOULD_FAIL
  return out.store(twice(x.load_like(out)));  // x is i32
#else
  return out.store(twice(cast<DType::f32>(x.load_like(out))));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::i32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
