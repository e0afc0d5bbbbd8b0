// A loop body that yields a value of another dtype than its init is rejected.
// expect: tessera: a loop body must yield each carried value with the dtype and shape of its init
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
  auto body = [&](auto i, auto acc) { return load<128>(x, i); };  // yields f16; the init is f32
#else
  auto body = [&](auto i, auto acc) { return acc + cast<DType::f32>(load<128>(x, i)); };
#endif
  return out.store(for_range(c<4>, body, full<DType::f32, 128>(c<0>)));
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::f16, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
