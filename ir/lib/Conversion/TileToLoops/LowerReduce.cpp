//===- LowerReduce.cpp - tile.reduce ------------------------------------===//
//
// Lowers tile.reduce, accumulating in f32 for 16-bit floats (see
// planRowReduce in ThreadMapping.cpp for the decisions):
//  * rows (all dimensions after the axis are 1): each thread combines its own
//    elements of each row it touches into a partial, in one pass over its
//    registers; the threads sharing a row combine partials with xor warp
//    shuffles; when a row spans several warps or the result elements live in
//    other threads, one lane per warp and row writes its partial to scratch
//    and, after a barrier, each result owner combines the row's partials.
//    On gpu a max or min of a widened 16-bit tile combines each thread's
//    elements on the narrow values, two per instruction (max.NaN.bf16x2),
//    before widening: exact, and half the instructions.
//  * other axes: the input is written to the scratch buffer and each owned
//    result element combines its slice.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

Value mlir::tessera::tile::extendTo(OpBuilder &b, Location loc, Value v,
                                    Type type) {
  return v.getType() == type ? v : arith::ExtFOp::create(b, loc, type, v);
}

void KernelLowering::lowerReduce(ReduceOp op) {
  if (std::optional<RowReducePlan> plan = planRowReduce(opts, op))
    return lowerRowReduce(op, *plan);
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType srcType = op.getInput().getType(), type = op.getType();
  Type elt = type.getElementType(), accType = accumulatorType(elt);
  int64_t axis = op.getAxis();
  int64_t size = srcType.getDimSize(axis);
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < srcType.getRank(); ++d)
    inner *= srcType.getDimSize(d);
  Value view = writeToScratch(b, loc, op.getInput(), 0);
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        // Result l = outer*inner + in; source = outer*size*inner + r*inner +
        // in.
        Value outer = b.createOrFold<arith::ShRUIOp>(
            loc, l, cidx(b, loc, llvm::Log2_64(inner)));
        Value in =
            b.createOrFold<arith::AndIOp>(loc, l, cidx(b, loc, inner - 1));
        Value base = b.createOrFold<arith::AddIOp>(
            loc,
            b.createOrFold<arith::MulIOp>(loc, outer,
                                          cidx(b, loc, size * inner)),
            in);
        Value acc =
            extendTo(b, loc, readScratch(b, loc, view, base, elt), accType);
        if (size > 1) {
          auto loop = scf::ForOp::create(
              b, loc, cidx(b, loc, 1), cidx(b, loc, size), cidx(b, loc, 1),
              ValueRange{acc},
              [&](OpBuilder &lb, Location loc, Value r, ValueRange iter) {
                Value offset = lb.createOrFold<arith::MulIOp>(
                    loc, r, cidx(lb, loc, inner));
                Value idx = lb.createOrFold<arith::AddIOp>(loc, base, offset);
                Value x = extendTo(
                    lb, loc, readScratch(lb, loc, view, idx, elt), accType);
                scf::YieldOp::create(
                    lb, loc, combine(lb, loc, op.getKind(), iter[0], x));
              });
          acc = loop.getResult(0);
        }
        if (accType != elt)
          acc = arith::TruncFOp::create(b, loc, elt, acc);
        memref::StoreOp::create(b, loc, acc, dst, k);
      });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

Value mlir::tessera::tile::combineTree(OpBuilder &b, Location loc,
                                       ReduceKind kind,
                                       SmallVector<Value> values) {
  while (values.size() > 1) {
    SmallVector<Value> next;
    for (size_t i = 0; i + 1 < values.size(); i += 2)
      next.push_back(combine(b, loc, kind, values[i], values[i + 1]));
    if (values.size() % 2)
      next.push_back(values.back());
    values = std::move(next);
  }
  return values.front();
}

Value KernelLowering::combineOwned(OpBuilder &b, Location loc, ReduceKind kind,
                                   Value buffer, Value start, int64_t count,
                                   Type accType) {
  // Blocks of up to 16 elements are combined as trees; longer runs (cpu, or
  // very large tiles) loop over blocks.
  int64_t block = std::min<int64_t>(count, 16);
  auto combineBlock = [&](OpBuilder &b, Value first) {
    SmallVector<Value> values;
    for (int64_t i = 0; i < block; ++i) {
      Value x =
          memref::LoadOp::create(b, loc, buffer, addConst(b, loc, first, i));
      values.push_back(extendTo(b, loc, x, accType));
    }
    return combineTree(b, loc, kind, values);
  };
  Value acc = combineBlock(b, start);
  if (count == block)
    return acc;
  auto loop = scf::ForOp::create(
      b, loc, cidx(b, loc, 1), cidx(b, loc, count / block), cidx(b, loc, 1),
      ValueRange{acc},
      [&](OpBuilder &lb, Location loc, Value i, ValueRange iter) {
        Value first = lb.createOrFold<arith::AddIOp>(
            loc, start,
            lb.createOrFold<arith::MulIOp>(loc, i, cidx(lb, loc, block)));
        scf::YieldOp::create(
            lb, loc, combine(lb, loc, kind, iter[0], combineBlock(lb, first)));
      });
  return loop.getResult(0);
}

Value mlir::tessera::tile::combineInPairs(OpBuilder &b, Location loc,
                                          ReduceKind kind,
                                          ArrayRef<Value> values,
                                          Type accType) {
  assert(!values.empty() && values.size() % 2 == 0 && "pairs of values");
  auto pairType = VectorType::get({2}, values.front().getType());
  SmallVector<Value> pairs;
  for (size_t i = 0; i + 1 < values.size(); i += 2)
    pairs.push_back(vector::FromElementsOp::create(
        b, loc, pairType, ValueRange{values[i], values[i + 1]}));
  Value pair = combineTree(b, loc, kind, pairs);
  Value lo = vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{0});
  Value hi = vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{1});
  return combine(b, loc, kind, extendTo(b, loc, lo, accType),
                 extendTo(b, loc, hi, accType));
}

/// The longest partial of a thread's elements combined in pairs (a 1 x 8192
/// row at 128 threads has 64).
constexpr int64_t kMaxPairedRun = 64;

/// On gpu, the 16-bit float tile whose widening `op` reduces by max or min,
/// when its thread's elements pair up within vector chunks (so that a pair is
/// one 32-bit register) and each partial is at most kMaxPairedRun elements:
/// the partials are then exact on the narrow values, two per instruction
/// (max.NaN.bf16x2 / f16x2). Null otherwise.
static Value narrowSourceOfWidenedMinMax(const LoweringOptions &opts,
                                        ReduceOp op, const Layout &in,
                                        const RowReducePlan &plan) {
  if (!opts.gpu || op.getKind() == ReduceKind::sum)
    return {};
  auto ext = op.getInput().getDefiningOp<arith::ExtFOp>();
  if (!ext || !isFloat16Or(getElementTypeOrSelf(ext.getIn().getType())))
    return {};
  if (in.replicated || in.vec % 2 || plan.perPartial % 2 ||
      plan.perPartial > kMaxPairedRun)
    return {};
  return ext.getIn();
}

void KernelLowering::lowerRowReduce(ReduceOp op, const RowReducePlan &plan) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType srcType = op.getInput().getType(), type = op.getType();
  Type elt = type.getElementType(), accType = accumulatorType(elt);
  ReduceKind kind = op.getKind();
  Layout in = getLayout(srcType), out = getLayout(type);
  Value src = bufferOf(op.getInput());
  Value narrow = narrowSourceOfWidenedMinMax(opts, op, in, plan);
  Value dst = newBuffer(type);
  int64_t warp = opts.warpSize();
  int64_t lanes = std::min(plan.group, warp); // threads of a group in a warp

  // Scratch slots: rows x warps per row, where the exchange needs them.
  Value view;
  auto privateOffset = scratch.privateOffset.find(op);
  bool ownRegion = privateOffset != scratch.privateOffset.end();
  if (!plan.exchangeFree)
    view = getScratchView(b, loc, accType, plan.rows * plan.warpsPerRow,
                          ownRegion ? privateOffset->second : 0);
  // Per thread, the partials' totals after the shuffles (exchange-free case).
  Value totals;
  if (plan.exchangeFree)
    totals = memref::AllocaOp::create(
        entry, func.getLoc(), MemRefType::get({plan.numPartials}, accType));

  // 1. Per partial: combine the thread's elements of the row, then across the
  //    group's lanes by butterfly shuffles; store the total, or let lane 0 of
  //    each warp and row write it to scratch.
  auto emitPartial = [&](OpBuilder &b, Value p) {
    Value start =
        b.createOrFold<arith::MulIOp>(loc, p, cidx(b, loc, plan.perPartial));
    Value acc;
    if (narrow) {
      SmallVector<Value> values;
      for (int64_t i = 0; i < plan.perPartial; ++i)
        values.push_back(memref::LoadOp::create(b, loc, bufferOf(narrow),
                                                addConst(b, loc, start, i)));
      acc = combineInPairs(b, loc, kind, values, accType);
    } else {
      acc = combineOwned(b, loc, kind, src, start, plan.perPartial, accType);
    }
    for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
      acc = combine(b, loc, kind, acc, shuffleXor(b, loc, acc, offset));
    if (plan.exchangeFree) {
      memref::StoreOp::create(b, loc, acc, totals, p);
      return;
    }
    // The row of this partial: that of its first element, whose linear index
    // is (c*T + t)*v + j for private index start = c*v + j (t mod P when
    // replicated).
    Value tid = getThreadId();
    Value linear;
    if (in.replicated) {
      linear = b.createOrFold<arith::AndIOp>(loc, tid,
                                             cidx(b, loc, in.numElements - 1));
    } else {
      Value c = b.createOrFold<arith::ShRUIOp>(
          loc, start, cidx(b, loc, llvm::Log2_64(in.vec)));
      Value j =
          b.createOrFold<arith::AndIOp>(loc, start, cidx(b, loc, in.vec - 1));
      Value chunk = b.createOrFold<arith::AddIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, c, cidx(b, loc, in.threads)),
          tid);
      linear = b.createOrFold<arith::AddIOp>(
          loc, b.createOrFold<arith::MulIOp>(loc, chunk, cidx(b, loc, in.vec)),
          j);
    }
    Value row = b.createOrFold<arith::ShRUIOp>(
        loc, linear, cidx(b, loc, llvm::Log2_64(plan.rowLength)));
    Value slot = row;
    if (plan.warpsPerRow > 1) {
      // Warp of this thread within its row's group: (t mod g) / warp.
      Value warpInRow = b.createOrFold<arith::ShRUIOp>(
          loc,
          b.createOrFold<arith::AndIOp>(loc, tid, cidx(b, loc, plan.group - 1)),
          cidx(b, loc, llvm::Log2_64(warp)));
      slot = b.createOrFold<arith::AddIOp>(
          loc,
          b.createOrFold<arith::MulIOp>(loc, row,
                                        cidx(b, loc, plan.warpsPerRow)),
          warpInRow);
    }
    // One writer per group and warp: the lane whose id is a multiple of
    // `lanes` (every thread when a thread owns whole rows).
    OpBuilder wb = b;
    if (lanes > 1) {
      Value lane =
          b.createOrFold<arith::AndIOp>(loc, tid, cidx(b, loc, lanes - 1));
      Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          lane, cidx(b, loc, 0));
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first,
                                    /*withElseRegion=*/false);
      wb = ifOp.getThenBodyBuilder();
    }
    Value stored = acc;
    if (accType.isInteger(1))
      stored = arith::ExtUIOp::create(wb, loc, wb.getI8Type(), acc);
    memref::StoreOp::create(wb, loc, stored, view, slot);
  };
  bool unrolled =
      plan.numPartials == 1 || (opts.gpu && in.perThread <= opts.unrollLimit);
  if (unrolled) {
    for (int64_t p = 0; p < plan.numPartials; ++p)
      emitPartial(b, cidx(b, loc, p));
  } else {
    scf::ForOp::create(b, loc, cidx(b, loc, 0), cidx(b, loc, plan.numPartials),
                       cidx(b, loc, 1), ValueRange(),
                       [&](OpBuilder &lb, Location loc, Value p, ValueRange) {
                         emitPartial(lb, p);
                         scf::YieldOp::create(lb, loc);
                       });
  }

  // 2. Each owned result element: its row's total.
  auto finish = [&](OpBuilder &b, Value acc, Value k) {
    if (accType != elt)
      acc = arith::TruncFOp::create(b, loc, elt, acc);
    memref::StoreOp::create(b, loc, acc, dst, k);
  };
  if (plan.exchangeFree) {
    forEachOwned(b, loc, out, /*needLinear=*/false,
                 [&](OpBuilder &b, Value k, Value) {
                   // Constant k: the planned partial; in a loop: identity.
                   Value p = k;
                   if (std::optional<int64_t> kc = getConstantIntValue(k))
                     p = cidx(b, loc, plan.partialOfResult[*kc]);
                   finish(b, memref::LoadOp::create(b, loc, totals, p), k);
                 });
  } else {
    barrier(b, loc);
    forEachOwned(
        b, loc, out, /*needLinear=*/true, [&](OpBuilder &b, Value k, Value r) {
          Value base = b.createOrFold<arith::MulIOp>(
              loc, r, cidx(b, loc, plan.warpsPerRow));
          SmallVector<Value> partials;
          for (int64_t i = 0; i < plan.warpsPerRow; ++i)
            partials.push_back(
                readScratch(b, loc, view, addConst(b, loc, base, i), accType));
          finish(b, combineTree(b, loc, kind, partials), k);
        });
    // The shared region may be overwritten by the next op once all threads
    // have read it; an own region is written once.
    if (!ownRegion)
      barrier(b, loc);
  }
  buffers[op.getResult()] = dst;
}
