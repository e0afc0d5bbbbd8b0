// mma of operands of different dtypes is rejected, but for the two 8-bit float formats, which
// the tensor cores multiply together (e4m3 x e5m2).
// expect: tessera: mma operands A and B must have the same dtype
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart (an f8e4m3 A by an f8e5m2 B) must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto a, auto b) {
  return out.store(mma(load<64, 32>(a, program_id<0>(), c<0>), load<32, 64>(b, c<0>, program_id<1>()), c<0>));
};

#ifdef TESSERA_SHOULD_FAIL
constexpr DType kB = DType::bf16;  // an 8-bit float A and a bf16 B
#else
constexpr DType kB = DType::f8e5m2;
#endif

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f32, 2, 64, 64>,
                               InParam<1, DType::f8e4m3, 2>,
                               InParam<2, kB, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
