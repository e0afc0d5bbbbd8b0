// example_kernels.h: the kernels of the examples, shared with the tests that compile every
// example kernel for sm_90 and sm_100a (tests/unit/test_compile_gpu.cpp).
#pragma once

#include <tessera/tessera.h>

namespace examples {

// out = a + b, elementwise.
inline auto vector_add() {
  return tessera::kernel("vector_add", [](auto out, auto a, auto b) {
    return out.store(a.load_like(out) + b.load_like(out));
  });
}

// Row-wise softmax over a [1 x 1024] row tile. The columns past a row's end are read as -inf, so
// they take no part in the max and their exponentials are 0: a ragged row needs no mask.
inline auto softmax() {
  return tessera::kernel("softmax", [](auto out, auto in) {
    using namespace tessera;
    auto t = in.load_like(out).padded(c<-inf>);  // f32 [1 1024], -inf past the row's end
    auto e = exp(t - max<1>(t));
    return out.store(e / sum<1>(e));
  });
}

}  // namespace examples
