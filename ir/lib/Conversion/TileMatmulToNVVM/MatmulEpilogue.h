//===- MatmulEpilogue.h - a matmul kernel's epilogue on registers -*- C++ -*-===//
//
// What the two tensor-core lowerings of the matmul class (MatmulKernel.h)
// share after their K loops: the old body's scalars recomputed in the new one
// (`materializeScalar`), the epilogue's tensors evaluated element by element at
// the coordinates of a thread's accumulator registers, the loads of a batch of
// elements issued before their arithmetic (`EpilogueValues`), and
// the masked stores of two adjacent output columns (`storeColumnPair`) and of
// one element (`storeElement`). They
// assume the kernel matched matchMatmulKernel: the epilogue holds only the ops
// that the matcher lets through (splat constants, splats, broadcasts, unit
// reshapes, loads of other arguments, elementwise arith and math ops and
// device calls).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULEPILOGUE_H
#define TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULEPILOGUE_H

#include "MatmulKernel.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace mlir::tessera::tile {

/// `v` of `func`'s old body, recomputed at the insertion point of `b`: kernel
/// arguments as they are, values in `mapping` (the program ids, ops cloned
/// before) as mapped, pure scalar ops cloned (and added to `mapping`).
Value materializeScalar(OpBuilder &b, func::FuncOp func, Value v,
                        IRMapping &mapping);

/// The key under which an evaluator memoizes `tensor`'s element at `coords`.
std::vector<void *> elementKey(Value tensor, ArrayRef<Value> coords);

/// For a broadcast or a unit reshape `op`: its input and the coordinates at
/// which that holds the element at `coords` of `op`'s result (a broadcast
/// dimension, or a unit dimension of the input, at `zero`, an i32 0).
/// Nothing for other ops.
std::optional<std::pair<Value, SmallVector<Value>>>
forwardedElement(Operation *op, ArrayRef<Value> coords, Value zero);

/// The element of `load`'s tile at coordinates `coords` (i32): the memref's
/// element, or the load's padding outside its bounds (an in-bounds index is
/// read either way). `indices` are the load's tile indices, materialized at
/// the insertion point of `b`.
Value loadElement(OpBuilder &b, Location loc, LoadOp load,
                  ArrayRef<Value> indices, ArrayRef<Value> coords);

/// Evaluates the epilogue's tensors element by element, at tile coordinates
/// given as i32 values; one scalar per (tensor, coordinates), reused.
/// `accumulatorAt(row, col)` gives the accumulator's element (the K loop's
/// result) at coordinates the caller handed in; `materialize` recomputes the
/// old body's scalars (splat values, load indices).
class EpilogueValues {
public:
  EpilogueValues(OpBuilder &b, Location loc, MatmulKernel k,
                 std::function<Value(Value)> materialize,
                 std::function<Value(Value, Value)> accumulatorAt)
      : b(b), loc(loc), k(k), materialize(std::move(materialize)),
        accumulatorAt(std::move(accumulatorAt)) {}

  Value at(Value tensor, ArrayRef<Value> coords);

  /// Where set, the element of a load's tile at `coords` read from shared
  /// memory (a tile the producer loaded there), or null for the load's own
  /// global load.
  std::function<Value(LoadOp, ArrayRef<Value>)> sharedTile;

  /// Issues every load that `tensor` reads at the coordinates (row, col) for
  /// each row in `rows` and col in `cols`, and nothing else (the values are
  /// memoized, so `at` finds them). Callers preload a batch of elements
  /// before computing them: a thread's loads are then in flight together.
  /// Interleaved with the arithmetic, ptxas keeps each load behind the
  /// branches of the element before it (an accurate division's slow path, a
  /// bounds test before a store), and the loads wait on memory one at a time.
  void preload(Value tensor, ArrayRef<Value> rows, ArrayRef<Value> cols);

  /// The columns of one preload batch over a thread's `rows` rows: 16, or
  /// `perRow` where a thread has fewer (32 elements over a wgmma consumer
  /// thread's two rows, 64 over an mma.sync thread's four at 128 x 128), and
  /// with `maxElements` at most that many elements (at least 2 columns). 32
  /// columns beside a wgmma thread's 64 accumulators made ptxas spill, as did
  /// 64 loaded f32 beside an mma.sync thread's 128 accumulators.
  static int64_t preloadColumns(int64_t perRow, int64_t rows = 1,
                                int64_t maxElements = 0) {
    int64_t columns = std::min<int64_t>(perRow, 16);
    if (maxElements > 0)
      columns = std::min(columns, std::max<int64_t>(2, maxElements / rows));
    return columns;
  }

private:
  void preloadAt(Value tensor, ArrayRef<Value> coords);

  Value zero();
  Value compute(Value tensor, ArrayRef<Value> coords);
  /// loadElement with the load's indices materialized.
  Value loadAt(LoadOp load, ArrayRef<Value> coords);
  /// The device function's scalar result at `coords`: a call with its
  /// arguments' elements there.
  Value callAt(DeviceCallOp call, ArrayRef<Value> coords);

  OpBuilder &b;
  Location loc;
  MatmulKernel k;
  std::function<Value(Value)> materialize;
  std::function<Value(Value, Value)> accumulatorAt;
  Value zeroIndex;
  std::map<std::vector<void *>, Value> memo;
  std::set<std::vector<void *>> preloaded;
};

/// Stores `v0` and `v1` at (`rowIndex`, `col`) and (`rowIndex`, `col` + 1) of
/// the 2-d memref `out` (i32 `col`, index `rowIndex`), or of a memref of more
/// dimensions at (`outer`..., `rowIndex`, `col`): nothing unless `rowIn`;
/// both, as one 2-element vector store when `pairs` (rows contiguous and
/// aligned to two elements), when `col` + 1 < `width`; else `v0` alone when
/// `col` < `width`.
void storeColumnPair(OpBuilder &b, Location loc, Value out, Value rowIn,
                     Value rowIndex, Value col, Value width, Value v0, Value v1,
                     bool pairs, ValueRange outer = {});

/// The epilogue's value `store` at a thread's accumulator coordinates (i32
/// tile coordinates `rows` x `cols`, the columns in adjacent pairs), stored
/// from registers into `out` at the tile origin (`row0`, `col0`), masked by
/// the output's i32 `height` and `width`: per batch of
/// EpilogueValues::preloadColumns columns (at most `maxPreload` elements
/// where given), their loads first, then each row's column pairs computed
/// and stored (storeColumnPair), so that few results are live at a time.
void storeFromRegisters(OpBuilder &b, Location loc, EpilogueValues &values,
                        Value store, Value out, ArrayRef<Value> rows,
                        ArrayRef<Value> cols, Value row0, Value col0,
                        Value height, Value width, bool pairs,
                        int64_t maxPreload = 0);

/// Stores `v` at (`rowIndex`, `col`) of the 2-d memref `out` when `rowIn`
/// and `col` < `width` (i32 `col` and `width`, index `rowIndex`).
void storeElement(OpBuilder &b, Location loc, Value out, Value rowIn,
                  Value rowIndex, Value col, Value width, Value v);

/// Whether the output argument's rows are contiguous and its tile.align
/// allows 2-element vector stores (storeColumnPair's `pairs`).
bool storesColumnPairs(MatmulKernel k);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILEMATMULTONVVM_MATMULEPILOGUE_H
