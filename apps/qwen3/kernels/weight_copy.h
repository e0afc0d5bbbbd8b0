// weight_copy.h: the copy that moves weights from a host staging tensor into device-resident ones.
//
// out = in, elementwise, for bf16 [rows, cols] tensors of one shape (in tiles of [BR, BC]). The
// model (model_weights_device.h) fills a host staging tensor a piece at a time and copies it into
// a row range (a view) of the weight tensor, so the weight tensor is only ever written by kernels:
// on a GPU it then never takes host memory, and a 32B model needs no 64 GB host copy.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {

template <int BR, int BC>
auto weight_copy() {
  static_assert(power_of_two(BR) && power_of_two(BC), "tile sizes are powers of two");
  return tessera::kernel(tiled_name("qwen3_weight_copy", BR, BC),
                         [](auto out, auto in) { return out.store(in.load_like(out)); });
}

}  // namespace qwen3::kernels
