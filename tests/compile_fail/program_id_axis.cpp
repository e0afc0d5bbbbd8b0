// program_id<D> for an axis the grid does not have (it has three) is rejected.
// expect: tessera: program_id<D>: the grid has three axes
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
  return out.store(load<128>(x, program_id<3>()));
#else
  return out.store(load<128>(x, program_id<0>()));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 1, 128>, InParam<1, DType::f32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
