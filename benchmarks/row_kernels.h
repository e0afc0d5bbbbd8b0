// row_kernels.h: the row kernels of bench_rows (8192-wide bf16 rows, one row per program), as a
// user writes them. Shared with the tests that check what they compile to
// (tests/unit/test_compile_gpu.cpp, test_occupancy.cpp).
#pragma once

#include <tessera/tessera.h>

#include <string>

namespace row_kernels {

using namespace tessera;

inline auto copy() {
  return kernel("row_copy", [](auto o, auto a) { return o.store(a.load_like(o)); });
}
// The row sum over rows of W elements (row_sum_w<W>; W = 8192 is bench_rows' row_sum).
template <int W>
auto row_sum_of() {
  return kernel(W == 8192 ? std::string("row_sum") : "row_sum_w" + std::to_string(W), [](auto o, auto a) {
    return o.store(sum<1>(cast<DType::f32>(load<1, W>(a, program_id<0>(), c<0>))));
  });
}
inline auto row_sum() { return row_sum_of<8192>(); }
// The row sum as a loop over 2048-wide chunks of the row (the structure of Inductor's kernel).
inline auto row_sum_loop() {
  return kernel("row_sum_loop", [](auto o, auto a) {
    auto acc = for_range(
        (dim<1>(a) + c<2047>) / c<2048>,
        [=](auto j, auto acc) { return acc + cast<DType::f32>(load<1, 2048>(a, program_id<0>(), j)); },
        full<DType::f32, 1, 2048>(c<0.0>));
    return o.store(sum<1>(acc));
  });
}
inline auto row_max() {
  return kernel("row_max", [](auto o, auto a) {
    return o.store(max<1>(cast<DType::f32>(load<1, 8192>(a, program_id<0>(), c<0>))));
  });
}
inline auto softmax() {
  return kernel("softmax", [](auto o, auto a) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto e = exp(t - max<1>(t));
    return o.store(cast<DType::bf16>(e / sum<1>(e)));
  });
}
// The same softmax with the explicit approximations (as Triton's tl.exp and `/` are).
inline auto softmax_fast() {
  return kernel("softmax_fast", [](auto o, auto a) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto e = fast_exp(t - max<1>(t));
    return o.store(cast<DType::bf16>(fast_div(e, sum<1>(e))));
  });
}
// RMSNorm over rows of W elements with a weight of W (rmsnorm_w<W>; W = 8192 is bench_rows'
// rmsnorm).
template <int W>
auto rmsnorm_of() {
  return kernel(W == 8192 ? std::string("rmsnorm") : "rmsnorm_w" + std::to_string(W), [](auto o, auto a, auto wt) {
    auto t = cast<DType::f32>(a.load_like(o));
    auto inv = rsqrt(sum<1>(t * t) * c<1.0 / W> + c<1e-6>);
    return o.store(cast<DType::bf16>(t * inv * cast<DType::f32>(load<W>(wt, c<0>))));
  });
}
inline auto rmsnorm() { return rmsnorm_of<8192>(); }
// LayerNorm over rows of W elements with a weight and a bias of W (layernorm_w<W>; W = 8192 is
// bench_rows' layernorm).
template <int W>
auto layernorm_of() {
  return kernel(W == 8192 ? std::string("layernorm") : "layernorm_w" + std::to_string(W),
                [](auto o, auto a, auto wt, auto bs) {
                  auto t = cast<DType::f32>(a.load_like(o));
                  auto mean = sum<1>(t) * c<1.0 / W>;
                  auto d = t - mean;
                  auto inv = rsqrt(sum<1>(d * d) * c<1.0 / W> + c<1e-5>);
                  return o.store(cast<DType::bf16>(d * inv * cast<DType::f32>(load<W>(wt, c<0>)) +
                                                   cast<DType::f32>(load<W>(bs, c<0>))));
                });
}
inline auto layernorm() { return layernorm_of<8192>(); }

}  // namespace row_kernels
