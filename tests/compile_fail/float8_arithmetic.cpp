// Arithmetic on an 8-bit float tile (a sum of two f8e4m3 tiles) is rejected: they hold data.
// expect: tessera: f8e4m3 and f8e5m2 tiles hold data
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart (the sum in f32, cast back) must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
  auto t = x.load_like(out);
#ifdef TESSERA_SHOULD_FAIL
  return out.store(t + t);
#else
  auto w = cast<DType::f32>(t);
  return out.store(cast<DType::f8e4m3>(w + w));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f8e4m3, 1, 128>,
                               InParam<1, DType::f8e4m3, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
