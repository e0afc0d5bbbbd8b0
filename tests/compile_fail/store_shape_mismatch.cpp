// Storing a tile whose shape differs from the output tile shape is rejected.
// expect: tessera: stored tile shape does not match the output tile shape
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
  return out.store(sum<1>(x.load_like(out)));
#else
  return out.store(broadcast_to<64, 64>(sum<1>(x.load_like(out))));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 64>,
                               InParam<1, DType::f32, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
