// An elementwise op on tiles whose shapes do not broadcast ([64 32] with [64]) is rejected.
// expect: tessera: tile shapes cannot be broadcast together
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x, auto b) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(x.load_like(out) + load<64>(b, program_id<0>()));
#else
  return out.store(x.load_like(out) + load<32>(b, program_id<1>()));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 32>,
                               InParam<1, DType::f32, 2>,
                               InParam<2, DType::f32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
