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
// barriers. Reshape needs no code (same element count, same map).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

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
  if (auto it = broadcastLoads.find(op); it != broadcastLoads.end())
    return lowerBroadcastLoad(op, it->second);
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

void KernelLowering::lowerMma(MmaOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType aType = op.getA().getType(), type = op.getType();
  Type elt = aType.getElementType(), f32 = b.getF32Type();
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
                  extendTo(lb, loc, readScratch(lb, loc, bView, bi, elt), f32);
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
