// prefill_embedding.h: the embedding gather of up to N prompt tokens in one launch.
//
// prefill_embedding_gather<BH, N>: out[r, j] = embed[token_r, j] for the rows out [n, H] (n <= N;
// a view of the chunk's residual stream, bf16 in the engine; any float dtype, the value cast to
// it), in tiles of [1, BH]: program (r, j)
// reads BH contiguous bf16 values of row token_r. The N token ids are i32 scalar arguments
// after `embed` (pass N of them; those past n are never read, pass 0).
//
// Why scalars and not an i32 tensor of ids: a tile index must be an i32 scalar expression, and
// the tile language has no way to turn a loaded value into one (a rank-0 reshape of a loaded
// [1] tile does not verify), so a gather cannot read its row index from memory. Program r picks
// its id from the scalar arguments by a chain of N - 1 selects on r instead (a few scalar
// instructions), and a chunk of T tokens costs ceil(T / N) launches instead of T. The caller
// checks the ids' range: a row past the table's edge would read as zeros.
#pragma once

#include "kernels/tile_common.h"

namespace qwen3::kernels {
namespace embedding_detail {

using namespace tessera;

// token_row for row = I, I + 1, ...: select(row == I, t, select(row == I + 1, ...)).
template <int I, class Row, class T, class... Rest>
constexpr auto pick(Row row, T t, Rest... rest) {
  if constexpr (sizeof...(Rest) == 0)
    return t;
  else
    return select(row == c<I>, t, pick<I + 1>(row, rest...));
}

}  // namespace embedding_detail

template <int BH, int N>
auto prefill_embedding_gather() {
  static_assert(power_of_two(BH) && N >= 1, "BH is a power of two and N >= 1");
  return tessera::kernel(tiled_name("qwen3_prefill_embedding", BH, N), [](auto out, auto embed, auto... tokens) {
    using namespace tessera;
    static_assert(sizeof...(tokens) == N, "prefill_embedding_gather<BH, N> takes N token ids");
    auto token = embedding_detail::pick<0>(program_id<0>(), tokens...);
    return out.store(cast<std::remove_cvref_t<decltype(out)>::dtype>(load<1, BH>(embed, token, program_id<1>())));
  });
}

}  // namespace qwen3::kernels
