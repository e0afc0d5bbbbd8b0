// matmul_reference.h: the host reference of the matmul tests (test_matmul.cpp,
// test_matmul_mma_sync.cpp, test_split_k.cpp, test_tail_halves.cpp): an M x K by K x N product
// accumulated in double (also a @ w^T of an N x K weight, and the row-major copy of its transposed
// view), the error bound of an f32-accumulated product by input dtype and K, and a count of the
// elements outside it.
#pragma once

#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace matmul_reference {

using tessera::DType;

template <class T>
double d(T v) {
  return static_cast<double>(static_cast<float>(v));
}

// The reference product of an M x K and a K x N matrix given as element accessors (double in,
// double out): value(i, j) = sum_k a(i, k) b(k, j), and magnitude(i, j) = sum_k |a(i, k)| |b(k, j)|,
// which scales the error bound.
struct Reference {
  int64_t n = 0;
  std::vector<double> value, magnitude;
  double at(int64_t i, int64_t j) const { return value[i * n + j]; }
  double mag(int64_t i, int64_t j) const { return magnitude[i * n + j]; }
};

template <class A, class B>
Reference reference(int64_t m, int64_t n, int64_t k, A a, B b) {
  Reference r;
  r.n = n;
  r.value.assign(m * n, 0.0);
  r.magnitude.assign(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t kk = 0; kk < k; ++kk) {
      const double x = a(i, kk);
      for (int64_t j = 0; j < n; ++j) {
        r.value[i * n + j] += x * b(kk, j);
        r.magnitude[i * n + j] += std::abs(x * b(kk, j));
      }
    }
  return r;
}

// The reference of a @ w^T for an M x K `a` and an N x K `w` (a weight, multiplied through its
// transposed view, a K-major B).
template <class TA, class TW>
Reference reference_wt(const tessera::Tensor<TA, 2>& a, const tessera::Tensor<TW, 2>& w) {
  return reference(a.shape(0), w.shape(0), a.shape(1), [&](int64_t i, int64_t kk) { return d(a(i, kk)); },
                   [&](int64_t kk, int64_t j) { return d(w(j, kk)); });
}

// The K x N row-major copy of an N x K `w`: the same B as w.transposed(), read row-major.
template <class T>
tessera::Tensor<T, 2> row_major_copy_of_transposed(const tessera::Tensor<T, 2>& w) {
  tessera::Tensor<T, 2> b({w.shape(1), w.shape(0)});
  for (int64_t kk = 0; kk < w.shape(1); ++kk)
    for (int64_t j = 0; j < w.shape(0); ++j) b(kk, j) = w(j, kk);
  return b;
}

// Bound on |c - reference| for one element of an f32-accumulated product of K terms, as a factor
// of its magnitude sum_k |a_ik| |b_kj|:
//   f16 and bf16 inputs: a product of two such values has at most 22 significant bits, so it is
//     exact in f32 and only the accumulation errs: |err| <= gamma_K * sum |a||b| with
//     gamma_K ~ K u, u = 2^-24 (round to nearest). The bound is 2 K 2^-24: the factor 2 allows
//     additions that truncate instead of rounding (tensor-core accumulation may) and any order.
//   f32 inputs: the same plus 2^-9 for the products: the tensor-core path for f32 inputs is tf32,
//     whose 10-bit mantissas (inputs truncated, relative error < 2^-10 each) give products within
//     2^-9 of the exact one.
//   8-bit float inputs: the products are exact, but Hopper's 8-bit wgmma keeps 13 bits of each
//     instruction's sum (truncated); the lowering adds each k-tile's partial sum (at most 8
//     instructions) to the f32 accumulator, so each k-tile errs by at most about 8 2^-13 of its
//     magnitude: 2^-9 covers it. Without that promotion the error would grow with K (see the
//     "long sums" test in test_float8.cpp, which bounds it tighter).
inline double product_bound(DType inputs, int64_t k) {
  const double accumulation = 2.0 * static_cast<double>(k) * std::ldexp(1.0, -24);
  return inputs == DType::f32 || is_float8(inputs) ? accumulation + std::ldexp(1.0, -9) : accumulation;
}

// GELU's tanh form, as the kernels' fused epilogues compute it (matmul_kernels::matmul_bias_gelu).
inline double gelu_tanh(double x) { return 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

// Counts the elements of `got` (an accessor, i, j -> double) outside
// |got - want| <= bound * magnitude + rel * |want|, where want = f(reference) and rel covers the
// rounding of the output's own dtype; reports the first such element.
template <class Got, class Want>
int64_t mismatches(const Reference& r, int64_t m, int64_t n, double bound, double rel, Got got, Want want) {
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const double w = want(i, j), g = got(i, j);
      const double tol = bound * r.mag(i, j) + rel * std::abs(w);
      if (!(std::abs(g - w) <= tol)) {
        if (bad == 0) UNSCOPED_INFO("first mismatch at (" << i << ", " << j << "): got " << g << ", want " << w
                                                          << ", tolerance " << tol);
        ++bad;
      }
    }
  return bad;
}

}  // namespace matmul_reference
