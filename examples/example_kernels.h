// example_kernels.h: the kernels of the examples, shared with the tests that compile every
// example kernel for sm_90 and sm_100a (tests/unit/test_compile_gpu.cpp; the matmul's in
// tests/unit/test_matmul.cpp, for every GPU target).
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

// out = bf16(relu(a @ b + bias)) for bf16 a: M x K, b: K x N, bias: N, in 128 x 128 output tiles.
// A K loop carries the f32 accumulator over 128 x 64 tiles of a and 64 x 128 tiles of b (tiles
// past an edge read as zero, so ragged M, N and K need nothing more); bias, relu and the cast are
// fused before the store. On sm_90 it takes the tensor-core lowering (docs/compiler.md).
inline auto matmul_bias_relu() {
  return tessera::kernel("matmul_bias_relu", [](auto out, auto a, auto b, auto bias) {
    using namespace tessera;
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto k, auto acc) { return mma(load<128, 64>(a, program_id<0>(), k), load<64, 128>(b, k, program_id<1>()), acc); },
        full<DType::f32, 128, 128>(c<0.0>));
    auto y = acc + cast<DType::f32>(load<128>(bias, program_id<1>()));  // the bias row, broadcast
    return out.store(cast<DType::bf16>(maximum(y, c<0.0>)));
  });
}

// The largest |x| of each 64 x 256 tile of a matrix, one f32 per program (the host takes the
// largest of these partial maxima): the per-tensor amax of an fp8 quantization. Tiles past an
// edge read as 0, which no maximum of magnitudes notices.
inline auto tile_abs_max() {
  return tessera::kernel("tile_abs_max", [](auto out, auto x) {
    using namespace tessera;
    auto t = abs(cast<DType::f32>(load<64, 256>(x, program_id<0>(), program_id<1>())));
    return out.store(max<1>(max<0>(t)));
  });
}

// q = f8e4m3(x * scale) elementwise, for a scalar f32 scale (448 / amax maps the largest |x| to
// e4m3's largest value); the cast rounds to nearest even and saturates.
inline auto quantize_e4m3() {
  return tessera::kernel("quantize_e4m3", [](auto out, auto x, auto scale) {
    using namespace tessera;
    return out.store(cast<DType::f8e4m3>(cast<DType::f32>(x.load_like(out)) * scale));
  });
}

// y = bf16((qx @ qw) * (scale_x * scale_w)): an fp8 linear layer as torch._scaled_mm computes it,
// qx: M x K f8e4m3 and qw the transposed() view of an N x K f8e4m3 weight (K-major, how the
// tensor cores read 8-bit floats), per-tensor f32 scales, 128 x 128 output tiles and K steps of
// 128. On sm_90 it takes TMA + wgmma k32, on sm_89 and newer mma.sync m16n8k32 where the tile
// allows (docs/compiler.md).
inline auto fp8_linear() {
  return tessera::kernel("fp8_linear", [](auto out, auto qx, auto qw, auto scale_x, auto scale_w) {
    using namespace tessera;
    auto acc = for_range(
        (dim<1>(qx) + c<127>) / c<128>,
        [=](auto k, auto acc) { return mma(load<128, 128>(qx, program_id<0>(), k), load<128, 128>(qw, k, program_id<1>()), acc); },
        full<DType::f32, 128, 128>(c<0.0>));
    return out.store(cast<DType::bf16>(acc * (scale_x * scale_w)));
  });
}

}  // namespace examples
