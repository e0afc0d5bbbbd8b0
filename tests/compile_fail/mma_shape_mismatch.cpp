// mma with A [M K] and B whose leading dim is not K is rejected.
// expect: tessera: mma shapes do not agree
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto a, auto b) {
  auto a_tile = load<64, 32>(a, program_id<0>(), c<0>);
#ifdef TESSERA_SHOULD_FAIL
  auto b_tile = load<16, 64>(b, c<0>, program_id<1>());  // K is 32 in A, 16 in B
#else
  auto b_tile = load<32, 64>(b, c<0>, program_id<1>());
#endif
  return out.store(mma(a_tile, b_tile, c<0>));
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 64>,
                               InParam<1, DType::f16, 2>,
                               InParam<2, DType::f16, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
