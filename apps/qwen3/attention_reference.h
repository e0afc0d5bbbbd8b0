// attention_reference.h: one query's softmax attention over a KV head's positions, in double.
//
// The host definition of what the engine's attention kernels compute, shared by the reference
// model (reference.cpp), the kernel tests (which also take the magnitudes their error bounds
// need) and bench_attention's check. The operands come through accessors, so that each caller
// indexes its own layout; values are doubles (bf16 operands widened exactly).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace qwen3 {

// One query q(i) (i < d) attending to positions 0 .. n - 1 of one KV head (k(p, i), v(p, i)) with
// softmax(scale * q . k_p), in double. `out[i]` is the result; `magnitude[i]` is sum_p w_p |v(p,
// i)| (w the softmax weights), which bounds the error of the weighted sum; `score_error` bounds a
// score's error from an f32 dot product of d terms (2 d u scale sum_i |q_i k_pi|, u the f32 unit
// roundoff).
struct AttentionReference {
  std::vector<double> out, magnitude;
  double score_error = 0;
};

template <class Q, class K, class V>
AttentionReference attention_reference(Q q, K k, V v, std::int64_t n, std::int64_t d, double scale) {
  constexpr double u = 0x1p-24;
  AttentionReference r;
  std::vector<double> s(static_cast<std::size_t>(n));
  for (std::int64_t p = 0; p < n; ++p) {
    double dot = 0, magnitude = 0;
    for (std::int64_t i = 0; i < d; ++i) {
      dot += q(i) * k(p, i);
      magnitude += std::abs(q(i) * k(p, i));
    }
    s[p] = dot * scale;
    r.score_error = std::max(r.score_error, 2 * d * u * scale * magnitude);
  }
  const double m = *std::max_element(s.begin(), s.end());
  double l = 0;
  for (double& x : s) l += (x = std::exp(x - m));
  for (std::int64_t i = 0; i < d; ++i) {
    double o = 0, mag = 0;
    for (std::int64_t p = 0; p < n; ++p) o += s[p] * v(p, i), mag += s[p] * std::abs(v(p, i));
    r.out.push_back(o / l);
    r.magnitude.push_back(mag / l);
  }
  return r;
}

}  // namespace qwen3
