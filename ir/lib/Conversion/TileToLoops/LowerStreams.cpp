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
// A bulk ring (`tile.stream_buffer bulk`, sm_90 and later) keeps each slot's
// tile in row-major order and has a full and an empty mbarrier per slot
// (planScratch gives them a region of their own). Thread 0 initializes them
// before the loop. A copy is, when the tile lies in the tensor, warp 0's
// wait for the slot's release (round r > 0 waits for round r - 1's), thread
// 0's arrival expecting the tile's bytes on the full barrier, and one
// cp.async.bulk per row, lane r copying rows r, r + 32, ..., completing on
// it: one request per row instead of one per 16 bytes and thread, and no
// register holds the bytes in flight. (Every row starts on a 16-byte
// boundary: tile-stream-loads streams only sources with tile.align >= 16
// and rows of a multiple of 16 bytes.) A copy marked tile.interior (whole
// tiles) is only that; otherwise, for a ragged tile, every thread stores its
// elements (zero outside the tensor) between two barriers, fences them for
// the async proxy (later bulk copies overwrite the slot) and thread 0
// arrives on the full barrier. `tile.stream_ready` waits for the
// full barrier's phase of the round; `tile.stream_release` is one arrival per
// warp on the empty barrier once the warp's reads are done (bar.warp.sync).
// A take reads the thread's elements from the slot, a broadcast of a take
// reads them in the broadcast's layout. Where a CTA is not one program (split
// or shared CTAs), not whole warps, or on the cpu target, copies always take
// the element path and ready and release emit nothing: the copy's barriers
// order the slot's writes and reads.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"
#include "../Utils/HopperPtx.h"
#include "tessera/LLVMIR/Transforms/Passes.h"

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

bool isBulk(Value ring) {
  auto buffer = ring.getDefiningOp<StreamBufferOp>();
  return buffer && buffer.getBulk();
}

/// Elements of one slot of `ring` in its scratch region.
int64_t slotElements(const LoweringOptions &opts, Value ring) {
  RankedTensorType type = slotTypeOf(ring);
  return isBulk(ring) ? type.getNumElements() : ringSlotElements(opts, type);
}

Value toI32(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
}

/// The element of `src` at `global` if `inside`, else `zero` (a branch: an
/// element outside the tensor is never read).
Value elementOrZero(OpBuilder &b, Location loc, Value src,
                    ArrayRef<Value> global, Value inside, Value zero) {
  auto in = scf::IfOp::create(b, loc, zero.getType(), inside,
                              /*withElseRegion=*/true);
  OpBuilder ib = in.getThenBodyBuilder();
  scf::YieldOp::create(ib, loc,
                       ValueRange{memref::LoadOp::create(ib, loc, src, global)});
  OpBuilder eb = in.getElseBodyBuilder();
  scf::YieldOp::create(eb, loc, ValueRange{zero});
  return in.getResult(0);
}

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

/// Where slot `slot` of the bulk ring `ring` starts in its scratch view, in
/// elements (its tile is row-major there).
Value bulkSlotStart(OpBuilder &b, Location loc, Value ring, Value slot) {
  return b.createOrFold<arith::MulIOp>(
      loc, slot,
      arith::ConstantIndexOp::create(b, loc, slotTypeOf(ring).getNumElements()));
}

} // namespace

Value KernelLowering::ringView(OpBuilder &b, Location loc, Value ring) {
  auto type = cast<MemRefType>(ring.getType());
  int64_t count = type.getShape().front() * slotElements(opts, ring);
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

Value KernelLowering::ringBarrier(OpBuilder &b, Location loc, Value ring,
                                  Value slot, int64_t which) {
  auto it = scratch.ringBarrierOffset.find(ring.getDefiningOp());
  assert(it != scratch.ringBarrierOffset.end() && "bulk ring without barriers");
  int64_t slots = cast<MemRefType>(ring.getType()).getShape().front();
  Value view = getScratchView(b, loc, b.getI64Type(), 2 * slots, it->second);
  Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, view);
  Value at = b.createOrFold<arith::MulIOp>(loc, slot, cidx(b, loc, 16));
  return toI32(b, loc,
               b.createOrFold<arith::AddIOp>(loc, base,
                                             addConst(b, loc, at, 8 * which)));
}

void KernelLowering::lowerStreamBuffer(StreamBufferOp op) {
  if (!op.getBulk() || !asyncBulk())
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ring = op.getRing();
  int64_t slots = cast<MemRefType>(ring.getType()).getShape().front();
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                      getThreadId(), cidx(b, loc, 0));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first,
                                /*withElseRegion=*/false);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  HopperPtx ptx(tb, loc);
  int64_t warps = std::max<int64_t>(1, opts.ctaThreads() / kWarpSize);
  for (int64_t s = 0; s < slots; ++s) {
    ptx.mbarrierInit(ringBarrier(tb, loc, ring, cidx(tb, loc, s), 0), 1);
    ptx.mbarrierInit(ringBarrier(tb, loc, ring, cidx(tb, loc, s), 1), warps);
  }
  ptx.fenceMbarrierInit();
  barrier(b, loc);
}

void KernelLowering::emitBulkRows(OpBuilder &b, Location loc, StreamCopyOp op,
                                  ArrayRef<Value> base, Value view,
                                  Value slotStart) {
  Value ring = op.getRing();
  RankedTensorType type = slotTypeOf(ring);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t bytes = elementBytes(type.getElementType());
  int64_t rowBytes = shape.back() * bytes;
  int64_t rows = type.getNumElements() / shape.back();
  // Warp 0 copies, lane r the rows r, r + 32, ...: each lane computes one
  // row's address, where one thread copying every row keeps each row's
  // offset in a register of every thread through the loop.
  int64_t lanes = std::min<int64_t>(kWarpSize, rows);
  Value tid = getThreadId();
  auto inWarp = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                            cidx(b, loc, kWarpSize)),
      /*withElseRegion=*/false);
  OpBuilder wb = inWarp.getThenBodyBuilder();
  Value full = ringBarrier(wb, loc, ring, op.getSlot(), 0);
  Value round = op.getRound();
  auto again = scf::IfOp::create(
      wb, loc, TypeRange{},
      arith::CmpIOp::create(wb, loc, arith::CmpIPredicate::ne, round,
                            cidx(wb, loc, 0)),
      /*withElseRegion=*/false);
  {
    OpBuilder ab = again.getThenBodyBuilder();
    // Round r - 1's phase of the empty barrier: parity (r - 1) mod 2.
    Value parity = toI32(
        ab, loc,
        arith::AndIOp::create(
            ab, loc, arith::SubIOp::create(ab, loc, round, cidx(ab, loc, 1)),
            cidx(ab, loc, 1)));
    HopperPtx(ab, loc).mbarrierWait(ringBarrier(ab, loc, ring, op.getSlot(), 1),
                                    parity);
  }
  auto first = scf::IfOp::create(
      wb, loc, TypeRange{},
      arith::CmpIOp::create(wb, loc, arith::CmpIPredicate::eq, tid,
                            cidx(wb, loc, 0)),
      /*withElseRegion=*/false);
  {
    OpBuilder tb = first.getThenBodyBuilder();
    HopperPtx(tb, loc).mbarrierArriveExpectTx(full, rows * rowBytes);
  }
  // The arrival that expects the bytes before any copy completes them.
  HopperPtx(wb, loc).warpSync();
  auto meta = memref::ExtractStridedMetadataOp::create(wb, loc, op.getSource());
  Value aligned = memref::ExtractAlignedPointerAsIndexOp::create(
      wb, loc, meta.getBaseBuffer());
  Value ringBase = memref::ExtractAlignedPointerAsIndexOp::create(wb, loc, view);
  auto loop = scf::ForOp::create(wb, loc, tid, cidx(wb, loc, rows),
                                 cidx(wb, loc, lanes));
  OpBuilder lb = OpBuilder::atBlockBegin(loop.getBody());
  Value r = loop.getInductionVar();
  // Row r's coordinates: r over the leading dimensions, column 0.
  SmallVector<Value> coords = delinearize(
      lb, loc, arith::MulIOp::create(lb, loc, r, cidx(lb, loc, shape.back())),
      shape);
  Value offset = meta.getOffset();
  for (auto [d, c] : llvm::enumerate(coords))
    offset = arith::AddIOp::create(
        lb, loc, offset,
        arith::MulIOp::create(lb, loc, arith::AddIOp::create(lb, loc, base[d], c),
                              meta.getStrides()[d]));
  Value from = arith::AddIOp::create(
      lb, loc, aligned, arith::MulIOp::create(lb, loc, offset, cidx(lb, loc, bytes)));
  Value to = arith::AddIOp::create(
      lb, loc, ringBase,
      arith::MulIOp::create(
          lb, loc,
          arith::AddIOp::create(
              lb, loc, slotStart,
              arith::MulIOp::create(lb, loc, r, cidx(lb, loc, shape.back()))),
          cidx(lb, loc, bytes)));
  HopperPtx(lb, loc).bulkCopy(toI32(lb, loc, to), toI64(lb, loc, from),
                              arith::ConstantIntOp::create(lb, loc, rowBytes, 32),
                              full);
}

void KernelLowering::lowerBulkCopy(OpBuilder &b, StreamCopyOp op,
                                   ArrayRef<Value> base, ArrayRef<Value> dims,
                                   Value view) {
  Location loc = op.getLoc();
  Value ring = op.getRing(), src = op.getSource();
  RankedTensorType type = slotTypeOf(ring);
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  Value slotStart = bulkSlotStart(b, loc, ring, op.getSlot());
  auto valid = scf::IfOp::create(b, loc, TypeRange{}, op.getValid(),
                                 /*withElseRegion=*/false);
  OpBuilder vb = valid.getThenBodyBuilder();
  // Every row of the tile starts on a 16-byte boundary: tile-stream-loads
  // streams into bulk rings only sources with tile.align >= 16 (element 0
  // and every row stride) and rows of a multiple of 16 bytes. So the bulk
  // path needs only the tile in the tensor, which a copy marked
  // tile.interior (the launcher's promise of whole tiles) need not test: its
  // copy has no element path, whose registers the loop would otherwise keep.
  const bool interior = op->hasAttr(kInteriorAttrName);
  if (asyncBulk() && interior) {
    emitBulkRows(vb, loc, op, base, view, slotStart);
    return;
  }
  Value fast = asyncBulk() ? tileInBounds(vb, loc, base, dims, shape)
                           : arith::ConstantIntOp::create(vb, loc, 0, 1);
  auto path = scf::IfOp::create(vb, loc, TypeRange{}, fast,
                                /*withElseRegion=*/true);
  {
    OpBuilder fb = path.getThenBodyBuilder();
    emitBulkRows(fb, loc, op, base, view, slotStart);
  }
  // Element by element, every thread, between barriers.
  {
    OpBuilder eb = path.getElseBodyBuilder();
    barrier(eb, loc);
    Value zero = paddingValue(eb, loc, elt, FloatAttr());
    forEachOwned(eb, loc, getLayout(type), /*needLinear=*/true,
                 [&](OpBuilder &b, Value, Value l) {
                   SmallVector<Value> global = globalCoords(b, loc, base, l, shape);
                   Value v = elementOrZero(b, loc, src, global,
                                           inBounds(b, loc, global, dims), zero);
                   memref::StoreOp::create(
                       b, loc, v, view,
                       b.createOrFold<arith::AddIOp>(loc, slotStart, l));
                 },
                 // A loop: the rare ragged copy should not take registers
                 // from the fast path.
                 /*rolled=*/true);
    if (asyncBulk())
      HopperPtx(eb, loc).fenceProxyAsyncShared();
    barrier(eb, loc);
    if (asyncBulk()) {
      Value first = arith::CmpIOp::create(eb, loc, arith::CmpIPredicate::eq,
                                          getThreadId(), cidx(eb, loc, 0));
      auto one = scf::IfOp::create(eb, loc, TypeRange{}, first,
                                   /*withElseRegion=*/false);
      OpBuilder tb = one.getThenBodyBuilder();
      HopperPtx(tb, loc).mbarrierArrive(
          ringBarrier(tb, loc, ring, op.getSlot(), 0));
    }
  }
}

void KernelLowering::lowerStreamReady(StreamReadyOp op) {
  if (!asyncBulk())
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value parity = toI32(
      b, loc, arith::AndIOp::create(b, loc, op.getRound(), cidx(b, loc, 1)));
  HopperPtx(b, loc).mbarrierWait(ringBarrier(b, loc, op.getRing(), op.getSlot(), 0),
                                 parity);
}

void KernelLowering::lowerGridDependencyWait(GridDependencyWaitOp op) {
  if (!opts.gpu)
    return;
  OpBuilder b(op);
  LLVM::InlineAsmOp::create(
      b, op.getLoc(), TypeRange(), ValueRange(), llvmir::kGridDependencyWaitAsm,
      "~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
      ArrayAttr());
}

void KernelLowering::lowerStreamRelease(StreamReleaseOp op) {
  if (!asyncBulk())
    return;
  OpBuilder b(op);
  Location loc = op.getLoc();
  HopperPtx(b, loc).warpSync();
  Value lane = arith::RemUIOp::create(b, loc, getThreadId(),
                                      cidx(b, loc, kWarpSize));
  auto one = scf::IfOp::create(
      b, loc, TypeRange{},
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            cidx(b, loc, 0)),
      /*withElseRegion=*/false);
  OpBuilder tb = one.getThenBodyBuilder();
  HopperPtx(tb, loc).mbarrierArrive(
      ringBarrier(tb, loc, op.getRing(), op.getSlot(), 1));
}

void KernelLowering::lowerBroadcastTake(BroadcastOp op, StreamTakeOp take) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), inType = op.getInput().getType();
  Type elt = type.getElementType();
  Layout layout = getLayout(type);
  Value ring = take.getRing();
  Value view = ringView(b, loc, ring);
  Value slotStart = bulkSlotStart(b, loc, ring, take.getSlot());
  Value dst = newBuffer(type);
  // The slot index of result element l: its coordinates with the broadcast
  // dimensions set to 0, linear in the input's shape (reshapes keep the
  // row-major order, so it is the take's too).
  auto sourceIndex = [&](OpBuilder &b, Value l) {
    SmallVector<Value> coords = delinearize(b, loc, l, type.getShape());
    for (auto [d, size] : llvm::enumerate(inType.getShape()))
      if (size == 1)
        coords[d] = cidx(b, loc, 0);
    return b.createOrFold<arith::AddIOp>(
        loc, slotStart, linearize(b, loc, coords, inType.getShape()));
  };
  const bool acrossRows = inType.getShape().back() == 1;
  int64_t width = std::min(layout.vec, type.getShape().back());
  if (layout.replicated || type.getShape().back() % width != 0) {
    forEachOwned(b, loc, layout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k, Value l) {
                   memref::StoreOp::create(
                       b, loc,
                       memref::LoadOp::create(b, loc, view, sourceIndex(b, l)),
                       dst, k);
                 });
    buffers[op.getResult()] = dst;
    return;
  }
  int64_t bytes = elementBytes(elt);
  auto vecType = VectorType::get({width}, elt);
  forEachChunk(b, loc, layout, /*needLinear=*/true,
               [&](OpBuilder &b, Value k0, Value l0) {
                 for (int64_t i = 0; i < layout.vec; i += width) {
                   Value k = addConst(b, loc, k0, i);
                   Value at = sourceIndex(b, addConst(b, loc, l0, i));
                   if (acrossRows) {
                     Value v = memref::LoadOp::create(b, loc, view, at);
                     for (int64_t e = 0; e < width; ++e)
                       memref::StoreOp::create(b, loc, v, dst,
                                               addConst(b, loc, k, e));
                     continue;
                   }
                   Value v = vector::LoadOp::create(
                       b, loc, vecType, view, at, /*nontemporal=*/false,
                       llvm::MaybeAlign(std::min<int64_t>(16, width * bytes)));
                   for (int64_t e = 0; e < width; ++e)
                     memref::StoreOp::create(
                         b, loc,
                         vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{e}),
                         dst, addConst(b, loc, k, e));
                 }
               });
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerStreamCopy(StreamCopyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ring = op.getRing(), src = op.getSource();
  RankedTensorType type = slotTypeOf(ring);
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<Value> dims;
  SmallVector<Value> base = tileOrigin(b, loc, src, op.getIndices(), shape, dims);
  Value view = ringView(b, loc, ring);
  if (isBulk(ring))
    return lowerBulkCopy(b, op, base, dims, view);
  Layout layout = getLayout(type);
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
                   Value v = elementOrZero(b, loc, src, global,
                                           inBounds(b, loc, global, dims), zero);
                   // k = c * v + j: chunk start c * v, element j.
                   Value j = b.createOrFold<arith::RemUIOp>(
                       loc, k, cidx(b, loc, layout.vec));
                   Value k0 = b.createOrFold<arith::SubIOp>(loc, k, j);
                   Value index = b.createOrFold<arith::AddIOp>(
                       loc, ringIndex(b, loc, ring, op.getSlot(), k0, 0), j);
                   memref::StoreOp::create(b, loc, v, view, index);
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
  // Where the thread's element k (linear index l) is in the ring: in a bulk ring's row-major slot
  // at the slot's start + l; in a per-thread ring where the thread copied it.
  const bool bulk = isBulk(ring);
  Value slotStart = bulk ? bulkSlotStart(b, loc, ring, op.getSlot()) : Value();
  auto at = [&](OpBuilder &b, Value k, Value l) {
    return bulk ? b.createOrFold<arith::AddIOp>(loc, slotStart, l)
                : ringIndex(b, loc, ring, op.getSlot(), k, 0);
  };
  if (layout.replicated || layout.vec == 1) {
    forEachOwned(b, loc, layout, /*needLinear=*/bulk,
                 [&](OpBuilder &b, Value k, Value l) {
                   memref::StoreOp::create(
                       b, loc, memref::LoadOp::create(b, loc, view, at(b, k, l)), dst, k);
                 });
  } else {
    int64_t bytes = elementBytes(elt);
    auto vecType = VectorType::get({layout.vec}, elt);
    forEachChunk(b, loc, layout, /*needLinear=*/bulk,
                 [&](OpBuilder &b, Value k0, Value l0) {
                   Value v = vector::LoadOp::create(
                       b, loc, vecType, view, at(b, k0, l0), /*nontemporal=*/false,
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
