// decode_step.h: the two kernels that carry a decode step's position, so that no other kernel of
// the step takes it as an argument.
//
// A decode step is replayed as one CUDA graph per token; every kernel argument that changes from
// one token to the next makes the graph patch that kernel's node before the replay (a driver
// call per node, on the host, while the GPU waits). The position therefore reaches the layers
// through tensors written on the GPU instead:
//
// step_rows: one program. cos_now, sin_now [1, 64] = the RoPE tables' rows at `position`, and
// seq [1, 1] (i32) = position + 1, the number of positions the step's attention covers. The
// per-head norm + RoPE reads the two rows (at row 0), the split-KV attention reads seq.
//
// kv_append: one program per (layer, KV head) row r = layer * n_kv + h, grid [L n_kv]. The
// attention kernels of a step read the new position's K and V from the step's staging rows
// k_new, v_new [L n_kv, 128] (the cache does not hold them yet); at the end of the step this
// kernel copies them into the caches: k_slot, v_slot are the views [L n_kv, 1, 128] of the
// caches [L n_kv, positions, 128] at the position (moved there per token: the one node besides
// step_rows and the embedding that a token's replay patches).
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {

inline auto step_rows() {
  return tessera::kernel("qwen3_step_rows",
                         [](auto cos_now, auto sin_now, auto seq, auto cos_table, auto sin_table, auto position) {
                           using namespace tessera;
                           return tessera::seq(cos_now.store(load<1, 64>(cos_table, position, c<0>)),
                                               sin_now.store(load<1, 64>(sin_table, position, c<0>)),
                                               seq.store(reshape<1, 1>(iota<1>() + position + c<1>)));
                         });
}

inline auto kv_append() {
  return tessera::kernel("qwen3_kv_append", [](auto k_slot, auto v_slot, auto k_new, auto v_new) {
    using namespace tessera;
    auto r = program_id<0>();
    return seq(k_slot.store(reshape<1, 1, 128>(load<1, 128>(k_new, r, c<0>))),
               v_slot.store(reshape<1, 1, 128>(load<1, 128>(v_new, r, c<0>))));
  });
}

}  // namespace qwen3::kernels
