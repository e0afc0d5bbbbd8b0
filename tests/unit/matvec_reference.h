// matvec_reference.h: the matrix-vector product of the tests of K-loop lowerings
// (test_stream_loads.cpp, test_threads_hint.cpp, test_split_k.cpp) and its host reference: y = W v for W [N, K] bf16
// row-major and v f32 [K], 16 x 512 weight tiles in a K loop with the vector chunk broadcast along
// the tile's rows (the form of the Qwen3 engine's decode products), checked against a product in
// double within the rounding of an f32 accumulation over K terms.
#pragma once

#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace matvec_reference {

// The product as a kernel named `name`: one program per R rows, R x 512 tiles, its sums starting
// at `Start` (a start other than 0 adds 512 Start to every row: split_k does not take such sums).
template <int R, int Start = 0>
auto matvec_rows(const std::string& name) {
  using namespace tessera;
  return kernel(name, [](auto y, auto w, auto v) {
    auto acc = for_range(
        (dim<0>(v) + c<511>) / c<512>,
        [=](auto k, auto acc) {
          return acc + cast<DType::f32>(load<R, 512>(w, program_id<0>(), k)) * reshape<1, 512>(load<512>(v, k));
        },
        full<DType::f32, R, 512>(c<static_cast<double>(Start)>));
    return y.store(reshape<R>(sum<1>(acc)));
  });
}

inline auto matvec_16x512(const std::string& name) { return matvec_rows<16>(name); }

// Row i of W v in double, and the sum of |w v| over the row (the scale of the rounding error).
struct Rows {
  std::vector<double> value, magnitude;
};
inline Rows product(const tessera::Tensor<tessera::bfloat16, 2>& w, const tessera::Tensor<float, 1>& v) {
  const int64_t n = w.shape()[0], k = w.shape()[1];
  Rows r{std::vector<double>(n), std::vector<double>(n)};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const double p = double(float(w(i, j))) * double(v(j));
      r.value[i] += p;
      r.magnitude[i] += std::abs(p);
    }
  return r;
}

// Elements of y further from `want` than f32 accumulation over k terms allows (2 k 2^-24 of the
// magnitude; a product of two such sums passes twice its K).
inline int64_t mismatches(const tessera::Tensor<float, 1>& y, const std::vector<double>& want,
                          const std::vector<double>& magnitude, int64_t k) {
  int64_t bad = 0;
  for (int64_t i = 0; i < y.shape()[0]; ++i) {
    const double tol = 2.0 * double(k) * std::ldexp(1.0, -24) * magnitude[i] + 1e-30;
    if (std::abs(double(y(i)) - want[i]) > tol && bad++ < 5)
      WARN("y(" << i << ") = " << y(i) << ", want " << want[i] << " (tolerance " << tol << ")");
  }
  return bad;
}

}  // namespace matvec_reference
