// An elementwise op on tiles of different dtypes is rejected (no implicit promotion).
// expect: tessera: dtype mismatch in elementwise op
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x, auto y) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(x.load_like(out) + y.load_like(out));
#else
  return out.store(x.load_like(out) + cast<DType::f32>(y.load_like(out)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::f32, 1>,
                               InParam<2, DType::f16, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
