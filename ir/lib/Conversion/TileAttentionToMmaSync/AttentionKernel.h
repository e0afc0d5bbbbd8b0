//===- AttentionKernel.h - the attention class of tile kernels --*- C++ -*-===//
//
// `matchAttentionKernel` recognizes the tile kernels that
// `convert-tile-attention-to-mma-sync` lowers with the softmax and both
// products on registers (Conversion/Passes.td states the class): one loop
// over key/value tiles whose body multiplies a loop-invariant query tile by a
// transposed key tile, computes on that [BQ, BKV] score tile element by
// element and by row reductions, multiplies the result (cast to 16 bits) by a
// value tile into a carried [BQ, D] accumulator, and carries per-row [BQ, 1]
// statistics; after the loop one store of a [BQ, D] tile (unit dimensions
// before it allowed) computed element by element from the loop's results. It reads tile IR as the front end emits it
// and changes nothing; a kernel outside the class gets a one-line reason, for
// debugging output. The tile shapes the lowering supports are checked by the
// lowering.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILEATTENTIONTOMMASYNC_ATTENTIONKERNEL_H
#define TESSERA_LIB_CONVERSION_TILEATTENTIONTOMMASYNC_ATTENTIONKERNEL_H

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::tessera::tile {

struct AttentionKernel {
  func::FuncOp func;
  /// The loop over key/value tiles: from 0, step 1.
  scf::ForOp loop;
  /// S = mma(Q, transpose(K), zeros) and O' = mma(P, V, acc) in the loop.
  MmaOp scores, values;
  /// The loads behind Q (before the loop, or in it at loop-invariant
  /// indices), K and V (in the loop), each of an argument, with unit
  /// dimensions before the tile's two.
  LoadOp loadQ, loadK, loadV;
  /// The one store, after the loop, of a [1, ..., 1, BQ, D] tile into an
  /// argument.
  StoreOp store;
  /// The loop's [BQ, D] accumulator (iter_arg number), updated by `values`.
  unsigned accumulator = 0;
  int64_t bq = 0, bkv = 0, d = 0;
  /// Q's, K's and V's element type: bf16 or f16.
  Type inputType;
};

/// The kernel's parts if `func` is a kernel of the attention class;
/// otherwise failure, with `why` set to the first requirement it misses.
FailureOr<AttentionKernel> matchAttentionKernel(func::FuncOp func,
                                                std::string &why);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILEATTENTIONTOMMASYNC_ATTENTIONKERNEL_H
