// Storing into another program's tile is rejected: a program stores only its own tile (that is
// what makes kernels race-free); writing other tiles needs the unsafe opt-out.
// expect: tessera: a program stores only its own tile: write out.store\(value\).*unsafe
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
  auto t = load<64, 64>(x, program_id<0>(), program_id<1>());
#ifdef TESSERA_SHOULD_FAIL
  return out.store(t, program_id<1>(), program_id<0>());
#else
  return out.store(t);
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 64>,
                               InParam<1, DType::f32, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
