// A reduction along an axis the tile does not have is rejected.
// expect: tessera: reduction axis out of range
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
  return out.store(sum<2>(load<64, 64>(x, program_id<0>(), c<0>)));
#else
  return out.store(sum<1>(load<64, 64>(x, program_id<0>(), c<0>)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 1>,
                               InParam<1, DType::f32, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
