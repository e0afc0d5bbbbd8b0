//===- KernelLowering.h - per-kernel state of convert-tile-to-loops -------===//
//
// `KernelLowering` rewrites one verified `tile.kernel` function in place: each
// tile SSA value gets a per-thread private buffer (see ThreadMapping.h) and
// each op is replaced by per-thread code on those buffers. Its members are
// implemented by concern: LoweringSupport.cpp (ids, buffers, element loops,
// shuffles, scratch), LowerLoadStore.cpp, LowerReduce.cpp, LowerLayoutOps.cpp,
// LowerElementwise.cpp, LowerFusedElementwise.cpp, LowerControlFlow.cpp;
// TileToLoops.cpp holds the pass, the kernel verifier and the op dispatch.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILETOLOOPS_KERNELLOWERING_H
#define TESSERA_LIB_CONVERSION_TILETOLOOPS_KERNELLOWERING_H

#include "ThreadMapping.h"

#include "tessera/Conversion/TileToLoops/TileToLoops.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tessera::tile {

/// The dialect's attributes of kernel arguments, accesses, versions and
/// rewidenings (declared and documented in TileDialect.td). On gpu a
/// `tile.rewiden` element is widened from the bf16 value passed through
/// `llvm.arithmetic.fence`, so that CSE cannot merge it with the first
/// widening.
constexpr StringLiteral kAlignAttrName = TileDialect::getAlignAttrName();
constexpr StringLiteral kInteriorAttrName = TileDialect::getInteriorAttrName();
constexpr StringLiteral kVersionsAttrName = TileDialect::getVersionsAttrName();
constexpr StringLiteral kRewidenAttrName = TileDialect::getRewidenAttrName();

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
/// Combines `values` as a balanced tree (short dependency chains).
Value combineTree(OpBuilder &b, Location loc, ReduceKind kind,
                  SmallVector<Value> values);
/// The max or min of an even number of 16-bit float `values`, two per op (as
/// 2-vectors: max.NaN.bf16x2 on gpu), then of the two lanes in `accType`.
/// Exact: the same as combining them widened. Each pair should be one
/// 32-bit register (consecutive elements of a vector chunk).
Value combineInPairs(OpBuilder &b, Location loc, ReduceKind kind,
                     ArrayRef<Value> values, Type accType);

/// On gpu, rewrites each broadcast that would exchange its input through the
/// scratch buffer, and whose input is a small element-wise computation on
/// loads and single elements, into that computation in the broadcast's shape
/// (BroadcastInputs.cpp).
void broadcastElementwiseInputs(func::FuncOp func, const LoweringOptions &opts);

//===----------------------------------------------------------------------===//
// KernelLowering
//===----------------------------------------------------------------------===//

class KernelLowering {
public:
  /// `opts` has the kernel's vector width; `scratch` is planScratch's.
  KernelLowering(func::FuncOp func, const LoweringOptions &opts,
                 ScratchPlan scratch)
      : func(func), opts(opts), scratch(std::move(scratch)),
        entry(func.getContext()) {}

  LogicalResult run();

private:
  // Setup (LoweringSupport.cpp).
  void setUpProgramIds();
  Value getProgramId(bool count, unsigned dim);
  Value getThreadId();
  Value getScratchView(OpBuilder &b, Location loc, Type elt, int64_t count,
                       int64_t byteOffset);

  // Helpers (LoweringSupport.cpp).
  Layout getLayout(RankedTensorType type) const {
    return tile::getLayout(opts, type);
  }
  Value newBuffer(RankedTensorType type);
  Value bufferOf(Value tile) const;
  static Value cidx(OpBuilder &b, Location loc, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  /// Calls `body` for each element this thread owns in `layout` with its
  /// private index k and (if `needLinear`) its linear index l; constants when
  /// the layout is unrolled (and not `rolled`), else inside a loop over
  /// chunks.
  void forEachOwned(OpBuilder &b, Location loc, const Layout &layout,
                    bool needLinear,
                    function_ref<void(OpBuilder &, Value k, Value l)> body,
                    bool rolled = false);
  /// Calls `body` for each chunk this thread owns in a non-replicated
  /// `layout`, with the private index k0 and linear index l0 of its first
  /// element.
  void forEachChunk(OpBuilder &b, Location loc, const Layout &layout,
                    bool needLinear,
                    function_ref<void(OpBuilder &, Value k0, Value l0)> body,
                    bool rolled = false);
  /// `a + c` folded when possible.
  static Value addConst(OpBuilder &b, Location loc, Value a, int64_t c);
  SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                 ArrayRef<int64_t> shape) const;
  Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                  ArrayRef<int64_t> shape) const;
  void copyBuffer(OpBuilder &b, Location loc, RankedTensorType type, Value src,
                  Value dst);
  void barrier(OpBuilder &b, Location loc);
  /// The value of `v` in the thread whose id is this thread's xor `offset`
  /// (gpu; all threads of the warp must execute it).
  Value shuffleXor(OpBuilder &b, Location loc, Value v, int64_t offset);
  Value writeToScratch(OpBuilder &b, Location loc, Value tile,
                       int64_t byteOffset);
  Value readScratch(OpBuilder &b, Location loc, Value view, Value index,
                    Type elt);

  // Op lowering (dispatch in TileToLoops.cpp).
  void lowerBlock(Block &block);
  void lowerOp(Operation *op);
  // LowerLoadStore.cpp.
  void lowerLoad(LoadOp op);
  void lowerStore(StoreOp op);
  /// A broadcast with a BroadcastLoadPlan: `load`'s elements read in the
  /// broadcast's layout.
  void lowerBroadcastLoad(BroadcastOp op, LoadOp load);
  /// Loads `width` contiguous elements of `src` from `index` (the last
  /// coordinate advancing) into private elements k, k + 1, ... of `dst`, `vw`
  /// per access.
  void loadRun(OpBuilder &b, Location loc, Value src, SmallVector<Value> index,
               int64_t width, int64_t vw, Value dst, Value k);
  /// The load of a tile that may be ragged (or of a layout without vector
  /// chunks), element by element without a branch per element: each of this
  /// thread's elements of `type` is read from `coords(l)` when in bounds,
  /// else from index 0 (valid when no dimension is empty) and replaced by
  /// `pad`; all of them are `pad` when a dimension is empty.
  void raggedLoad(OpBuilder &b, Location loc, RankedTensorType type, Value src,
                  ArrayRef<Value> dims, Value pad, Value dst,
                  function_ref<SmallVector<Value>(OpBuilder &, Value)> coords);
  /// Elements per vector access of runs of `segment` contiguous elements of
  /// `memref` (1: scalar accesses).
  int64_t vectorAccessWidth(Value memref, int64_t segment);
  SmallVector<Value> globalCoords(OpBuilder &b, Location loc,
                                  ArrayRef<Value> base, Value linear,
                                  ArrayRef<int64_t> shape);
  /// True if the element at `global` is within `dims`.
  Value inBounds(OpBuilder &b, Location loc, ArrayRef<Value> global,
                 ArrayRef<Value> dims);
  /// The element of `memref` at `global` if it is within `dims`, else `pad`
  /// (read from index 0 instead: valid when no dimension is empty).
  Value clampedLoad(OpBuilder &b, Location loc, Value memref,
                    ArrayRef<Value> global, ArrayRef<Value> dims, Value pad);
  /// True if no dimension of `dims` is empty.
  Value noneEmpty(OpBuilder &b, Location loc, ArrayRef<Value> dims);
  /// Whether the element-by-element path of a load or store of `layout` runs
  /// as a loop on a staged copy of the private buffer (see LowerLoadStore).
  bool isStaged(const Layout &layout) const;
  /// If the whole tile is in bounds: `segment(k, global, width)` for each run
  /// of each chunk of a non-replicated layout within a row; else `ragged`.
  /// With `interior` (the access carries `tile.interior`, see
  /// tile-version-interior) the tile is known to be in bounds: only the
  /// segments are emitted.
  void accessTile(
      OpBuilder &b, Location loc, const Layout &layout, ArrayRef<int64_t> shape,
      ArrayRef<Value> base, ArrayRef<Value> dims, bool interior,
      function_ref<void(OpBuilder &, Value k, ArrayRef<Value> global,
                        int64_t width)>
          segment,
      function_ref<void(OpBuilder &)> ragged);
  // LowerStreams.cpp.
  /// The scratch view of `ring`'s region (all its slots).
  Value ringView(OpBuilder &b, Location loc, Value ring);
  /// The index in ringView of this thread's element k0 + j in slot `slot`,
  /// k0 the private index of a chunk's first element.
  Value ringIndex(OpBuilder &b, Location loc, Value ring, Value slot, Value k0,
                  int64_t j);
  /// Bytes per cp.async copying a tile of `type` and `layout` from `source`
  /// (4, 8 or 16), or 0 if its chunks are copied element by element.
  int64_t asyncCopyBytes(Value source, const Layout &layout,
                         RankedTensorType type);
  /// A bulk ring's barriers initialized (one thread, then a barrier); a
  /// ring of per-thread slots emits nothing (its region is planScratch's).
  void lowerStreamBuffer(StreamBufferOp op);
  void lowerStreamCopy(StreamCopyOp op);
  /// A copy into a bulk ring: cp.async.bulk per row by thread 0 when the
  /// tile is in bounds and its rows 16-byte aligned, else every thread's
  /// elements stored between two barriers.
  /// A copy into a bulk ring, at `b`: its tile's origin `base` in a tensor
  /// of sizes `dims`, the ring's scratch `view` (lowerStreamCopy's).
  void lowerBulkCopy(OpBuilder &b, StreamCopyOp op, ArrayRef<Value> base,
                     ArrayRef<Value> dims, Value view);
  /// The bulk copies of `op`'s tile (origin `base`) into its slot
  /// (`slotStart` elements into the ring's `view`) by warp 0: the wait for
  /// the slot's release, the arrival expecting the bytes, one cp.async.bulk
  /// per row.
  void emitBulkRows(OpBuilder &b, Location loc, StreamCopyOp op,
                    ArrayRef<Value> base, Value view, Value slotStart);
  void lowerStreamTake(StreamTakeOp op);
  void lowerStreamReady(StreamReadyOp op);
  /// On gpu `griddepcontrol.wait` as inline asm that clobbers memory (the
  /// LLVM pass tessera-grid-dependency-wait then puts no wait at the entry,
  /// and ends the asm's block there); nothing on the cpu target.
  void lowerGridDependencyWait(GridDependencyWaitOp op);
  void lowerStreamRelease(StreamReleaseOp op);
  /// A broadcast of a take of a bulk ring: the slot's elements read in the
  /// broadcast's layout.
  void lowerBroadcastTake(BroadcastOp op, StreamTakeOp take);
  /// Whether bulk rings use cp.async.bulk and mbarriers here (gpu, one
  /// program per CTA, one CTA per program, whole warps: a warp releases a
  /// slot after bar.warp.sync of all its lanes); else their copies are
  /// element stores between barriers and ready and release emit nothing.
  bool asyncBulk() const {
    return opts.gpu && opts.ctasPerProgram == 1 && opts.programsPerCta == 1 &&
           opts.ctaThreads() % kWarpSize == 0;
  }
  /// The shared-memory address (i32, as index) of barrier `which` (0 full,
  /// 1 empty) of slot `slot` of bulk ring `ring`.
  Value ringBarrier(OpBuilder &b, Location loc, Value ring, Value slot,
                    int64_t which);
  /// tile.stream_commit and tile.stream_wait.
  void lowerStreamSync(Operation *op);
  // LowerSplitK.cpp.
  /// This CTA's rank among the K of its program, ctaid.x mod K (i32, at the
  /// kernel's entry).
  Value getSplitRank();
  /// tile.split_rank: getSplitRank().
  void lowerSplitRank(SplitRankOp op);
  /// tile.split_sum: the other CTAs' partials, written to this CTA's
  /// scratch, added in rank 0 from theirs, between cluster barriers.
  void lowerSplitSum(SplitSumOp op);
  // LowerLayoutOps.cpp.
  void lowerFill(Operation *op, Value scalar);
  void lowerIota(IotaOp op);
  void lowerBroadcast(BroadcastOp op);
  void lowerTranspose(TransposeOp op);
  void lowerMma(MmaOp op);
  /// A mma with a WarpMmaPlan, in three steps: the operands written to
  /// shared rows (writeMmaRows), the warps' products (warpMmaProducts), the
  /// accumulator plus the product; a barrier after each.
  void lowerWarpMma(MmaOp op, const WarpMmaPlan &plan);
  /// Writes the elements of `tile` ([R, C], C a multiple of 16) to `view` as
  /// rows of `stride` elements (8-bit floats widened to the view's f16).
  void writeMmaRows(OpBuilder &b, Location loc, Value tile, Value view,
                    int64_t stride);
  /// Each warp's 16 x 16 blocks of op's product on mma.sync m16n8k16, from
  /// the operands' shared rows (B's at `bView`), stored as f32 rows of N + 8
  /// after them; returns that product view.
  Value warpMmaProducts(OpBuilder &b, Location loc, MmaOp op,
                        const WarpMmaPlan &plan, Value bView);
  // LowerReduce.cpp.
  void lowerReduce(ReduceOp op);
  void lowerRowReduce(ReduceOp op, const RowReducePlan &plan);
  Value combineOwned(OpBuilder &b, Location loc, ReduceKind kind, Value buffer,
                     Value start, int64_t count, Type accType);
  // LowerElementwise.cpp.
  void lowerElementwise(Operation *op);
  /// A `tile.rewiden` extf on gpu: per element an extf of the bf16 value
  /// passed through `llvm.arithmetic.fence`, which CSE cannot merge with the
  /// first widening and which emits no instruction.
  void lowerRewiden(arith::ExtFOp op);
  /// On gpu, an accurate f32 (or 16-bit) math.exp over >= 4 unrolled
  /// elements per thread: one test that all lie within +-69, then the exps
  /// marked `tile.exp_in_range` (see convert-math-to-nvvm) or, if not, the plain
  /// ones. False (nothing emitted) for other cases.
  bool lowerExpWithRangeTest(math::ExpOp op);
  /// On gpu, an IEEE f32 division of a tile of range-tested exps
  /// (lowerExpWithRangeTest) by a tile broadcast from one element: per group
  /// of exps that passed their test, and a divisor within [2^-24, 2^24], the
  /// correctly rounded quotients from one reciprocal and two fma each, with no
  /// test of the numerators; the plain divisions otherwise. False (nothing
  /// emitted) for other cases.
  bool lowerDivisionOfTestedExps(arith::DivFOp op);
  // LowerFusedElementwise.cpp.
  /// Lowers `block` (the edge copy of a versioned kernel, or any block of
  /// more than `fuse-above` tile ops) as one loop over the thread's elements
  /// if it is purely elementwise; false (nothing changed) otherwise.
  bool lowerFusedElementwise(Block &block);
  void lowerDeviceCall(DeviceCallOp op);
  // LowerControlFlow.cpp.
  void lowerFor(scf::ForOp op);
  /// Finds the carried row sums of `op` (see LowerControlFlow.cpp) and
  /// records their adds in `carriedSums`.
  void planCarriedSums(scf::ForOp op);
  /// An add of a carried row sum: per chunk of the thread, the carried
  /// tile's first element plus the chunk's elements of the other operand,
  /// the chunk's other elements carried as they are.
  void lowerCarriedSum(Operation *add);
  void lowerIf(scf::IfOp op);
  void lowerYield(scf::YieldOp op);
  scf::YieldOp rebuildYield(scf::YieldOp yield);

  func::FuncOp func;
  LoweringOptions opts;
  ScratchPlan scratch;
  /// Inserts at the start of the entry block (allocas, thread/program ids).
  OpBuilder entry;
  Value threadId;
  Value splitRank;
  Value scratchBase;
  Value programIds[3];
  Value numPrograms[3];
  DenseMap<Value, Value> buffers;
  /// Per tile lowered by lowerExpWithRangeTest: its groups' test results, in
  /// the order of the thread's elements, kExpGroup (LowerElementwise.cpp)
  /// elements each.
  DenseMap<Value, SmallVector<Value>> expGroupTests;
  /// Per scf.yield with tiles: the buffers its tile operands are copied to.
  DenseMap<Operation *, SmallVector<Value>> yieldTargets;
  /// Replaced ops, erased once the whole kernel is rewritten.
  SmallVector<Operation *> toErase;
  /// Broadcasts with a BroadcastLoadPlan, and the loads and reshapes they
  /// absorb (which emit nothing).
  DenseMap<Operation *, Operation *> broadcastLoads;
  llvm::DenseSet<Operation *> absorbed;
  /// The adds of carried row sums (planCarriedSums), each with the index of
  /// its operand that is the carried tile.
  DenseMap<Operation *, unsigned> carriedSums;
};

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILETOLOOPS_KERNELLOWERING_H
