// Storing a tile whose dtype differs from the output dtype is rejected (no implicit conversion).
// expect: tessera: stored tile dtype does not match the output dtype
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(x.load_like(out));
#else
  return out.store(cast<DType::f16>(x.load_like(out)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f16, 1, 128>,
                               InParam<1, DType::f32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
