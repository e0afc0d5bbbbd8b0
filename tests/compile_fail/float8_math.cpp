// Math, comparisons and reductions on an 8-bit float tile are rejected (here exp of f8e5m2).
// expect: tessera: f8e4m3 and f8e5m2 tiles hold data
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart (exp, a comparison and a sum of the tile cast to f32) must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
  auto t = x.load_like(out);
#ifdef TESSERA_SHOULD_FAIL
  return out.store(cast<DType::f32>(exp(t)));
#else
  auto w = cast<DType::f32>(t);
  return out.store(select(w > c<0>, exp(w), w + sum<0>(w)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>,
                               InParam<1, DType::f8e5m2, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
