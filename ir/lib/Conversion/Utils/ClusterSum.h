//===- ClusterSum.h - split-K partial sums meet in rank 0 -------*- C++ -*-===//
//
// The one protocol by which the CTAs of a cluster that shared a program's K
// loop (split-K: convert-tile-to-loops' tile.split_sum and
// convert-tile-matmul-to-mma-sync's split-k) add their partial sums: ranks 1
// and up store theirs in their own shared memory, a cluster barrier makes
// those stores visible, rank 0 reads each peer's in rank order (distributed
// shared memory) and adds them to its own, and a second cluster barrier keeps
// the peers, and their shared memory, until rank 0 has read it. The callers
// say where partials live and how one peer's are read and added; this file
// orders the steps. Assumes sm_90 clusters (HopperPtx's cluster barrier).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_UTILS_CLUSTERSUM_H
#define TESSERA_LIB_CONVERSION_UTILS_CLUSTERSUM_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <utility>

namespace mlir::tessera::tile {

/// At `b`'s insertion point, for `ctas` CTAs of rank `rank` (i32): ranks 1
/// and up run `publish()`; a cluster barrier; rank 0 starts from `own` and
/// runs `gather(peer, sum)` for each peer 1 .. ctas - 1 (peer: an i32
/// constant), which reads that peer's partials and adds them into `sum` (or
/// into memory, with `own` empty); a cluster barrier. The callbacks build
/// with `b`, set inside the rank's branch; afterwards `b` is after the
/// second barrier. Returns the sums in rank 0 and `own` in the other ranks.
SmallVector<Value> sumOverCluster(
    OpBuilder &b, Location loc, Value rank, int64_t ctas, ValueRange own,
    llvm::function_ref<void()> publish,
    llvm::function_ref<void(Value, SmallVectorImpl<Value> &)> gather);

/// Rank `rank`'s share (i32) of a program's `n` k-tiles (i32) split among
/// `ctas` CTAs (a power of two): [n r / S, n (r + 1) / S), as (first,
/// count); ranks past the last k-tile get none.
std::pair<Value, Value> splitShare(OpBuilder &b, Location loc, Value n,
                                   Value rank, int64_t ctas);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_UTILS_CLUSTERSUM_H
