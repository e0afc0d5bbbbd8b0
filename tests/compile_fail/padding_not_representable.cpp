// A padding value the loaded dtype cannot hold is rejected: NaN (or an infinity) for an i32 load.
// expect: tessera: the padding value is not representable in the loaded dtype
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart must compile.
#include <cstdint>
#include <limits>

#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(max<0>(load<128>(x, c<0>).padded(c<quiet_nan>)));
#else
  return out.store(max<0>(load<128>(x, c<0>).padded(c<std::numeric_limits<std::int32_t>::min()>)));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::i32, 1, 1>, InParam<1, DType::i32, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
