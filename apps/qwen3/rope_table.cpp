// rope_table.cpp: make_rope_table, following rope_table.h.
#include "rope_table.h"

#include <cmath>

namespace qwen3 {

RopeTable make_rope_table(double theta, std::int64_t head_dim, std::int64_t positions) {
  RopeTable t;
  t.positions = positions;
  t.half = head_dim / 2;
  std::vector<float> inv_freq(t.half);
  for (std::int64_t i = 0; i < t.half; ++i) {
    const float exponent = static_cast<float>(2 * i) / static_cast<float>(head_dim);
    const float power = static_cast<float>(std::pow(theta, static_cast<double>(exponent)));
    inv_freq[i] = 1.0f / power;
  }
  t.cos.resize(positions * t.half);
  t.sin.resize(positions * t.half);
  for (std::int64_t p = 0; p < positions; ++p)
    for (std::int64_t i = 0; i < t.half; ++i) {
      const float angle = static_cast<float>(p) * inv_freq[i];
      t.cos[p * t.half + i] = static_cast<float>(std::cos(static_cast<double>(angle)));
      t.sin[p * t.half + i] = static_cast<float>(std::sin(static_cast<double>(angle)));
    }
  return t;
}

}  // namespace qwen3
