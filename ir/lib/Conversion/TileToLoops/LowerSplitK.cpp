//===- LowerSplitK.cpp - the ops of programs that share a K loop ----------===//
//
// Lowers tile.split_rank and tile.split_sum (tile-split-k-loop's kernels,
// gpu only: the kernel's tile.split_k = K CTAs of one cluster run each
// program, CTA c of the grid's x being rank c mod K of program c / K; the
// launch code sets the cluster's size, .reqnctapercluster, from the same
// attribute).
//
// tile.split_sum: every CTA of the program runs the same thread layout, so
// thread t of each CTA holds the same elements of each partial. The CTAs of
// rank 1 and up write theirs to the scratch (element k of input i at
// (base_i + k) * T + t, splitSumSlots); a cluster barrier makes those writes
// visible; rank 0 adds, in rank order, the elements of each other CTA's
// scratch at its own thread's slots (distributed shared memory: mapa and
// ld.shared::cluster); a second cluster barrier keeps the other CTAs, and
// their shared memory, until rank 0 has read it.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "../Utils/ClusterSum.h"
#include "../Utils/HopperPtx.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

Value KernelLowering::getSplitRank() {
  if (splitRank)
    return splitRank;
  Location loc = func.getLoc();
  Type i32 = entry.getI32Type();
  return splitRank = arith::AndIOp::create(
             entry, loc, NVVM::BlockIdXOp::create(entry, loc, i32),
             arith::ConstantIntOp::create(entry, loc, i32, opts.splitK - 1));
}

void KernelLowering::lowerSplitRank(SplitRankOp op) {
  op.getResult().replaceAllUsesWith(getSplitRank());
}

void KernelLowering::lowerSplitSum(SplitSumOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  // Each result starts as this CTA's own partial.
  SmallVector<Value> results;
  for (Value in : op.getInputs()) {
    auto type = cast<RankedTensorType>(in.getType());
    Value dst = newBuffer(type);
    copyBuffer(b, loc, type, bufferOf(in), dst);
    results.push_back(dst);
  }
  for (auto [result, dst] : llvm::zip(op.getResults(), results))
    buffers[result] = dst;
  if (opts.splitK == 1)
    return;

  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  const int64_t threads = opts.ctaThreads();
  Value view = getScratchView(b, loc, f32, splitSumSlots(opts, op), 0);
  Value tid = getThreadId();
  Value rank = getSplitRank();
  // Calls `body(b, buffer, k, slot)` for each private element k of each
  // input's `buffer`, with its scratch slot's index.
  auto forEachSlot = [&](OpBuilder &b,
                         function_ref<void(OpBuilder &, Value, Value, Value)>
                             body) {
    int64_t base = 0;
    for (auto [in, dst] : llvm::zip(op.getInputs(), results)) {
      Layout layout = getLayout(cast<RankedTensorType>(in.getType()));
      forEachOwned(b, loc, layout, /*needLinear=*/false,
                   [&](OpBuilder &b, Value k, Value) {
                     Value row = addConst(b, loc, k, base);
                     Value slot = arith::AddIOp::create(
                         b, loc,
                         arith::MulIOp::create(b, loc, row,
                                               cidx(b, loc, threads)),
                         tid);
                     body(b, dst, k, slot);
                   });
      base += layout.perThread;
    }
  };

  // Ranks 1 and up write their partials to their scratch; rank 0 adds the
  // others', in rank order (ClusterSum.h).
  sumOverCluster(
      b, loc, rank, opts.splitK, /*own=*/{},
      [&] {
        forEachSlot(b, [&](OpBuilder &b, Value dst, Value k, Value slot) {
          Value v = memref::LoadOp::create(b, loc, dst, k);
          memref::StoreOp::create(b, loc, v, view, slot);
        });
      },
      [&](Value peer, SmallVectorImpl<Value> &) {
        Value start = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view);
        forEachSlot(b, [&](OpBuilder &b, Value dst, Value k, Value slot) {
          Value at = arith::AddIOp::create(
              b, loc, start,
              arith::MulIOp::create(b, loc, slot, cidx(b, loc, 4)));
          Value theirs = HopperPtx(b, loc).loadClusterSharedF32(
              arith::IndexCastOp::create(b, loc, i32, at), peer);
          Value mine = memref::LoadOp::create(b, loc, dst, k);
          memref::StoreOp::create(b, loc,
                                  arith::AddFOp::create(b, loc, mine, theirs),
                                  dst, k);
        });
      });
}
