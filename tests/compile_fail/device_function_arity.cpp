// A device function called with the wrong number of arguments is rejected.
// expect: tessera: wrong number of arguments in a call of a device function
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto axpy = cuda_function<"axpy", R"(extern "C" __device__ float axpy(float a, float x, float y) { return a * x + y; })",
                                    DType::f32, DType::f32, DType::f32, DType::f32>;

constexpr auto kernel = [](auto out, auto x) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(axpy(c<2>, x.load_like(out)));
#else
  return out.store(axpy(c<2>, x.load_like(out), c<1>));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::f32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
