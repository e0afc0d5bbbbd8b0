//===- ThreadMapping.h - element <-> thread map of tile-lower-to-loops ----===//
//
// The lowering parameters of `tile-lower-to-loops` and the map from the
// elements of a tile to the threads of a program. A tile of P elements
// (row-major) is spread over T threads: thread t owns n = P/T elements in C
// chunks of v contiguous elements, element (c, j) being linear index
// (c*T + t)*v + j, kept at private index c*v + j. When P < T, thread t owns
// element t mod P (replicated) at private index 0. The map depends only on P
// (and the kernel-wide T and V), so values of one element count share it.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_DIALECT_TILE_TRANSFORMS_THREADMAPPING_H
#define TESSERA_LIB_DIALECT_TILE_TRANSFORMS_THREADMAPPING_H

#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <optional>

namespace mlir::tessera::tile {

/// Static shared memory available to a CTA without opt-in.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Lowering parameters derived from the pass options.
struct LoweringOptions {
  bool gpu = false;
  int64_t threads = 1;     // T
  int64_t vectorWidth = 4; // V
  int64_t unrollLimit = 64;
};

/// How the P elements of a tile are spread over the T threads of a program.
/// Thread t owns elements (c, j), c < chunks, j < vec, at linear index
/// (c*T + t)*vec + j and keeps element (c, j) at private index c*vec + j.
/// When P < T, thread t owns element t mod P (replicated).
struct Layout {
  int64_t numElements; // P
  int64_t perThread;   // n
  int64_t vec;         // v
  int64_t chunks;      // C
  bool replicated;
};

/// The layout of a tile of `type` under `opts`.
Layout getLayout(const LoweringOptions &opts, RankedTensorType type);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_DIALECT_TILE_TRANSFORMS_THREADMAPPING_H
