//===- HopperPtx.h - sm_90a instructions as LLVM inline asm -----*- C++ -*-===//
//
// `HopperPtx` emits, at a builder's insertion point, the sm_90a instructions
// that `convert-tile-matmul-to-nvvm` (the tensor-core GEMM) and
// `convert-tile-to-loops` (bulk rings) need as `llvm.inline_asm`: mbarrier
// initialization, arrival and waiting, bulk copies, TMA loads and stores of 2-d boxes
// with the bulk groups and proxy fence that order the stores, named barriers
// (bar.sync is the one NVVM op here: its intrinsic is convergent, see namedBarrier),
// cluster barriers and loads of another CTA's shared memory (distributed shared memory),
// `setmaxnreg`, and `wgmma.mma_async` with its fence, commit and wait. Inline asm rather
// than NVVM ops because wgmma's scale-d must be a run-time predicate here (0
// on a tile's first product, which zeroes the accumulator without moves),
// which the NVVM op takes only as a constant; every instruction is written as
// the PTX ISA states it, so the PTX of a kernel reads the same.
//
// Shared-memory addresses are i32 offsets in the .shared window; the tensor
// map is the generic address of a grid-constant kernel parameter.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_UTILS_HOPPERPTX_H
#define TESSERA_LIB_CONVERSION_UTILS_HOPPERPTX_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::tessera::tile {

/// PTX's name of an 8-bit float type in tensor-core instructions: "e4m3" for
/// f8E4M3FN, "e5m2" for f8E5M2 (wgmma here, mma.sync in WarpMma).
const char *ptxFloat8Name(Type type);

class HopperPtx {
public:
  HopperPtx(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// mbarrier.init with an arrival count.
  void mbarrierInit(Value bar, int64_t count);
  /// fence.mbarrier_init: initialized barriers become visible to the async
  /// proxy (TMA) before any thread uses them.
  void fenceMbarrierInit();
  /// One arrival that also expects `bytes` of transactions (the TMA loads
  /// that complete on the barrier).
  void mbarrierArriveExpectTx(Value bar, int64_t bytes);
  void mbarrierArrive(Value bar);
  /// Waits until the phase of parity `parity` (i32, 0 or 1) has completed:
  /// a loop around mbarrier.try_wait.parity.
  void mbarrierWait(Value bar, Value parity);
  /// cp.async.bulk of `bytes` (i32, a multiple of 16) from the generic
  /// address `src` (i64) of global memory to shared memory at `dst`,
  /// completing on `bar`; both addresses 16-byte aligned.
  void bulkCopy(Value dst, Value src, Value bytes, Value bar);
  /// bar.warp.sync of the whole warp: its threads' memory accesses before it
  /// are ordered before those after it in every thread of the warp.
  void warpSync();
  /// cp.async.bulk.tensor.2d of the box at element coordinates (c0 innermost,
  /// c1) of `map` into shared memory at `dst`, completing on `bar`.
  void tmaLoad2d(Value dst, Value map, Value bar, Value c0, Value c1);
  /// cp.async.bulk.tensor.2d of the box at `src` in shared memory to element
  /// coordinates (c0 innermost, c1) of `map` in global memory, in the
  /// thread's bulk async-group; the elements outside the tensor are not
  /// written.
  void tmaStore2d(Value map, Value src, Value c0, Value c1);
  /// cp.async.bulk.commit_group: the thread's bulk copies issued so far form
  /// a group.
  void bulkCommitGroup();
  /// cp.async.bulk.wait_group.read (`readOnly`: until the groups' reads of
  /// shared memory are done) or cp.async.bulk.wait_group (complete), for all
  /// but the `pending` newest groups.
  void bulkWaitGroup(int64_t pending, bool readOnly);
  /// fence.proxy.async.shared::cta: the thread's shared-memory writes become
  /// visible to the async proxy (a TMA store that reads them).
  void fenceProxyAsyncShared();
  /// bar.sync of named barrier `id` for `threads` threads (nvvm.barrier).
  void namedBarrier(int64_t id, int64_t threads);
  /// bar.arrive of named barrier `id` for `threads` threads: the warp counts
  /// towards the barrier and goes on (the threads that wait there use
  /// namedBarrier). Inline asm, made convergent before the optimizer
  /// (tessera-mark-aligned-asm-convergent).
  void namedBarrierArrive(int64_t id, int64_t threads);
  /// setmaxnreg.inc or .dec to `registers` for the warpgroup.
  void setMaxRegisters(int64_t registers, bool increase);
  /// barrier.cluster.arrive.release then barrier.cluster.wait.acquire: every
  /// thread of every CTA of the cluster arrives; its shared-memory writes
  /// before it are visible to the cluster's threads after it.
  void clusterBarrier();
  /// The f32 at shared-memory address `addr` (i32, in this CTA's window) of
  /// the cluster's CTA of rank `rank` (i32): mapa, then ld.shared::cluster.
  Value loadClusterSharedF32(Value addr, Value rank);
  /// mapa.shared::cluster: the address (i32) in the cluster's shared window
  /// of `addr` (i32, in this CTA's window) in the CTA of rank `rank` (i32).
  Value mapShared(Value addr, Value rank);
  /// The f32 at `clusterAddr` + `offset` bytes (an immediate) of the
  /// cluster's shared window (ld.shared::cluster): many loads from one
  /// mapped address take no register each for their addresses.
  Value loadClusterSharedF32(Value clusterAddr, int64_t offset);
  void wgmmaFence();
  void wgmmaCommitGroup();
  void wgmmaWaitGroup(int64_t pending);
  /// The i64 shared-memory matrix descriptor of `addr` with 128-byte
  /// swizzling: addr >> 4 in bits 0-13, lbo >> 4 in 16-29, sbo >> 4 in 32-45,
  /// swizzle mode 1 in bits 62-63.
  Value matrixDescriptor(Value addr, int64_t lbo, int64_t sbo);
  /// `acc` (an LLVM struct of n/2 f32) plus A x B, m64 n k16, A K-major and
  /// B MN-major (`transposeB`, tnsp-b 1) or K-major: wgmma.mma_async with
  /// scale-d the i32 `scaleD` != 0. f32 inputs run as tf32 (k8) and 8-bit
  /// floats as k32, both with a K-major B only; B's type is `inputTypeB`
  /// where given (an 8-bit float A may take the other 8-bit float type).
  Value wgmma(Value acc, Value descA, Value descB, Value scaleD, int64_t n,
              Type inputType, bool transposeB, Type inputTypeB = {});
  /// `acc` plus A x B, m64 n k8 of tf32, A the four b32 registers `a` of this
  /// thread's fragment (those of mma m16n8k8 for the thread's warp's 16 rows)
  /// and B K-major in shared memory: wgmma.mma_async with A in registers.
  Value wgmmaTf32RegisterA(Value acc, ValueRange a, Value descB, Value scaleD,
                           int64_t n);

private:
  /// wgmma.mma_async m64`n``shapeAndTypes` (e.g. "k16.f32.bf16.bf16") on
  /// `acc` with A `a` (one i64 descriptor, or four b32 registers), B's
  /// descriptor, scale-d the i32 `scaleD` != 0, then `immediates` (scale-a,
  /// scale-b and the transpose operands where the types have them).
  Value wgmmaAsm(Value acc, StringRef shapeAndTypes, ValueRange a, Value descB,
                 Value scaleD, int64_t n, StringRef immediates);
  /// Side-effecting asm with `operands` and `constraints`, its result (or
  /// null for none: `result` null).
  Value asmOp(Type result, ValueRange operands, StringRef text,
              StringRef constraints);

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_UTILS_HOPPERPTX_H
