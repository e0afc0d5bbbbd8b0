//===- KernelLowering.h - per-kernel state of tile-lower-to-loops ---------===//
//
// `KernelLowering` rewrites one verified `tile.kernel` function in place: each
// tile SSA value gets a per-thread private buffer (see ThreadMapping.h) and
// each op is replaced by per-thread code on those buffers. Its members are
// implemented by concern: ThreadMapping.cpp (ids, buffers, element loops,
// scratch), LowerLoadStore.cpp, LowerReduce.cpp, LowerLayoutOps.cpp,
// LowerElementwise.cpp, LowerControlFlow.cpp; TileLowerToLoops.cpp holds the
// pass, the kernel verifier and the op dispatch.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_DIALECT_TILE_TRANSFORMS_KERNELLOWERING_H
#define TESSERA_LIB_DIALECT_TILE_TRANSFORMS_KERNELLOWERING_H

#include "ThreadMapping.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tessera::tile {

//===----------------------------------------------------------------------===//
// Type helpers shared by the lowering files
//===----------------------------------------------------------------------===//

inline bool isFloat16Or(Type t) { return isa<Float16Type, BFloat16Type>(t); }

/// i1, i8, i16, i32, i64, f16, bf16, f32 and f64.
bool isSupportedElementType(Type t);

/// Scratch storage type of an element (i1 is kept as a byte).
Type scratchElementType(Type t);
int64_t scratchElementBytes(Type t);

bool hasTensorType(TypeRange types);
/// True if `op` has tile operands, results or block arguments.
bool touchesTensors(Operation *op);

/// Type reductions and products accumulate in: f32 for 16-bit floats.
Type accumulatorType(Type elt);
/// Extends a float `v` to `type` (no-op when equal).
Value extendTo(OpBuilder &b, Location loc, Value v, Type type);
/// `acc <kind> x` (i1 as unsigned: max = or, min = and, sum = xor).
Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value x);

//===----------------------------------------------------------------------===//
// KernelLowering
//===----------------------------------------------------------------------===//

class KernelLowering {
public:
  KernelLowering(func::FuncOp func, const LoweringOptions &opts,
                 int64_t scratchBytes)
      : func(func), opts(opts), scratchBytes(scratchBytes),
        entry(func.getContext()) {}

  LogicalResult run();

private:
  // Setup (ThreadMapping.cpp).
  void setUpProgramIds();
  Value getProgramId(bool count, unsigned dim);
  Value getThreadId();
  Value getScratchView(OpBuilder &b, Location loc, Type elt, int64_t count,
                       int64_t byteOffset);

  // Helpers (ThreadMapping.cpp).
  Layout getLayout(RankedTensorType type) const {
    return tile::getLayout(opts, type);
  }
  Value newBuffer(RankedTensorType type);
  Value bufferOf(Value tile) const;
  Value cidx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  void forEachOwned(OpBuilder &b, Location loc, const Layout &layout,
                    bool needLinear,
                    function_ref<void(OpBuilder &, Value k, Value l)> body);
  SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                 ArrayRef<int64_t> shape) const;
  Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                  ArrayRef<int64_t> shape) const;
  void copyBuffer(OpBuilder &b, Location loc, RankedTensorType type, Value src,
                  Value dst);
  void barrier(OpBuilder &b, Location loc);
  Value writeToScratch(OpBuilder &b, Location loc, Value tile,
                       int64_t byteOffset);
  Value readScratch(OpBuilder &b, Location loc, Value view, Value index,
                    Type elt);

  // Op lowering (dispatch in TileLowerToLoops.cpp).
  void lowerBlock(Block &block);
  void lowerOp(Operation *op);
  // LowerLoadStore.cpp.
  void lowerLoad(LoadOp op);
  void lowerStore(StoreOp op);
  // LowerLayoutOps.cpp.
  void lowerFill(Operation *op, Value scalar);
  void lowerIota(IotaOp op);
  void lowerBroadcast(BroadcastOp op);
  void lowerTranspose(TransposeOp op);
  void lowerMma(MmaOp op);
  // LowerReduce.cpp.
  void lowerReduce(ReduceOp op);
  // LowerElementwise.cpp.
  void lowerElementwise(Operation *op);
  // LowerControlFlow.cpp.
  void lowerFor(scf::ForOp op);
  void lowerIf(scf::IfOp op);
  void lowerYield(scf::YieldOp op);
  scf::YieldOp rebuildYield(scf::YieldOp yield);

  func::FuncOp func;
  LoweringOptions opts;
  int64_t scratchBytes;
  /// Inserts at the start of the entry block (allocas, thread/program ids).
  OpBuilder entry;
  Value threadId;
  Value scratchBase;
  Value programIds[3];
  Value numPrograms[3];
  DenseMap<Value, Value> buffers;
  /// Per scf.yield with tiles: the buffers its tile operands are copied to.
  DenseMap<Operation *, SmallVector<Value>> yieldTargets;
  /// Replaced ops, erased once the whole kernel is rewritten.
  SmallVector<Operation *> toErase;
};

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_DIALECT_TILE_TRANSFORMS_KERNELLOWERING_H
