// rope_table.h: the cos and sin tables of rotary position embeddings, computed on the host.
//
// The tile language has no sin or cos, so the engine reads them from two f32 tables
// [positions, head_dim / 2] that the RoPE kernel (kernels/qk_norm_rope.h) indexes by position.
// They are computed the way transformers' default RoPE computes them in f32, so that the angles
// carry the same rounding (at position 40000 an f32 angle is off by up to ~2e-3 rad, the same
// for both):
//   inv_freq[i] = f32(1 / f32(theta ^ (f32(2i) / head_dim)))     i < head_dim / 2
//   angle       = f32(f32(position) * inv_freq[i])
//   cos, sin    = the f32 nearest to the exact cos and sin of that f32 angle.
#pragma once

#include <cstdint>
#include <vector>

namespace qwen3 {

struct RopeTable {
  std::int64_t positions = 0, half = 0;  // rows and columns
  std::vector<float> cos, sin;           // row-major [positions, half]
};

RopeTable make_rope_table(double theta, std::int64_t head_dim, std::int64_t positions);

}  // namespace qwen3
