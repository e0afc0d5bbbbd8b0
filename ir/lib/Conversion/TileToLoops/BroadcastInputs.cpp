//===- BroadcastInputs.cpp - broadcast loads rather than what they feed ---===//
//
// On gpu, a tile.broadcast whose elements live in other threads than its
// input's goes through the scratch buffer between two barriers. When its input
// is a small element-wise computation on loaded tiles and single elements --
// a matrix-vector product's normalized vector chunk, x * inv_rms * g,
// broadcast over the weight tile's rows -- the computation is instead done in
// the broadcast's shape: its loads are broadcast (each thread then loads what
// it needs itself, see planBroadcastLoad), its single elements are splatted
// (in registers), and each thread computes its own elements. The work of the
// element-wise ops grows by the broadcast's factor; memory traffic does not
// (the repeated loads are served by the caches), and the barriers go.
//
// Applied only where it removes a scratch broadcast: the broadcast has no
// local plan and no load plan of its own, its input's innermost dimension is
// kept (so each leaf's broadcast has a load plan), and the computation has at
// most kMaxOps ops, each used only by the next, in the broadcast's block,
// whose leaves are loads of read-only kernel arguments in that block (or
// takes of a bulk ring's slot, see tile-stream-loads),
// single-element tiles (or broadcasts of one), splats and splat constants. A
// leaf load that has other users too (a fused norm sums the squares of the
// chunk it normalizes) is loaded once more for the broadcast: a second read of
// the same bytes, from cache, costs less than the barriers.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

namespace {

constexpr size_t kMaxOps = 8;

bool isElementwise(Operation *op) {
  StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
  if ((ns != "arith" && ns != "math") || isa<arith::ConstantOp>(op) ||
      op->getNumRegions() != 0 || op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return type && llvm::all_of(op->getOperandTypes(), [&](Type t) {
           auto operand = dyn_cast<RankedTensorType>(t);
           return operand && operand.getShape() == type.getShape();
         });
}

/// The single element a leaf stands for (a one-element tile, or the input of
/// a broadcast of one), if it is such a leaf.
Value singleElement(Value v) {
  if (cast<RankedTensorType>(v.getType()).getNumElements() == 1)
    return v;
  if (auto b = v.getDefiningOp<BroadcastOp>();
      b && b.getInput().getType().getNumElements() == 1)
    return b.getInput();
  return {};
}

class Pusher {
public:
  Pusher(func::FuncOp func, BroadcastOp bc) : func(func), bc(bc) {}

  /// Rewrites the broadcast if it qualifies; true if it did.
  bool run() {
    Value v = bc.getInput();
    while (auto r = v.getDefiningOp<ReshapeOp>()) {
      if (!v.hasOneUse())
        return false;
      reshapes.push_back(r);
      v = r.getInput();
    }
    Operation *root = v.getDefiningOp();
    // The leaves' broadcasts need the innermost dimension kept (a load plan).
    if (cast<RankedTensorType>(v.getType()).getShape().back() !=
        bc.getInput().getType().getShape().back())
      return false;
    if (!root || !v.hasOneUse() || !isElementwise(root) ||
        root->getBlock() != bc->getBlock() || !collect(v))
      return false;
    rebuild(root);
    return true;
  }

private:
  bool isReadOnlyLoad(Value v) {
    // A take of a bulk ring: its row-major slot is read in any layout.
    if (auto take = v.getDefiningOp<StreamTakeOp>()) {
      auto ring = take.getRing().getDefiningOp<StreamBufferOp>();
      return ring && ring.getBulk() && take->getBlock() == bc->getBlock();
    }
    auto load = v.getDefiningOp<LoadOp>();
    if (!load || load->getBlock() != bc->getBlock() ||
        !isKernelArgument(func, load.getSource()))
      return false;
    return !func
                .walk([&](StoreOp s) {
                  return s.getDest() == load.getSource()
                             ? WalkResult::interrupt()
                             : WalkResult::advance();
                })
                .wasInterrupted();
  }

  /// Adds the computation of `v` to `nodes` (operands first); false if a
  /// value on the way is not an allowed leaf or op.
  bool collect(Value v) {
    if (singleElement(v) || v.getDefiningOp<SplatOp>() || isReadOnlyLoad(v))
      return true;
    if (auto cst = v.getDefiningOp<arith::ConstantOp>())
      return isa<SplatElementsAttr>(cst.getValue());
    Operation *op = v.getDefiningOp();
    if (!op || !isElementwise(op) || !v.hasOneUse() ||
        op->getBlock() != bc->getBlock() || nodes.size() >= kMaxOps)
      return false;
    for (Value operand : op->getOperands())
      if (!collect(operand))
        return false;
    nodes.insert(op);
    return true;
  }

  /// The value of leaf `v` in the broadcast's shape.
  Value broadcastLeaf(OpBuilder &b, Value v) {
    Location loc = bc.getLoc();
    RankedTensorType out = bc.getType();
    auto typed = [&](ArrayRef<int64_t> shape, Value of) {
      return RankedTensorType::get(
          shape, cast<RankedTensorType>(of.getType()).getElementType());
    };
    if (Value one = singleElement(v)) {
      SmallVector<int64_t> ones(out.getRank(), 1);
      Value r = one;
      if (cast<RankedTensorType>(one.getType()).getShape() != ArrayRef(ones))
        r = ReshapeOp::create(b, loc, typed(ones, one), one);
      return BroadcastOp::create(b, loc, typed(out.getShape(), one), r);
    }
    if (auto splat = v.getDefiningOp<SplatOp>())
      return SplatOp::create(b, loc, typed(out.getShape(), v),
                             splat.getInput());
    if (auto cst = v.getDefiningOp<arith::ConstantOp>()) {
      auto attr = cast<SplatElementsAttr>(cst.getValue());
      return arith::ConstantOp::create(
          b, loc,
          SplatElementsAttr::get(typed(out.getShape(), v),
                                 attr.getSplatValue<Attribute>()));
    }
    // A load: reshaped as the broadcast's input was, then broadcast. A load
    // with other users stays for them, and the broadcast gets its own copy
    // (a load plan needs a load used by the broadcast alone).
    if (!v.hasOneUse())
      v = b.clone(*v.getDefiningOp())->getResult(0);
    Value r = ReshapeOp::create(
        b, loc, typed(bc.getInput().getType().getShape(), v), v);
    return BroadcastOp::create(b, loc, typed(out.getShape(), v), r);
  }

  void rebuild(Operation *root) {
    OpBuilder b(bc);
    IRMapping map;
    for (Operation *op : nodes) {
      for (Value operand : op->getOperands())
        if (!map.contains(operand) &&
            !nodes.contains(operand.getDefiningOp()))
          map.map(operand, broadcastLeaf(b, operand));
      OperationState state(op->getLoc(), op->getName());
      for (Value operand : op->getOperands())
        state.addOperands(map.lookup(operand));
      state.addAttributes(op->getAttrs());
      state.addTypes(RankedTensorType::get(
          bc.getType().getShape(),
          cast<RankedTensorType>(op->getResult(0).getType())
              .getElementType()));
      map.map(op->getResult(0), b.create(state)->getResult(0));
    }
    bc.getResult().replaceAllUsesWith(map.lookup(root->getResult(0)));
    bc->erase();
    for (ReshapeOp r : reshapes)
      r->erase();
    // The old computation, users first; its leaves' producers if now unused.
    SmallVector<Operation *> leaves;
    for (Operation *op : llvm::reverse(nodes)) {
      for (Value operand : op->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && !nodes.contains(def))
          leaves.push_back(def);
      op->erase();
    }
    for (Operation *def : leaves)
      if (def->use_empty() && isPure(def))
        def->erase();
  }

  func::FuncOp func;
  BroadcastOp bc;
  SmallVector<ReshapeOp> reshapes;
  llvm::SetVector<Operation *> nodes;
};

} // namespace

void mlir::tessera::tile::broadcastElementwiseInputs(
    func::FuncOp func, const LoweringOptions &opts) {
  if (!opts.gpu)
    return;
  SmallVector<BroadcastOp> candidates;
  func.walk([&](BroadcastOp bc) {
    RankedTensorType in = bc.getInput().getType(), out = bc.getType();
    if (in.getShape().back() == out.getShape().back() &&
        !getLayout(opts, out).replicated && !planLocalBroadcast(opts, bc) &&
        !planBroadcastLoad(opts, bc))
      candidates.push_back(bc);
  });
  for (BroadcastOp bc : candidates)
    Pusher(func, bc).run();
}
