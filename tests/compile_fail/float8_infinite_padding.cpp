// f8e4m3 has no infinities: a load padded with -inf is rejected (f8e5m2 takes it).
// expect: tessera: the padding value is not representable in the loaded dtype
//
// Built twice by tests/compile_fail/CMakeLists.txt: with -DTESSERA_SHOULD_FAIL the kernel below
// must be rejected with the static_assert message matched by the "expect" regex; without it, the
// valid counterpart (padding with the most negative finite value) must compile.
#include "tessera/dsl.h"

using namespace tessera;
using detail::InParam;
using detail::OutParam;

constexpr auto kernel = [](auto out, auto x) {
#ifdef TESSERA_SHOULD_FAIL
  return out.store(x.load_like(out).padded(c<-inf>));
#else
  return out.store(x.load_like(out).padded(c<-448>));
#endif
};

using Ast = detail::kernel_ast<decltype(kernel), OutParam<0, DType::f8e4m3, 1, 128>,
                               InParam<1, DType::f8e4m3, 1>>;
static_assert(Ast::view().starts_with("(kernel (params"));
