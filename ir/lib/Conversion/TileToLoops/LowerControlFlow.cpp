//===- LowerControlFlow.cpp - scf.for/scf.if carrying tiles -------------===//
//
// Lowers scf.for and scf.if that carry tiles: carried tiles and results get
// private buffers, yields copy into them, and the ops are rebuilt with only
// their scalar iter_args and results.
//
// Carried row sums. A loop that carries a tile T only to add tiles to it
// (acc = acc + x, once or in a chain, per iteration) and whose result is
// only summed along its last axis (tile.reduce sum over the last axis: a
// matrix-vector product's [R, K] accumulator) needs only T's row sums. When
// each of the thread's chunks lies in one row (the row length a multiple of
// the chunk width), each add then keeps the sum of the chunk's elements in
// the chunk's first element and carries the others unchanged (the initial
// values, constants when the tile starts as a splat): one register per
// chunk lives through the loop instead of one per element (a 16 x 512
// product at 256 threads carried 32 accumulators per thread, now 4). The
// row sums are those of the plain loop, added in another order (as any
// reduction's order is the compiler's); f32, f64 and integer tiles only
// (16-bit floats round per op). Only with the option `carried-sums`, which
// the pipeline sets for bulk rings and for launches that fix the programs
// per SM: there the accumulators' registers decide how many programs fit
// (a 16 x 512 product at 256 threads beside rings: 92 registers, 48 with
// it). Loops that keep their tiles in
// registers spend the freed registers on more loads in flight, which sped
// some products up and slowed others on the H200 (docs/performance.md).
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

void KernelLowering::lowerYield(scf::YieldOp op) {
  auto it = yieldTargets.find(op);
  if (it == yieldTargets.end())
    return;
  ArrayRef<Value> targets = it->second;
  OpBuilder b(op);
  Location loc = op.getLoc();
  // A yielded tile whose buffer is another position's target (e.g. swapped
  // loop-carried tiles) is staged through a temporary first.
  SmallVector<Value> sources;
  for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
    if (!targets[i]) {
      sources.push_back(Value());
      continue;
    }
    auto type = cast<RankedTensorType>(operand.getType());
    Value src = bufferOf(operand);
    bool clobbered = llvm::any_of(llvm::enumerate(targets), [&](auto t) {
      return t.index() != i && t.value() == src;
    });
    if (clobbered) {
      Value tmp = newBuffer(type);
      copyBuffer(b, loc, type, src, tmp);
      src = tmp;
    }
    sources.push_back(src);
  }
  for (auto [i, operand] : llvm::enumerate(op.getOperands()))
    if (targets[i])
      copyBuffer(b, loc, cast<RankedTensorType>(operand.getType()), sources[i],
                 targets[i]);
}

scf::YieldOp KernelLowering::rebuildYield(scf::YieldOp yield) {
  OpBuilder b(yield);
  SmallVector<Value> scalars;
  for (Value v : yield.getOperands())
    if (!isa<TensorType>(v.getType()))
      scalars.push_back(v);
  toErase.push_back(yield);
  return scf::YieldOp::create(b, yield.getLoc(), scalars);
}

void KernelLowering::planCarriedSums(scf::ForOp op) {
  if (!opts.carriedSums)
    return;
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs())) {
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type || type.getRank() == 0)
      continue;
    Type elt = type.getElementType();
    if (!(elt.isF32() || elt.isF64() ||
          (elt.isSignlessInteger() && !elt.isInteger(1))))
      continue;
    Layout layout = getLayout(type);
    if (layout.replicated || layout.vec < 2 ||
        type.getShape().back() % layout.vec != 0)
      continue;
    Value result = op.getResult(i);
    int64_t lastAxis = type.getRank() - 1;
    if (result.use_empty() ||
        llvm::any_of(result.getUsers(), [&](Operation *user) {
          auto reduce = dyn_cast<ReduceOp>(user);
          return !reduce || reduce.getKind() != ReduceKind::sum ||
                 static_cast<int64_t>(reduce.getAxis()) != lastAxis;
        }))
      continue;
    // The chain of adds from the carried tile to the yield, each the only
    // use of the one before.
    SmallVector<std::pair<Operation *, unsigned>> chain;
    Value v = arg;
    bool yielded = false;
    while (v.hasOneUse()) {
      OpOperand &use = *v.getUses().begin();
      Operation *user = use.getOwner();
      if (user == yield) {
        yielded = use.getOperandNumber() == i;
        break;
      }
      if (!isa<arith::AddFOp, arith::AddIOp>(user) ||
          user->getBlock() != op.getBody() ||
          user->getOperand(0) == user->getOperand(1))
        break;
      chain.emplace_back(user, use.getOperandNumber());
      v = user->getResult(0);
    }
    if (yielded)
      for (auto [add, index] : chain)
        carriedSums[add] = index;
  }
}

void KernelLowering::lowerCarriedSum(Operation *add) {
  OpBuilder b(add);
  Location loc = add->getLoc();
  auto type = cast<RankedTensorType>(add->getResult(0).getType());
  Layout layout = getLayout(type);
  unsigned carried = carriedSums.lookup(add);
  Value acc = bufferOf(add->getOperand(carried));
  Value x = bufferOf(add->getOperand(1 - carried));
  Value result = newBuffer(type);
  forEachChunk(b, loc, layout, /*needLinear=*/false,
               [&](OpBuilder &b, Value k0, Value) {
                 Value sum = memref::LoadOp::create(b, loc, acc, k0);
                 for (int64_t j = 0; j < layout.vec; ++j) {
                   IRMapping scalars;
                   scalars.map(add->getOperand(carried), sum);
                   scalars.map(add->getOperand(1 - carried),
                               memref::LoadOp::create(
                                   b, loc, x, addConst(b, loc, k0, j)));
                   Operation *one = b.clone(*add, scalars);
                   one->getResult(0).setType(type.getElementType());
                   sum = one->getResult(0);
                 }
                 memref::StoreOp::create(b, loc, sum, result, k0);
                 for (int64_t j = 1; j < layout.vec; ++j) {
                   Value k = addConst(b, loc, k0, j);
                   memref::StoreOp::create(
                       b, loc, memref::LoadOp::create(b, loc, acc, k), result, k);
                 }
               });
  buffers[add->getResult(0)] = result;
}

void KernelLowering::lowerFor(scf::ForOp op) {
  if (!hasTensorType(op.getResultTypes())) {
    lowerBlock(*op.getBody());
    return;
  }
  planCarriedSums(op);
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<Value> carried, scalarInits;
  for (auto [init, arg, result] :
       llvm::zip(op.getInitArgs(), op.getRegionIterArgs(), op.getResults())) {
    auto type = dyn_cast<RankedTensorType>(init.getType());
    if (!type) {
      carried.push_back(Value());
      scalarInits.push_back(init);
      continue;
    }
    Value buf = newBuffer(type);
    copyBuffer(b, loc, type, bufferOf(init), buf);
    buffers[arg] = buf;
    buffers[result] = buf;
    carried.push_back(buf);
  }
  auto oldYield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  yieldTargets[oldYield] = carried;
  lowerBlock(*op.getBody());

  // Rebuild the loop with only the scalar iter_args.
  auto newFor = scf::ForOp::create(b, loc, op.getLowerBound(),
                                   op.getUpperBound(), op.getStep(),
                                   scalarInits, nullptr, op.getUnsignedCmp());
  newFor->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  Block *newBody = newFor.getBody();
  while (!newBody->empty())
    newBody->back().erase();
  Block *oldBody = op.getBody();
  newBody->getOperations().splice(newBody->end(), oldBody->getOperations());
  op.getInductionVar().replaceAllUsesWith(newFor.getInductionVar());
  unsigned next = 0;
  for (auto [i, arg] : llvm::enumerate(op.getRegionIterArgs())) {
    if (carried[i])
      continue;
    arg.replaceAllUsesWith(newFor.getRegionIterArgs()[next]);
    op.getResult(i).replaceAllUsesWith(newFor.getResult(next));
    ++next;
  }
  rebuildYield(oldYield);
  toErase.push_back(op);
}

void KernelLowering::lowerIf(scf::IfOp op) {
  if (!hasTensorType(op.getResultTypes())) {
    // The edge copy of a versioned kernel, if elementwise, as one loop.
    bool versions = op->hasAttr(kVersionsAttrName);
    op->removeAttr(kVersionsAttrName);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        if (!(versions && &region == &op.getElseRegion() &&
              lowerFusedElementwise(block)))
          lowerBlock(block);
    return;
  }
  SmallVector<Value> targets;
  SmallVector<Type> scalarTypes;
  for (Value result : op.getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type) {
      targets.push_back(Value());
      scalarTypes.push_back(result.getType());
      continue;
    }
    Value buf = newBuffer(type);
    buffers[result] = buf;
    targets.push_back(buf);
  }
  yieldTargets[op.thenYield()] = targets;
  yieldTargets[op.elseYield()] = targets;
  lowerBlock(*op.thenBlock());
  lowerBlock(*op.elseBlock());

  OpBuilder b(op);
  auto newIf = scf::IfOp::create(b, op.getLoc(), scalarTypes, op.getCondition(),
                                 /*addThenBlock=*/false,
                                 /*addElseBlock=*/false);
  newIf->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  newIf.getThenRegion().takeBody(op.getThenRegion());
  newIf.getElseRegion().takeBody(op.getElseRegion());
  rebuildYield(newIf.thenYield());
  rebuildYield(newIf.elseYield());
  unsigned next = 0;
  for (auto [i, result] : llvm::enumerate(op.getResults()))
    if (!targets[i])
      result.replaceAllUsesWith(newIf.getResult(next++));
  toErase.push_back(op);
}
