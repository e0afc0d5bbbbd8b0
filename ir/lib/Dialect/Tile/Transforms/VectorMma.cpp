//===- VectorMma.cpp - a K loop's one-row mma as multiply-adds -------------===//
//
// Implements `tile-vector-mma` (Transforms/Passes.td states what it
// guarantees). A one-row mma in a K loop (a batch-1 linear layer written as a
// matmul) reads a B tile per step and does 1 x BK x BN multiply-adds: it is
// bound by B's bytes. Lowered as an mma, each step exchanges A's row and the
// products among the program's threads through shared memory. Rewritten here
// as a BK x BN accumulator of element-wise products, each thread adds its own
// elements of B times the element of A its row needs (loaded by the thread
// itself: convert-tile-to-loops' broadcast loads), and the rows are summed
// once, after the loop. The accumulator is BK x BN f32: kMaxElements bounds
// it (the engine's matrix-vector products carry 16 x 512).
//
// When B is loaded from a view whose columns are contiguous (the transposed
// view of a row-major N x K weight, as linear layers store theirs), its rows
// in the tile are strided in memory; the accumulator is then BN x BK instead,
// B's tile is loaded as BN x BK from the transposed view (memref.transpose of
// the argument: contiguous rows), A's row is broadcast over its rows (the
// engine's matrix-vector form) and the sum is along the rows' length.
//
// The loop is changed in place: the iter_arg's initial value becomes a zero
// tile and its block argument and result take the wider type; the mma
// becomes the multiply-add, and the loop's result is replaced, for its other
// users, by its reduction plus the initial accumulator.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#define DEBUG_TYPE "tile-vector-mma"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILEVECTORMMA
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
namespace tt = mlir::tessera::tile;

namespace {

constexpr int64_t kMaxElements = 16384;

/// The iter_arg number of `mma`'s accumulator if the mma qualifies (see the
/// pass description), else nullopt.
std::optional<unsigned> vectorMmaSlot(tt::MmaOp mma) {
  auto loop = dyn_cast<scf::ForOp>(mma->getParentOp());
  RankedTensorType a = mma.getA().getType(), b = mma.getB().getType();
  if (!loop || a.getDimSize(0) != 1 || b.getNumElements() > kMaxElements)
    return std::nullopt;
  auto acc = dyn_cast<BlockArgument>(mma.getAcc());
  if (!acc || acc.getOwner() != loop.getBody() || acc.getArgNumber() == 0 ||
      !acc.hasOneUse() || !mma.getResult().hasOneUse())
    return std::nullopt;
  unsigned slot = acc.getArgNumber() - 1;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (*mma.getResult().getUsers().begin() != yield.getOperation() ||
      yield.getOperand(slot) != mma.getResult())
    return std::nullopt;
  return slot;
}

/// `v` (a tile) as f32.
Value toF32(OpBuilder &b, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getElementType().isF32())
    return v;
  return arith::ExtFOp::create(b, loc, type.clone(b.getF32Type()), v);
}

/// B's load if B is a tile loaded from a kernel argument whose columns are
/// contiguous (strides [1, s]: the transposed view of a row-major N x K
/// weight), used by the mma alone; else null.
tt::LoadOp columnMajorB(tt::MmaOp mma) {
  auto load = mma.getB().getDefiningOp<tt::LoadOp>();
  if (!load || !mma.getB().hasOneUse() || load->getBlock() != mma->getBlock())
    return {};
  auto type = cast<MemRefType>(load.getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (type.getRank() != 2 || failed(type.getStridesAndOffset(strides, offset)) ||
      strides[0] != 1 || strides[1] == 1 ||
      !tt::isKernelArgument(mma->getParentOfType<func::FuncOp>(), load.getSource()))
    return {};
  return load;
}

/// Makes the loop around `mma` carry a `wide` f32 tile starting at zero, to
/// which each step adds `spread * operand` (tiles of `wide`'s shape, built
/// at the mma) in place of the mma; after the loop, `sum` turns the carried
/// tile into the 1 x BN product, which plus the initial accumulator replaces
/// the loop's result for its users.
void carryProducts(tt::MmaOp mma, unsigned slot, Value spread, Value operand,
                   function_ref<Value(OpBuilder &, Value)> sum) {
  auto loop = cast<scf::ForOp>(mma->getParentOp());
  Location loc = mma.getLoc();
  OpBuilder body(mma);
  Value spreadF32 = toF32(body, loc, spread);
  Value operandF32 = toF32(body, loc, operand);
  Value product = arith::MulFOp::create(body, loc, spreadF32, operandF32);
  auto wide = cast<RankedTensorType>(product.getType());

  OpBuilder before(loop);
  Value init = loop.getInitArgs()[slot];
  Value zero = arith::ConstantOp::create(
      before, loc, DenseElementsAttr::get(wide, before.getF32FloatAttr(0.0)));
  loop.getInitArgsMutable()[slot].assign(zero);
  BlockArgument acc = loop.getRegionIterArgs()[slot];
  acc.setType(wide);
  mma.getResult().replaceAllUsesWith(
      arith::AddFOp::create(body, loc, acc, product).getResult());
  mma->erase();

  Value result = loop.getResult(slot);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  result.setType(wide);
  OpBuilder after(loop->getBlock(), std::next(loop->getIterator()));
  Value total = arith::AddFOp::create(after, loc, init, sum(after, result));
  for (OpOperand *use : uses)
    use->set(total);
}

void rewrite(tt::MmaOp mma, unsigned slot) {
  Location loc = mma.getLoc();
  RankedTensorType b = mma.getB().getType(), a = mma.getA().getType();
  int64_t bk = b.getDimSize(0), bn = b.getDimSize(1);
  Type f32 = OpBuilder(mma).getF32Type();
  OpBuilder body(mma);
  if (tt::LoadOp bLoad = columnMajorB(mma)) {
    // The K-major form: B's tile loaded as BN x BK from the transposed view
    // of its argument (rows contiguous in memory), A's row broadcast over its
    // rows, the sum along its rows.
    auto fn = mma->getParentOfType<func::FuncOp>();
    OpBuilder entry(&fn.getBody().front(), fn.getBody().front().begin());
    auto permutation = AffineMapAttr::get(
        AffineMap::getPermutationMap(ArrayRef<unsigned>{1, 0}, fn.getContext()));
    Value rows = memref::TransposeOp::create(entry, loc, bLoad.getSource(),
                                             permutation);
    SmallVector<Value> indices{bLoad.getIndices()[1], bLoad.getIndices()[0]};
    Value bt = tt::LoadOp::create(
        body, loc, RankedTensorType::get({bn, bk}, b.getElementType()), rows,
        indices, bLoad.getPaddingAttr());
    Value spread = tt::BroadcastOp::create(
        body, loc, RankedTensorType::get({bn, bk}, a.getElementType()),
        mma.getA());
    carryProducts(mma, slot, spread, bt, [&](OpBuilder &after, Value carried) {
      Value reduced = tt::ReduceOp::create(
          after, loc, RankedTensorType::get({bn, 1}, f32), carried,
          tt::ReduceKind::sum, uint32_t{1});
      return tt::ReshapeOp::create(
          after, loc, RankedTensorType::get({1, bn}, f32), reduced);
    });
    bLoad->erase();
    return;
  }
  // A's row as a column, broadcast along B's columns; the sum along B's rows.
  Value column = tt::ReshapeOp::create(
      body, loc, RankedTensorType::get({bk, 1}, a.getElementType()), mma.getA());
  Value spread = tt::BroadcastOp::create(
      body, loc, RankedTensorType::get({bk, bn}, a.getElementType()), column);
  carryProducts(mma, slot, spread, mma.getB(), [&](OpBuilder &after, Value carried) {
    return tt::ReduceOp::create(after, loc, RankedTensorType::get({1, bn}, f32),
                                carried, tt::ReduceKind::sum, uint32_t{0});
  });
}

struct TileVectorMma : public tt::impl::TileVectorMmaBase<TileVectorMma> {
  void runOnOperation() override {
    WalkResult r = getOperation()->walk([&](func::FuncOp fn) {
      if (!fn->hasAttr(tt::TileDialect::getKernelAttrName()))
        return WalkResult::advance();
      if (!tt::checkNotLowered(fn, getArgument()))
        return WalkResult::interrupt();
      SmallVector<std::pair<tt::MmaOp, unsigned>> found;
      fn.walk([&](tt::MmaOp mma) {
        if (std::optional<unsigned> slot = vectorMmaSlot(mma))
          found.push_back({mma, *slot});
      });
      for (auto [mma, slot] : found)
        rewrite(mma, slot);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
