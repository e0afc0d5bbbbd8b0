//===- LowerControlFlow.cpp - scf.for/scf.if carrying tiles -------------===//
//
// Lowers scf.for and scf.if that carry tiles: carried tiles and results get
// private buffers, yields copy into them, and the ops are rebuilt with only
// their scalar iter_args and results.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

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

void KernelLowering::lowerFor(scf::ForOp op) {
  if (!hasTensorType(op.getResultTypes())) {
    lowerBlock(*op.getBody());
    return;
  }
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
