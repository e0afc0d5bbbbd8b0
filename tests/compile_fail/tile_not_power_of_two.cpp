// An output partition whose tile dims are not powers of two is rejected.
// expect: tessera: tile dims must be powers of two
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) { return out.store(x.load_like(out) * c<2>); };

#ifdef TESSERA_SHOULD_FAIL
using Out = OutParam<0, DType::f32, 2, 48, 64>;  // 48 is not a power of two
#else
using Out = OutParam<0, DType::f32, 2, 64, 64>;
#endif
using Ast = detail::kernel_ast<decltype(kernel), Out, InParam<1, DType::f32, 2>>;
static_assert(Ast::view().starts_with("(kernel (params"));
