// A plain C++ number in a tile expression is rejected: only types are recorded, so a constant must
// be written as c<V>.
// expect: tessera: a plain C\+\+ number cannot appear in a tile expression
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
  auto v = x.load_like(out);
#ifdef TESSERA_SHOULD_FAIL
  return out.store(cast<DType::f32>(v) + cast<DType::f32>(v > 0));
#else
  return out.store(cast<DType::f32>(v) + cast<DType::f32>(v > c<0>));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>, InParam<1, DType::i32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
