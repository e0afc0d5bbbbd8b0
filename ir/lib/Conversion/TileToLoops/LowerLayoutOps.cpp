//===- LowerLayoutOps.cpp - tiles built or rearranged -------------------===//
//
// Lowers the tile ops that build tiles or move elements between threads:
// splat and splat constants (fill), iota, broadcast, transpose and mma.
// Broadcasts whose result elements come from the same thread (identical
// shapes, a single input element, one thread, or a matching map: see
// planLocalBroadcast) copy within the thread's registers; a broadcast of a
// loaded input read by nothing else loads it again in its own layout
// (planBroadcastLoad, LowerLoadStore.cpp); the others, and
// transpose and mma, exchange elements through the scratch buffer between
// barriers. A bf16 or f16 mma with a WarpMmaPlan (ThreadMapping.h) multiplies
// on the tensor cores (mma.sync), the others element by element. Reshape
// needs no code (same element count, same map).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "../TileMatmulToMmaSync/WarpMma.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

void KernelLowering::lowerFill(Operation *op, Value scalar) {
  OpBuilder b(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Value dst = newBuffer(type);
  forEachOwned(b, op->getLoc(), getLayout(type), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 memref::StoreOp::create(b, op->getLoc(), scalar, dst, k);
               });
  buffers[op->getResult(0)] = dst;
}

void KernelLowering::lowerIota(IotaOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/true,
               [&](OpBuilder &b, Value k, Value l) {
                 Value v = arith::IndexCastOp::create(b, loc,
                                                      type.getElementType(), l);
                 memref::StoreOp::create(b, loc, v, dst, k);
               });
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerBroadcast(BroadcastOp op) {
  if (auto it = broadcastLoads.find(op); it != broadcastLoads.end()) {
    if (auto take = dyn_cast<StreamTakeOp>(it->second))
      return lowerBroadcastTake(op, take);
    return lowerBroadcastLoad(op, cast<LoadOp>(it->second));
  }
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType srcType = op.getInput().getType(), type = op.getType();
  Value src = bufferOf(op.getInput());
  // The input linear index of result element l: its coordinates with the
  // broadcast dimensions set to 0.
  auto sourceLinear = [&](OpBuilder &b, Value l) {
    SmallVector<Value> coords = delinearize(b, loc, l, type.getShape());
    for (auto [d, size] : llvm::enumerate(srcType.getShape()))
      if (size == 1)
        coords[d] = cidx(b, loc, 0);
    return linearize(b, loc, coords, srcType.getShape());
  };

  if (std::optional<LocalBroadcastPlan> plan = planLocalBroadcast(opts, op)) {
    if (plan->kind == LocalBroadcastPlan::Identity) {
      buffers[op.getResult()] = src;
      return;
    }
    Value dst = newBuffer(type);
    Value splat;
    if (plan->kind == LocalBroadcastPlan::Splat)
      splat = memref::LoadOp::create(b, loc, src, cidx(b, loc, 0));
    bool sameThread = plan->kind == LocalBroadcastPlan::SameThread;
    forEachOwned(
        b, loc, getLayout(type), /*needLinear=*/sameThread,
        [&](OpBuilder &b, Value k, Value l) {
          Value v = splat;
          if (sameThread) // one thread: private index = linear index
            v = memref::LoadOp::create(b, loc, src, sourceLinear(b, l));
          else if (plan->kind == LocalBroadcastPlan::Table)
            v = memref::LoadOp::create(
                b, loc, src,
                cidx(b, loc, plan->sourceIndex[*getConstantIntValue(k)]));
          memref::StoreOp::create(b, loc, v, dst, k);
        });
    buffers[op.getResult()] = dst;
    return;
  }

  Value view = writeToScratch(b, loc, op.getInput(), 0);
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/true,
               [&](OpBuilder &b, Value k, Value l) {
                 Value v = readScratch(b, loc, view, sourceLinear(b, l),
                                       type.getElementType());
                 memref::StoreOp::create(b, loc, v, dst, k);
               });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerTranspose(TransposeOp op) {
  // The B operand of a tensor-core mma: the mma writes its input as B^T.
  if (isAbsorbedTranspose(opts, op))
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  Type elt = type.getElementType();
  // The input (R1 x R0) goes to scratch row-major, then each thread reads its
  // result elements: result[i, j] = input[j, i]. A thread's chunk of v result
  // elements reads v consecutive input rows of one column, and neighbouring
  // lanes read neighbouring groups of v rows: unswizzled, all of them hit the
  // same few banks (rows are multiples of 128 bytes apart). On gpu the chunks
  // of v elements of input row r are stored at chunk position
  // (c / v) xor ((r / v) mod C), C chunks per row: a permutation of each row
  // that keeps every chunk contiguous and aligned (vector stores), while the
  // lanes' reads spread over C chunk positions, hence different banks.
  int64_t rows = inType.getDimSize(0), cols = inType.getDimSize(1);
  Layout inLayout = getLayout(inType);
  int64_t v = inLayout.replicated ? 1 : inLayout.vec;
  int64_t chunksPerRow = cols / v;
  bool swizzle = opts.gpu && v > 1 && cols % v == 0 && chunksPerRow > 1;
  auto scratchIndex = [&](OpBuilder &b, Value r, Value c) -> Value {
    if (!swizzle)
      return linearize(b, loc, {r, c}, {rows, cols});
    Value logV = cidx(b, loc, llvm::Log2_64(v));
    Value chunk = b.createOrFold<arith::ShRUIOp>(loc, c, logV);
    Value within = b.createOrFold<arith::AndIOp>(loc, c, cidx(b, loc, v - 1));
    Value key = b.createOrFold<arith::AndIOp>(
        loc, b.createOrFold<arith::ShRUIOp>(loc, r, logV),
        cidx(b, loc, chunksPerRow - 1));
    Value position = b.createOrFold<arith::XOrIOp>(loc, chunk, key);
    Value start = b.createOrFold<arith::ShLIOp>(loc, position, logV);
    return linearize(b, loc, {r, b.createOrFold<arith::OrIOp>(loc, start, within)},
                     {rows, cols});
  };
  Value view =
      getScratchView(b, loc, elt, inType.getNumElements(), /*byteOffset=*/0);
  Value src = bufferOf(op.getInput());
  auto store = [&](OpBuilder &b, Value k, Value index) {
    Value x = memref::LoadOp::create(b, loc, src, k);
    if (elt.isInteger(1))
      x = arith::ExtUIOp::create(b, loc, b.getI8Type(), x);
    memref::StoreOp::create(b, loc, x, view, index);
  };
  if (swizzle) {
    // A chunk lies in one input row and stays contiguous: one index per chunk.
    forEachChunk(b, loc, inLayout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k0, Value l0) {
                   SmallVector<Value> rc =
                       delinearize(b, loc, l0, {rows, cols});
                   Value s0 = scratchIndex(b, rc[0], rc[1]);
                   for (int64_t j = 0; j < v; ++j)
                     store(b, addConst(b, loc, k0, j), addConst(b, loc, s0, j));
                 });
  } else {
    forEachOwned(b, loc, inLayout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k, Value l) { store(b, k, l); });
  }
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> rc = delinearize(b, loc, l, type.getShape());
        Value v = readScratch(b, loc, view, scratchIndex(b, rc[1], rc[0]), elt);
        memref::StoreOp::create(b, loc, v, dst, k);
      });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

namespace {

/// Folded index arithmetic at one location, with whichever builder is at hand.
struct IndexOps {
  Location loc;
  Value c(OpBuilder &b, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(OpBuilder &b, Value x, Value y) const {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value mul(OpBuilder &b, Value x, int64_t y) const {
    return b.createOrFold<arith::MulIOp>(loc, x, c(b, y));
  }
  Value div(OpBuilder &b, Value x, int64_t y) const {
    return b.createOrFold<arith::DivUIOp>(loc, x, c(b, y));
  }
  Value rem(OpBuilder &b, Value x, int64_t y) const {
    return b.createOrFold<arith::RemUIOp>(loc, x, c(b, y));
  }
};

} // namespace

void KernelLowering::writeMmaRows(OpBuilder &b, Location loc, Value tile,
                                  Value view, int64_t stride) {
  IndexOps ix{loc};
  auto t = cast<RankedTensorType>(tile.getType());
  int64_t cols = t.getDimSize(1);
  Layout layout = getLayout(t);
  Value src = bufferOf(tile);
  Type rowType = cast<MemRefType>(view.getType()).getElementType();
  auto store = [&](OpBuilder &b, Value k, Value at) {
    Value v = memref::LoadOp::create(b, loc, src, k);
    if (v.getType() != rowType) // an 8-bit float into f16 rows (exact)
      v = arith::ExtFOp::create(b, loc, rowType, v);
    memref::StoreOp::create(b, loc, v, view, at);
  };
  // Where linear element l of the tile lies in rows of `stride`.
  auto paddedIndex = [&](OpBuilder &b, Value l) {
    return ix.add(b, ix.mul(b, ix.div(b, l, cols), stride), ix.rem(b, l, cols));
  };
  if (layout.replicated) {
    forEachOwned(b, loc, layout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k, Value l) {
                   store(b, k, paddedIndex(b, l));
                 });
    return;
  }
  // A chunk lies in one row (C is a multiple of 16): one index per chunk, and
  // consecutive stores the vectorizer merges.
  forEachChunk(b, loc, layout, /*needLinear=*/true,
               [&](OpBuilder &b, Value k0, Value l0) {
                 Value at = paddedIndex(b, l0);
                 for (int64_t j = 0; j < layout.vec; ++j)
                   store(b, addConst(b, loc, k0, j), addConst(b, loc, at, j));
               });
}

Value KernelLowering::warpMmaProducts(OpBuilder &b, Location loc, MmaOp op,
                                      const WarpMmaPlan &plan, Value bView) {
  IndexOps ix{loc};
  Type elt = plan.stageType;
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  const int64_t m = plan.m, n = plan.n, row = plan.rowElems,
                outRow = plan.nRowElems;
  Value aWords = getScratchView(b, loc, i32, m * row / 2, 0);
  Value bWords = getScratchView(b, loc, i32, plan.bBytes / 4, plan.aBytes);
  Value out = getScratchView(b, loc, f32, llvm::alignTo(m, 16) * outRow,
                             plan.aBytes + plan.bBytes);
  Value tid = getThreadId();
  Value warp = ix.div(b, tid, kWarpSize), lane = ix.rem(b, tid, kWarpSize);
  Value group = ix.div(b, lane, 4), pair = ix.mul(b, ix.rem(b, lane, 4), 2);
  int64_t blocksN = n / 16, blocks = llvm::divideCeil(m, 16) * blocksN;
  auto blockLoop =
      scf::ForOp::create(b, loc, warp, ix.c(b, blocks),
                         ix.c(b, opts.ctaThreads() / kWarpSize));
  OpBuilder lb = OpBuilder::atBlockBegin(blockLoop.getBody());
  Value blk = blockLoop.getInductionVar();
  Value mRow = ix.add(lb, ix.mul(lb, ix.div(lb, blk, blocksN), 16), group);
  Value nCol = ix.mul(lb, ix.rem(lb, blk, blocksN), 16);
  // Fragment rows past M read row M - 1 (the products there are not read).
  auto clampRow = [&](Value r) {
    return lb.createOrFold<arith::MinUIOp>(loc, r, ix.c(lb, m - 1));
  };
  Value a0 = ix.add(lb, ix.mul(lb, clampRow(mRow), row), pair);
  Value a1 = ix.add(
      lb, ix.mul(lb, clampRow(ix.add(lb, mRow, ix.c(lb, 8))), row), pair);
  Value nRow = ix.add(lb, nCol, group);
  Value b0 = ix.add(lb, ix.mul(lb, nRow, row), pair);
  Value b1 = ix.add(lb, ix.mul(lb, ix.add(lb, nRow, ix.c(lb, 8)), row), pair);
  // Row-major B: the fragment's two elements of column n, rows k and k + 1.
  Value bCol0 = nRow, bCol1 = ix.add(lb, nRow, ix.c(lb, 8));
  Value zero = arith::ConstantOp::create(lb, loc, lb.getF32FloatAttr(0));
  SmallVector<Value> init(8, zero);
  auto kLoop = scf::ForOp::create(
      lb, loc, ix.c(lb, 0), ix.c(lb, plan.k), ix.c(lb, 16), init,
      [&](OpBuilder &kb, Location loc, Value ks, ValueRange acc) {
        auto word = [&](Value words, Value base, int64_t offset) -> Value {
          Value at = ix.add(kb, ix.add(kb, base, ks), ix.c(kb, offset));
          return memref::LoadOp::create(kb, loc, words, ix.div(kb, at, 2));
        };
        SmallVector<Value> a = {word(aWords, a0, 0), word(aWords, a1, 0),
                                word(aWords, a0, 8), word(aWords, a1, 8)};
        // Rows ks + pair + offset and the next of row-major B at `col`,
        // packed as one word (the first in the low half).
        auto column = [&](Value col, int64_t offset) -> Value {
          Value r = ix.add(kb, ix.add(kb, ks, pair), ix.c(kb, offset));
          Type i16 = kb.getI16Type();
          auto half = [&](Value rr) -> Value {
            Value at = ix.add(kb, ix.mul(kb, rr, plan.nRowElems), col);
            Value x = memref::LoadOp::create(kb, loc, bView, at);
            return arith::ExtUIOp::create(
                kb, loc, i32, arith::BitcastOp::create(kb, loc, i16, x));
          };
          Value lo = half(r), hi = half(ix.add(kb, r, ix.c(kb, 1)));
          return arith::OrIOp::create(
              kb, loc, lo,
              arith::ShLIOp::create(
                  kb, loc, hi,
                  arith::ConstantOp::create(kb, loc, kb.getI32IntegerAttr(16))));
        };
        auto fragment = [&](Value base, Value col) -> SmallVector<Value> {
          if (plan.transposedB)
            return {word(bWords, base, 0), word(bWords, base, 8)};
          return {column(col, 0), column(col, 8)};
        };
        WarpMma mma(kb, loc);
        SmallVector<Value> sums(acc.begin(), acc.end());
        std::array<Value, 4> d0 = mma.mma(a, fragment(b0, bCol0),
                                          ArrayRef(sums).take_front(4), elt);
        std::array<Value, 4> d1 = mma.mma(a, fragment(b1, bCol1),
                                          ArrayRef(sums).drop_front(4), elt);
        SmallVector<Value> next(d0.begin(), d0.end());
        next.append(d1.begin(), d1.end());
        scf::YieldOp::create(kb, loc, next);
      });
  // Fragment element (group, pair + j) and (group + 8, pair + j) of each
  // 16 x 8 half.
  for (int64_t half = 0; half < 2; ++half)
    for (int64_t i = 0; i < 4; ++i) {
      Value r = ix.add(lb, mRow, ix.c(lb, i < 2 ? 0 : 8));
      Value col = ix.add(lb, nCol, ix.c(lb, half * 8 + (i % 2)));
      memref::StoreOp::create(
          lb, loc, kLoop.getResult(half * 4 + i), out,
          ix.add(lb, ix.mul(lb, r, outRow), ix.add(lb, col, pair)));
    }
  return out;
}

void KernelLowering::lowerWarpMma(MmaOp op, const WarpMmaPlan &plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  IndexOps ix{loc};
  RankedTensorType type = op.getType();
  Type elt = plan.stageType;
  // 1. A, and B^T (when B is a transpose) or B as it is, into shared rows.
  writeMmaRows(b, loc, op.getA(),
               getScratchView(b, loc, elt, plan.m * plan.rowElems, 0),
               plan.rowElems);
  Value bView = getScratchView(b, loc, elt, plan.bBytes / 2, plan.aBytes);
  if (plan.transposedB)
    writeMmaRows(b, loc, TransposeOp(plan.transposedB).getInput(), bView,
                 plan.rowElems);
  else
    writeMmaRows(b, loc, op.getB(), bView, plan.nRowElems);
  barrier(b, loc);
  // 2. Each warp's 16 x 16 blocks of the product, two m16n8k16 products per
  // k-step, into the product rows.
  Value out = warpMmaProducts(b, loc, op, plan, bView);
  barrier(b, loc);
  // 3. The accumulator plus the product, read in the result's layout.
  Value acc = bufferOf(op.getAcc());
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/true,
               [&](OpBuilder &b, Value k, Value l) {
                 Value at = ix.add(b, ix.mul(b, ix.div(b, l, plan.n), plan.nRowElems),
                                   ix.rem(b, l, plan.n));
                 Value p = memref::LoadOp::create(b, loc, out, at);
                 Value a = memref::LoadOp::create(b, loc, acc, k);
                 memref::StoreOp::create(
                     b, loc, arith::AddFOp::create(b, loc, a, p), dst, k);
               });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerMma(MmaOp op) {
  if (std::optional<WarpMmaPlan> plan = planWarpMma(opts, op))
    return lowerWarpMma(op, *plan);
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType aType = op.getA().getType(), type = op.getType();
  Type elt = aType.getElementType(), f32 = b.getF32Type();
  Type eltB = op.getB().getType().getElementType();  // elt, or the other 8-bit float
  int64_t kSize = aType.getDimSize(1), nSize = type.getDimSize(1);
  int64_t aBytes = aType.getNumElements() * scratchElementBytes(elt);
  Value aView = writeToScratch(b, loc, op.getA(), 0);
  Value bView = writeToScratch(b, loc, op.getB(), aBytes);
  barrier(b, loc);
  Value acc = bufferOf(op.getAcc());
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        Value m = b.createOrFold<arith::ShRUIOp>(
            loc, l, cidx(b, loc, llvm::Log2_64(nSize)));
        Value n =
            b.createOrFold<arith::AndIOp>(loc, l, cidx(b, loc, nSize - 1));
        Value rowBase =
            b.createOrFold<arith::MulIOp>(loc, m, cidx(b, loc, kSize));
        Value init = memref::LoadOp::create(b, loc, acc, k);
        auto loop = scf::ForOp::create(
            b, loc, cidx(b, loc, 0), cidx(b, loc, kSize), cidx(b, loc, 1),
            ValueRange{init},
            [&](OpBuilder &lb, Location loc, Value kk, ValueRange iter) {
              Value ai = lb.createOrFold<arith::AddIOp>(loc, rowBase, kk);
              Value bi = lb.createOrFold<arith::AddIOp>(
                  loc,
                  lb.createOrFold<arith::MulIOp>(loc, kk, cidx(lb, loc, nSize)),
                  n);
              Value av =
                  extendTo(lb, loc, readScratch(lb, loc, aView, ai, elt), f32);
              Value bv =
                  extendTo(lb, loc, readScratch(lb, loc, bView, bi, eltB), f32);
              Value prod = arith::MulFOp::create(lb, loc, av, bv);
              scf::YieldOp::create(
                  lb, loc,
                  arith::AddFOp::create(lb, loc, iter[0], prod).getResult());
            });
        memref::StoreOp::create(b, loc, loop.getResult(0), dst, k);
      });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}
