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

// Row-wise softmax over a [1 x 1024] row tile; padded columns are masked to -inf-like values
// before the max and the exponentials, so they contribute nothing.
inline auto softmax() {
  return tessera::kernel("softmax", [](auto out, auto in) {
    using namespace tessera;
    auto t = in.load_like(out);                                // f32 [1 1024], zero-padded
    auto valid = iota<1024>() < dim<1>(in);                    // i1 [1024]
    auto masked = select(valid, t, full<DType::f32, 1024>(c<-1e30>));
    auto e = exp(masked - max<1>(masked));
    return out.store(e / sum<1>(e));
  });
}

}  // namespace examples
