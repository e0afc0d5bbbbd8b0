// embedding.h: the embedding row gather, the first kernel of a decode step.
//
// out[j] = f32(embed[token, j]) for the f32 hidden vector out [H] in tiles of BH (one program per
// tile, so a program reads BH contiguous bf16 values of one row). `embed` is the bf16 [V, H]
// table as Hugging Face stores it; the token id is an i32 scalar argument (a tessera::Scalar in
// a captured graph). The row is addressed with a tile index of tile height 1, so the element
// offset is token * H: any token in [0, V) works; the caller checks the range, since a load past
// the table's edge would silently read zeros.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int BH>
auto embedding_gather() {
  static_assert(power_of_two(BH), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_embedding", BH), [](auto out, auto embed, auto token) {
    using namespace tessera;
    return out.store(reshape<BH>(cast<kF32>(load<1, BH>(embed, token, program_id<0>()))));
  });
}

}  // namespace qwen3::kernels
