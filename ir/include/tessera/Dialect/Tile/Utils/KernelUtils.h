//===- KernelUtils.h - helpers shared by tile passes ------------*- C++ -*-===//
//
// Small helpers that the tile dialect's transforms and the conversion to loops
// share: what a kernel argument is, which ops carry `afn` or may be rewidened,
// what a loop body computes a value from,
// an elementwise op or a device call on scalars (convert-tile-to-loops and
// the matmul lowerings), and the bounds test of a whole tile (built by
// `tile-version-interior` once per program and by `convert-tile-to-loops` per
// access). They depend on the
// tile dialect only, so that transforms need not include the conversion's
// private headers.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_UTILS_KERNELUTILS_H
#define TESSERA_DIALECT_TILE_UTILS_KERNELUTILS_H

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::tessera::tile {

/// True when `v` is an argument of `fn`'s entry block (a kernel parameter).
inline bool isKernelArgument(func::FuncOp fn, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && !fn.getBody().empty() &&
         arg.getOwner() == &fn.getBody().front();
}

/// The kernel argument a load or copy from `source` reads: `source` itself,
/// or the input of a memref.transpose of it (tile-vector-mma's view of a
/// K-major weight); else null.
BlockArgument kernelArgumentOf(func::FuncOp fn, Value source);

/// True when `source` reads (as kernelArgumentOf) an argument marked
/// `tile.settled`: a frozen tensor, which no kernel still running writes.
bool readsSettledArgument(func::FuncOp fn, Value source);

/// Moves `ops`, all of `block`, to its front, keeping their order; returns
/// the first op after them. What passes hoist to the top of a kernel (index
/// computations, copies before the grid dependency wait) goes there this way.
Operation *moveToFront(Block &block, ArrayRef<Operation *> ops);

/// What values of a loop body are computed from: the body's ops among them,
/// in block order, the values from outside the body that those ops (or the
/// values themselves) read, and whether they read the induction variable.
struct BodySlice {
  SmallVector<Operation *> ops;
  SmallVector<Value> outside;
  bool readsInductionVar = false;
};

/// The slice of `body` (a loop body whose induction variable is `iv`) that
/// `values` are computed from, through ops without regions or memory effects
/// (which may be cloned or moved anywhere they dominate their uses); nullopt
/// if it reaches another op of the body or a value the loop carries (the
/// body's other arguments). What tile-stream-loads clones for an iteration
/// ahead and tile-load-settled-before-wait peels before the loop.
std::optional<BodySlice> pureSliceInBody(Block *body, Value iv,
                                         ValueRange values);

/// For a pass that runs on tile IR: false, with an error naming `pass` and
/// the kernel, if `convert-tile-to-loops` already lowered `fn` (it carries
/// `tile.block_size`), which is a pipeline error rather than an input.
bool checkNotLowered(func::FuncOp fn, StringRef pass);

/// An arith.extf from a bf16 tile to an f32 tile: what `tile.rewiden` may
/// mark.
bool isRewidenable(Operation *op);

/// True for an op marked `afn` (approximate functions allowed).
bool isApproximate(Operation *op);

/// The global index of a tile's first element, per dimension (index
/// `indices[d]` times the tile's extent `shape[d]`); appends the memref's sizes
/// to `dims`.
SmallVector<Value> tileOrigin(OpBuilder &b, Location loc, Value memref,
                              ValueRange indices, ArrayRef<int64_t> shape,
                              SmallVectorImpl<Value> &dims);

/// True if the whole tile of `shape` at `base` is within `dims` (compared
/// unsigned: a negative origin fails too).
Value tileInBounds(OpBuilder &b, Location loc, ArrayRef<Value> base,
                   ArrayRef<Value> dims, ArrayRef<int64_t> shape);

/// `acc <kind> x`, a tile.reduce's combiner on scalars (i1 as unsigned: max =
/// or, min = and, sum = xor); on vectors lane by lane.
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value x);

/// The value a tile.load with `padding` (see getPaddingValue) puts at elements
/// outside the memref.
Value paddingValue(OpBuilder &b, Location loc, Type elt, FloatAttr padding);

/// `op` (an elementwise arith or math op on tiles) cloned on scalars at the
/// insertion point of `b`, each tile operand replaced by `elementOf(tile)`;
/// returns its results. 16-bit float arithmetic, compares and math run in f32
/// (the result rounded back), as on every target; casts and selects move
/// values unchanged.
SmallVector<Value>
scalarElementwise(OpBuilder &b, Operation *op,
                  function_ref<Value(OpBuilder &, Value)> elementOf);

/// The scalar function type a tile.device_call calls: its arguments' element
/// types to its result's.
FunctionType deviceCalleeType(DeviceCallOp call);

/// `call` on scalars at the insertion point of `b`: a func.call of its callee,
/// which is declared private before `fn` (of `call`'s kernel) if its module has
/// no symbol of that name (convert-tile-to-loops' verifier checks an existing
/// one). Shared by convert-tile-to-loops and the matmul lowerings' epilogues.
Value scalarDeviceCall(OpBuilder &b, Location loc, DeviceCallOp call,
                       func::FuncOp fn, ValueRange args);

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_UTILS_KERNELUTILS_H
