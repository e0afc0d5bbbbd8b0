//===- LowerLoadStore.cpp - tile.load and tile.store --------------------===//
//
// Lowers tile.load and tile.store to bounds-checked accesses of the global
// memref. A tile wholly in bounds (one uniform test per program) is accessed
// without further checks, so all of a thread's accesses can be in flight
// together: as `vector.load`/`vector.store` of up to `vector-bytes` when the
// memref has a static unit inner stride and its argument carries `tile.align`
// (so every access is aligned to its size), else as scalars. A ragged tile
// (on the tensor's edges) is accessed element by element: a load reads index
// 0 for an element out of bounds and selects the padding value instead (no
// branch; a tensor with an empty dimension gives all padding), a store is
// skipped under an scf.if. That path is cold, and unrolled it would be most of
// the kernel's code: when the thread's elements are unrolled (its private
// buffers live in registers) it runs instead as a loop over chunks on a staged
// copy of the buffer (in local memory), copied in or out with constant
// indices. Replicated tiles (fewer elements than threads) and chunks of
// one element always take the per-element path.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

int64_t KernelLowering::vectorAccessWidth(Value memref, int64_t segment) {
  auto type = cast<MemRefType>(memref.getType());
  Type elt = type.getElementType();
  if (elt.isInteger(1)) // i1 is not stored as packed bits: keep it scalar
    return 1;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return 1;
  // A transposed view of an argument (tile-vector-mma reads a K-major B
  // through one) is as aligned as the argument: its rows are the argument's
  // columns.
  if (auto t = memref.getDefiningOp<memref::TransposeOp>())
    memref = t.getIn();
  auto arg = dyn_cast<BlockArgument>(memref);
  if (!arg || arg.getOwner() != &func.getBody().front())
    return 1;
  auto align =
      func.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kAlignAttrName);
  if (!align)
    return 1;
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  int64_t width =
      std::min({segment, opts.vectorBytes / bytes, align.getInt() / bytes});
  return width >= 2 ? width : 1;
}

SmallVector<Value> KernelLowering::globalCoords(OpBuilder &b, Location loc,
                                                ArrayRef<Value> base,
                                                Value linear,
                                                ArrayRef<int64_t> shape) {
  SmallVector<Value> global;
  for (auto [d, c] : llvm::enumerate(delinearize(b, loc, linear, shape)))
    global.push_back(b.createOrFold<arith::AddIOp>(loc, base[d], c));
  return global;
}

Value KernelLowering::inBounds(OpBuilder &b, Location loc,
                               ArrayRef<Value> global, ArrayRef<Value> dims) {
  // Unsigned compares: negative indices are out of bounds too.
  Value cond;
  for (auto [d, g] : llvm::enumerate(global)) {
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, dims[d]);
    cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
  }
  return cond;
}

Value KernelLowering::clampedLoad(OpBuilder &b, Location loc, Value memref,
                                  ArrayRef<Value> global, ArrayRef<Value> dims,
                                  Value pad) {
  Value zero = cidx(b, loc, 0), ok;
  SmallVector<Value> safe;
  for (auto [d, g] : llvm::enumerate(global)) {
    Value in =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, dims[d]);
    safe.push_back(arith::SelectOp::create(b, loc, in, g, zero));
    ok = ok ? arith::AndIOp::create(b, loc, ok, in) : in;
  }
  Value v = memref::LoadOp::create(b, loc, memref, safe);
  return arith::SelectOp::create(b, loc, ok, v, pad);
}

Value KernelLowering::noneEmpty(OpBuilder &b, Location loc,
                                ArrayRef<Value> dims) {
  Value all;
  for (Value d : dims) {
    Value ne =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, d, cidx(b, loc, 0));
    all = all ? arith::AndIOp::create(b, loc, all, ne) : ne;
  }
  return all;
}

bool KernelLowering::isStaged(const Layout &layout) const {
  return !layout.replicated && layout.chunks > 1 && isUnrolled(opts, layout);
}

void KernelLowering::accessTile(
    OpBuilder &b, Location loc, const Layout &layout, ArrayRef<int64_t> shape,
    ArrayRef<Value> base, ArrayRef<Value> dims, bool interior,
    function_ref<void(OpBuilder &, Value, ArrayRef<Value>, int64_t)> segment,
    function_ref<void(OpBuilder &)> ragged) {
  // A chunk lies in one row, or holds whole rows: `width` contiguous elements
  // per row segment.
  int64_t width = std::min(layout.vec, shape.back());
  auto segments = [&](OpBuilder &ib) {
    forEachChunk(ib, loc, layout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k0, Value l0) {
                   for (int64_t i = 0; i < layout.vec; i += width)
                     segment(b, addConst(b, loc, k0, i),
                             globalCoords(b, loc, base, addConst(b, loc, l0, i),
                                          shape),
                             width);
                 });
  };
  if (interior) {
    segments(b);
    return;
  }
  // The tile is wholly in bounds (one test for the program, so no divergence):
  // every chunk is accessed unconditionally, which lets the accesses of all
  // chunks be in flight together.
  auto inBounds = scf::IfOp::create(b, loc, TypeRange{},
                                    tileInBounds(b, loc, base, dims, shape),
                                    /*withElseRegion=*/true);
  OpBuilder ib = inBounds.getThenBodyBuilder();
  segments(ib);
  // A ragged tile (only programs on the tensor's edges): element by element,
  // which keeps the code small.
  OpBuilder rb = inBounds.getElseBodyBuilder();
  ragged(rb);
}

void KernelLowering::loadRun(OpBuilder &b, Location loc, Value src,
                             SmallVector<Value> index, int64_t width,
                             int64_t vw, Value dst, Value k) {
  Type elt = cast<MemRefType>(src.getType()).getElementType();
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  Value first = index.back();
  for (int64_t off = 0; off < width; off += vw) {
    index.back() = addConst(b, loc, first, off);
    if (vw == 1) {
      Value v = memref::LoadOp::create(b, loc, src, index);
      memref::StoreOp::create(b, loc, v, dst, addConst(b, loc, k, off));
      continue;
    }
    Value vec = vector::LoadOp::create(
        b, loc, VectorType::get({vw}, elt), src, index,
        /*nontemporal=*/false, llvm::MaybeAlign(vw * bytes));
    for (int64_t e = 0; e < vw; ++e) {
      Value v = vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{e});
      memref::StoreOp::create(b, loc, v, dst, addConst(b, loc, k, off + e));
    }
  }
}

void KernelLowering::raggedLoad(
    OpBuilder &b, Location loc, RankedTensorType type, Value src,
    ArrayRef<Value> dims, Value pad, Value dst,
    function_ref<SmallVector<Value>(OpBuilder &, Value)> coords) {
  Layout layout = getLayout(type);
  Value nonEmpty = noneEmpty(b, loc, dims);
  bool staged = isStaged(layout);
  Value target = staged ? newBuffer(type) : dst;
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, nonEmpty,
                                /*withElseRegion=*/true);
  OpBuilder tb = ifOp.getThenBodyBuilder();
  forEachOwned(
      tb, loc, layout, /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        Value v = clampedLoad(b, loc, src, coords(b, l), dims, pad);
        memref::StoreOp::create(b, loc, v, target, k);
      },
      staged);
  OpBuilder eb = ifOp.getElseBodyBuilder();
  forEachOwned(
      eb, loc, layout, /*needLinear=*/false,
      [&](OpBuilder &b, Value k, Value) {
        memref::StoreOp::create(b, loc, pad, target, k);
      },
      staged);
  if (staged)
    copyBuffer(b, loc, type, target, dst);
}

void KernelLowering::lowerLoad(LoadOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  Layout layout = getLayout(type);
  Value src = op.getSource();
  SmallVector<Value> dims;
  SmallVector<Value> base =
      tileOrigin(b, loc, src, op.getIndices(), shape, dims);
  Value pad = paddingValue(b, loc, elt, op.getPaddingAttr());
  Value dst = newBuffer(type);
  // Element by element (ragged tiles, replicated layouts, chunks of one
  // element): raggedLoad.
  auto ragged = [&](OpBuilder &b) {
    raggedLoad(b, loc, type, src, dims, pad, dst, [&](OpBuilder &b, Value l) {
      return globalCoords(b, loc, base, l, shape);
    });
  };
  if (layout.replicated || layout.vec == 1) {
    ragged(b);
    buffers[op.getResult()] = dst;
    return;
  }
  int64_t vw = vectorAccessWidth(src, std::min(layout.vec, shape.back()));
  // A segment wholly in bounds: unconditional accesses.
  auto segment = [&](OpBuilder &b, Value k, ArrayRef<Value> global,
                     int64_t width) {
    loadRun(b, loc, src, SmallVector<Value>(global), width, vw, dst, k);
  };
  accessTile(b, loc, layout, shape, base, dims, op->hasAttr(kInteriorAttrName),
             segment, ragged);
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerStore(StoreOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getValue().getType();
  Type elt = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  Value dst = op.getDest();
  Layout layout = getLayout(type);
  SmallVector<Value> dims;
  SmallVector<Value> base =
      tileOrigin(b, loc, dst, op.getIndices(), shape, dims);
  Value src = bufferOf(op.getValue());
  Value from = src; // where the element path reads
  // One element under its own bounds check.
  auto element = [&](OpBuilder &b, Value k, Value l) {
    SmallVector<Value> global = globalCoords(b, loc, base, l, shape);
    // Replicated tiles: only the first P threads store.
    Value first;
    if (layout.replicated)
      first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                    getThreadId(),
                                    cidx(b, loc, layout.numElements));
    Value cond = inBounds(b, loc, global, dims);
    if (first)
      cond = arith::AndIOp::create(b, loc, first, cond);
    Value v = memref::LoadOp::create(b, loc, from, k);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                  /*withElseRegion=*/false);
    OpBuilder tb = ifOp.getThenBodyBuilder();
    memref::StoreOp::create(tb, loc, v, dst, global);
  };
  if (layout.replicated || layout.vec == 1) {
    forEachOwned(b, loc, layout, /*needLinear=*/true, element);
    return;
  }
  int64_t vw = vectorAccessWidth(dst, std::min(layout.vec, shape.back()));
  int64_t bytes = elt.getIntOrFloatBitWidth() / 8;
  auto segment = [&](OpBuilder &b, Value k, ArrayRef<Value> global,
                     int64_t width) {
    SmallVector<Value> index(global);
    for (int64_t off = 0; off < width; off += vw) {
      index.back() = addConst(b, loc, global.back(), off);
      SmallVector<Value> values;
      for (int64_t e = 0; e < vw; ++e)
        values.push_back(
            memref::LoadOp::create(b, loc, src, addConst(b, loc, k, off + e)));
      if (vw == 1) {
        memref::StoreOp::create(b, loc, values[0], dst, index);
        continue;
      }
      Value vec = vector::FromElementsOp::create(
          b, loc, VectorType::get({vw}, elt), values);
      vector::StoreOp::create(b, loc, vec, dst, index, /*nontemporal=*/false,
                              llvm::MaybeAlign(vw * bytes));
    }
  };
  accessTile(b, loc, layout, shape, base, dims, op->hasAttr(kInteriorAttrName),
             segment,
                      [&](OpBuilder &b) {
                        bool staged = isStaged(layout);
                        if (staged) {
                          from = newBuffer(type);
                          copyBuffer(b, loc, type, src, from);
                        }
                        forEachOwned(b, loc, layout, /*needLinear=*/true,
                                     element, staged);
                      });
}

void KernelLowering::lowerBroadcastLoad(BroadcastOp op, LoadOp load) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType(), inType = op.getInput().getType();
  ArrayRef<int64_t> loadShape = load.getType().getShape();
  Type elt = type.getElementType();
  Layout layout = getLayout(type);
  Value src = load.getSource();
  SmallVector<Value> dims;
  SmallVector<Value> base =
      tileOrigin(b, loc, src, load.getIndices(), loadShape, dims);
  Value pad = paddingValue(b, loc, elt, load.getPaddingAttr());
  Value dst = newBuffer(type);
  // The global coordinates of the loaded element that result element `l`
  // reads: its coordinates with the broadcast dimensions set to 0, as a
  // linear index of the input (reshapes keep the row-major order, so it is
  // the load's too).
  auto sourceGlobal = [&](OpBuilder &b, Value l) {
    SmallVector<Value> coords = delinearize(b, loc, l, type.getShape());
    for (auto [d, size] : llvm::enumerate(inType.getShape()))
      if (size == 1)
        coords[d] = cidx(b, loc, 0);
    Value s = linearize(b, loc, coords, inType.getShape());
    return globalCoords(b, loc, base, s, loadShape);
  };
  // Whole tile in bounds: a result chunk's run within a row reads as many
  // contiguous input elements where the innermost dimension is not
  // broadcast, and one input element, loaded once and copied along the run,
  // where it is (a column spread along rows: planBroadcastLoad).
  const bool acrossRows = inType.getShape().back() == 1;
  int64_t width = std::min(layout.vec, type.getShape().back());
  int64_t vw = vectorAccessWidth(src, width);
  auto segments = [&](OpBuilder &sb) {
    forEachChunk(sb, loc, layout, /*needLinear=*/true,
                 [&](OpBuilder &b, Value k0, Value l0) {
                   for (int64_t i = 0; i < layout.vec; i += width) {
                     Value k = addConst(b, loc, k0, i);
                     SmallVector<Value> at =
                         sourceGlobal(b, addConst(b, loc, l0, i));
                     if (!acrossRows) {
                       loadRun(b, loc, src, at, width, vw, dst, k);
                       continue;
                     }
                     Value v = memref::LoadOp::create(b, loc, src, at);
                     for (int64_t e = 0; e < width; ++e)
                       memref::StoreOp::create(b, loc, v, dst,
                                               addConst(b, loc, k, e));
                   }
                 });
  };
  if (load->hasAttr(kInteriorAttrName)) {
    segments(b);
    buffers[op.getResult()] = dst;
    return;
  }
  auto inBoundsIf = scf::IfOp::create(
      b, loc, TypeRange{}, tileInBounds(b, loc, base, dims, loadShape),
      /*withElseRegion=*/true);
  OpBuilder tb = inBoundsIf.getThenBodyBuilder();
  segments(tb);
  // A ragged tile: element by element, as lowerLoad does.
  OpBuilder rb = inBoundsIf.getElseBodyBuilder();
  raggedLoad(rb, loc, type, src, dims, pad, dst, sourceGlobal);
  buffers[op.getResult()] = dst;
}
