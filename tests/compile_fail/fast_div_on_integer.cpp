// The approximate division fast_div on i32 tiles is rejected (it exists for floating point only).
// expect: tessera: fast_div needs floating-point tiles
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
  return out.store(cast<DType::f32>(fast_div(x.load_like(out), x.load_like(out))));
#else
  auto f = cast<DType::f32>(x.load_like(out));
  return out.store(fast_div(f, f));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::i32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
