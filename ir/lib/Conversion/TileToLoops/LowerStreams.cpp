//===- LowerStreams.cpp - streamed loads (tile.stream_*) ------------------===//
//
// Lowers the ops of tile-stream-loads. A ring (tile.stream_buffer) is a
// region of the scratch buffer that planScratch gives it; a slot keeps each
// thread's elements of the tile where that thread copies and reads them
// (ringSlotElements: chunk c of thread t at (c * T + t) * v), so a thread
// reads back only what it copied itself and no barrier is needed.
//
// On gpu a chunk of a layout with vector chunks within a row, from a tensor
// whose rows are aligned to the copy size, is copied by `cp.async` (16 bytes,
// `.cg`, or 4 or 8 bytes, `.ca`), whose `src-size` operand reads only the
// bytes within the tensor and zero-fills the rest: no branch per chunk, and
// an out-of-bounds chunk reads nothing (its address is clamped to the first
// element). tile.stream_commit and tile.stream_wait are
// `cp.async.commit_group` and `cp.async.wait_group`. Elsewhere (the cpu
// target, other layouts) a copy is a load and a store per element, done at
// once, and commit and wait emit nothing.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

namespace {

/// The tile type of a slot of `ring`.
RankedTensorType slotTypeOf(Value ring) {
  auto type = cast<MemRefType>(ring.getType());
  return RankedTensorType::get(type.getShape().drop_front(),
                               type.getElementType());
}

int64_t elementBytes(Type t) { return t.getIntOrFloatBitWidth() / 8; }

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

} // namespace

Value KernelLowering::ringView(OpBuilder &b, Location loc, Value ring) {
  auto type = cast<MemRefType>(ring.getType());
  RankedTensorType slot = slotTypeOf(ring);
  int64_t count = type.getShape().front() * ringSlotElements(opts, slot);
  auto it = scratch.privateOffset.find(ring.getDefiningOp());
  assert(it != scratch.privateOffset.end() && "ring without a scratch region");
  return getScratchView(b, loc, type.getElementType(), count, it->second);
}

Value KernelLowering::ringIndex(OpBuilder &b, Location loc, Value ring,
                                Value slot, Value k0, int64_t j) {
  RankedTensorType type = slotTypeOf(ring);
  Layout layout = getLayout(type);
  Value slotStart = b.createOrFold<arith::MulIOp>(
      loc, slot, cidx(b, loc, ringSlotElements(opts, type)));
  Value chunk = b.createOrFold<arith::MulIOp>(
      loc, k0, cidx(b, loc, layout.threads));
  Value thread = b.createOrFold<arith::MulIOp>(loc, getThreadId(),
                                               cidx(b, loc, layout.vec));
  Value index = b.createOrFold<arith::AddIOp>(
      loc, b.createOrFold<arith::AddIOp>(loc, slotStart, chunk), thread);
  return addConst(b, loc, index, j);
}

int64_t KernelLowering::asyncCopyBytes(Value source, const Layout &layout,
                                       RankedTensorType type) {
  if (!opts.gpu || layout.replicated)
    return 0;
  int64_t bytes = elementBytes(type.getElementType());
  int64_t chunk = layout.vec * bytes;
  if (type.getShape().back() < layout.vec || chunk < 4)
    return 0;
  auto memref = cast<MemRefType>(source.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(memref.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1)
    return 0;
  if (auto t = source.getDefiningOp<memref::TransposeOp>())
    source = t.getIn();
  auto arg = dyn_cast<BlockArgument>(source);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return 0;
  auto align = func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(),
                                                  kAlignAttrName);
  int64_t piece = std::min<int64_t>(chunk, 16);
  if (!align || align.getInt() < piece)
    return 0;
  return piece;
}

void KernelLowering::lowerStreamCopy(StreamCopyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ring = op.getRing(), src = op.getSource();
  RankedTensorType type = slotTypeOf(ring);
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  Layout layout = getLayout(type);
  SmallVector<Value> dims;
  SmallVector<Value> base = tileOrigin(b, loc, src, op.getIndices(), shape, dims);
  Value view = ringView(b, loc, ring);
  int64_t piece = asyncCopyBytes(src, layout, type);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, op.getValid(),
                                /*withElseRegion=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  if (piece == 0) {
    // Element by element, at once: the element, or zero outside the tensor.
    Value zero = paddingValue(tb, loc, elt, FloatAttr());
    forEachOwned(tb, loc, layout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k, Value l) {
                   SmallVector<Value> global = globalCoords(b, loc, base, l, shape);
                   auto in = scf::IfOp::create(b, loc, elt,
                                               inBounds(b, loc, global, dims),
                                               /*withElseRegion=*/true);
                   OpBuilder ib = in.getThenBodyBuilder();
                   scf::YieldOp::create(
                       ib, loc, ValueRange{memref::LoadOp::create(ib, loc, src, global)});
                   OpBuilder eb = in.getElseBodyBuilder();
                   scf::YieldOp::create(eb, loc, ValueRange{zero});
                   // k = c * v + j: chunk start c * v, element j.
                   Value j = b.createOrFold<arith::RemUIOp>(
                       loc, k, cidx(b, loc, layout.vec));
                   Value k0 = b.createOrFold<arith::SubIOp>(loc, k, j);
                   Value index = b.createOrFold<arith::AddIOp>(
                       loc, ringIndex(b, loc, ring, op.getSlot(), k0, 0), j);
                   memref::StoreOp::create(b, loc, in.getResult(0), view, index);
                 });
    return;
  }
  // cp.async per piece of each chunk.
  int64_t bytes = elementBytes(elt), perPiece = piece / bytes;
  auto meta = memref::ExtractStridedMetadataOp::create(tb, loc, src);
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(
      tb, loc, meta.getBaseBuffer());
  Value ringBase = memref::ExtractAlignedPointerAsIndexOp::create(tb, loc, view);
  Type i32 = tb.getI32Type();
  auto global = LLVM::LLVMPointerType::get(tb.getContext(), 1);
  auto shared = LLVM::LLVMPointerType::get(tb.getContext(), 3);
  auto generic = LLVM::LLVMPointerType::get(tb.getContext());
  forEachChunk(tb, loc, layout, /*needLinear=*/true,
               [&](OpBuilder &b, Value k0, Value l0) {
    SmallVector<Value> coords = globalCoords(b, loc, base, l0, shape);
    // The chunk's row is within the tensor (every dimension but the last).
    Value rowIn;
    for (size_t d = 0; d + 1 < coords.size(); ++d) {
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       coords[d], dims[d]);
      rowIn = rowIn ? arith::AndIOp::create(b, loc, rowIn, ok) : ok;
    }
    for (int64_t p = 0; p * piece < layout.vec * bytes; ++p) {
      SmallVector<Value> at(coords);
      at.back() = addConst(b, loc, coords.back(), p * perPiece);
      // Elements of the piece within the tensor: clamp(dim - column, 0, n).
      Value left = arith::SubIOp::create(b, loc, dims.back(), at.back());
      Value n = arith::MinSIOp::create(
          b, loc, arith::MaxSIOp::create(b, loc, left, cidx(b, loc, 0)),
          cidx(b, loc, perPiece));
      if (rowIn)
        n = arith::SelectOp::create(b, loc, rowIn, n, cidx(b, loc, 0));
      Value some = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, n,
                                         cidx(b, loc, 0));
      Value offset = meta.getOffset();
      for (auto [d, c] : llvm::enumerate(at)) {
        Value safe = arith::SelectOp::create(b, loc, some, c, cidx(b, loc, 0));
        offset = arith::AddIOp::create(
            b, loc, offset,
            arith::MulIOp::create(b, loc, safe, meta.getStrides()[d]));
      }
      Value address = arith::AddIOp::create(
          b, loc, aligned,
          arith::MulIOp::create(b, loc, offset, cidx(b, loc, bytes)));
      Value from = LLVM::AddrSpaceCastOp::create(
          b, loc, global,
          LLVM::IntToPtrOp::create(b, loc, generic, toI64(b, loc, address)));
      Value slotIndex = ringIndex(b, loc, ring, op.getSlot(), k0, p * perPiece);
      Value to = LLVM::IntToPtrOp::create(
          b, loc, shared,
          toI64(b, loc,
                arith::AddIOp::create(
                    b, loc, ringBase,
                    arith::MulIOp::create(b, loc, slotIndex, cidx(b, loc, bytes)))));
      Value srcBytes = arith::IndexCastOp::create(
          b, loc, i32, arith::MulIOp::create(b, loc, n, cidx(b, loc, bytes)));
      NVVM::CpAsyncOp::create(b, loc, to, from, static_cast<uint32_t>(piece),
                              piece == 16 ? NVVM::LoadCacheModifierKind::CG
                                          : NVVM::LoadCacheModifierKind::CA,
                              srcBytes);
    }
  });
}

void KernelLowering::lowerStreamTake(StreamTakeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ring = op.getRing();
  RankedTensorType type = op.getType();
  Type elt = type.getElementType();
  Layout layout = getLayout(type);
  Value view = ringView(b, loc, ring);
  Value dst = newBuffer(type);
  if (layout.replicated || layout.vec == 1) {
    forEachOwned(b, loc, layout, /*needLinear=*/false,
                 [&](OpBuilder &b, Value k, Value) {
                   Value index = ringIndex(b, loc, ring, op.getSlot(), k, 0);
                   memref::StoreOp::create(
                       b, loc, memref::LoadOp::create(b, loc, view, index), dst, k);
                 });
  } else {
    int64_t bytes = elementBytes(elt);
    auto vecType = VectorType::get({layout.vec}, elt);
    forEachChunk(b, loc, layout, /*needLinear=*/false,
                 [&](OpBuilder &b, Value k0, Value) {
                   Value index = ringIndex(b, loc, ring, op.getSlot(), k0, 0);
                   Value v = vector::LoadOp::create(
                       b, loc, vecType, view, index, /*nontemporal=*/false,
                       llvm::MaybeAlign(std::min<int64_t>(16, layout.vec * bytes)));
                   for (int64_t e = 0; e < layout.vec; ++e)
                     memref::StoreOp::create(
                         b, loc,
                         vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e}),
                         dst, addConst(b, loc, k0, e));
                 });
  }
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerStreamSync(Operation *op) {
  OpBuilder b(op);
  if (opts.gpu) {
    if (auto wait = dyn_cast<StreamWaitOp>(op))
      NVVM::CpAsyncWaitGroupOp::create(b, op->getLoc(),
                                       static_cast<int32_t>(wait.getPending()));
    else
      NVVM::CpAsyncCommitGroupOp::create(b, op->getLoc());
  }
}
