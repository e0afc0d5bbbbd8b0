//===- ThreadMapping.cpp - thread map, buffers, scratch -----------------===//
//
// The element <-> thread map of tile-lower-to-loops and the per-thread state
// built on it: thread and program ids, private buffers (entry-block allocas
// promoted to registers by SROA when indexed by constants), the loops over a
// thread's owned elements, and the scratch buffer (shared memory on gpu)
// through which layout-changing ops exchange elements between barriers.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "llvm/Support/MathExtras.h"

#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

Layout mlir::tessera::tile::getLayout(const LoweringOptions &opts,
                                      RankedTensorType type) {
  int64_t p = type.getNumElements(), t = opts.threads;
  if (p < t)
    return {p, 1, 1, 1, true};
  int64_t n = p / t;
  int64_t v = std::min(opts.vectorWidth, n);
  return {p, n, v, n / v, false};
}

Value KernelLowering::newBuffer(RankedTensorType type) {
  Layout layout = getLayout(type);
  auto memrefType = MemRefType::get({layout.perThread}, type.getElementType());
  return memref::AllocaOp::create(entry, func.getLoc(), memrefType);
}

Value KernelLowering::bufferOf(Value tile) const {
  Value buffer = buffers.lookup(tile);
  assert(buffer && "tile value has no private buffer");
  return buffer;
}

void KernelLowering::setUpProgramIds() {
  Location loc = func.getLoc();
  Type i32 = entry.getI32Type();
  if (!opts.gpu) {
    // pid0, pid1, pid2, nprog0, nprog1, nprog2 as trailing i32 arguments.
    unsigned n = func.getNumArguments();
    SmallVector<unsigned> indices(6, n);
    SmallVector<Type> types(6, i32);
    SmallVector<Location> locs(6, loc);
    SmallVector<DictionaryAttr> attrs(6,
                                      DictionaryAttr::get(func.getContext()));
    (void)func.insertArguments(indices, types, attrs, locs);
    for (int d = 0; d < 3; ++d) {
      programIds[d] = func.getArgument(n + d);
      numPrograms[d] = func.getArgument(n + 3 + d);
    }
    return;
  }
  // gpu: the special registers are read on first use (see getProgramId).
}

Value KernelLowering::getProgramId(bool count, unsigned dim) {
  Value &slot = count ? numPrograms[dim] : programIds[dim];
  if (slot)
    return slot;
  Location loc = func.getLoc();
  Type i32 = entry.getI32Type();
  switch (dim + (count ? 3 : 0)) {
  case 0:
    return slot = NVVM::BlockIdXOp::create(entry, loc, i32);
  case 1:
    return slot = NVVM::BlockIdYOp::create(entry, loc, i32);
  case 2:
    return slot = NVVM::BlockIdZOp::create(entry, loc, i32);
  case 3:
    return slot = NVVM::GridDimXOp::create(entry, loc, i32);
  case 4:
    return slot = NVVM::GridDimYOp::create(entry, loc, i32);
  default:
    return slot = NVVM::GridDimZOp::create(entry, loc, i32);
  }
}

Value KernelLowering::getThreadId() {
  if (threadId)
    return threadId;
  Location loc = func.getLoc();
  if (!opts.gpu) {
    threadId = cidx(entry, loc, 0);
    return threadId;
  }
  auto range =
      LLVM::ConstantRangeAttr::get(func.getContext(), 32, 0, opts.threads);
  Value tid = NVVM::ThreadIdXOp::create(entry, loc, entry.getI32Type(), range);
  threadId = arith::IndexCastOp::create(entry, loc, entry.getIndexType(), tid);
  return threadId;
}

Value KernelLowering::getScratchView(OpBuilder &b, Location loc, Type elt,
                                     int64_t count, int64_t byteOffset) {
  Attribute space;
  if (opts.gpu)
    space = entry.getI64IntegerAttr(3);
  if (!scratchBase) {
    auto baseType = MemRefType::get({scratchBytes}, entry.getI8Type(),
                                    MemRefLayoutAttrInterface(), space);
    if (opts.gpu) {
      auto module = func->getParentOfType<ModuleOp>();
      SymbolTable symbols(module);
      OpBuilder mb(module.getContext()); // no insertion point: detached op
      auto global = memref::GlobalOp::create(
          mb, func.getLoc(), ("__tile_scratch_" + func.getSymName()).str(),
          mb.getStringAttr("private"), baseType, mb.getUnitAttr(),
          /*constant=*/false, mb.getI64IntegerAttr(16));
      symbols.insert(global, Block::iterator(func)); // renames on a clash
      scratchBase = memref::GetGlobalOp::create(entry, func.getLoc(), baseType,
                                                global.getSymName());
    } else {
      scratchBase = memref::AllocaOp::create(entry, func.getLoc(), baseType,
                                             entry.getI64IntegerAttr(16));
    }
  }
  auto viewType = MemRefType::get({count}, scratchElementType(elt),
                                  MemRefLayoutAttrInterface(), space);
  return memref::ViewOp::create(b, loc, viewType, scratchBase,
                                cidx(b, loc, byteOffset), ValueRange());
}

void KernelLowering::forEachOwned(
    OpBuilder &b, Location loc, const Layout &layout, bool needLinear,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  if (layout.replicated) {
    Value linear;
    if (needLinear)
      linear = arith::AndIOp::create(b, loc, getThreadId(),
                                     cidx(b, loc, layout.numElements - 1));
    body(b, cidx(b, loc, 0), linear);
    return;
  }
  int64_t t = opts.threads, v = layout.vec;
  // Linear index of this thread's first element: t * v.
  Value threadBase;
  if (needLinear && opts.gpu)
    threadBase =
        b.createOrFold<arith::MulIOp>(loc, getThreadId(), cidx(b, loc, v));
  // One chunk, or a gpu value small enough to unroll: constant indices.
  if (layout.chunks == 1 ||
      (opts.gpu && layout.perThread <= opts.unrollLimit)) {
    for (int64_t c = 0; c < layout.chunks; ++c)
      for (int64_t j = 0; j < v; ++j) {
        Value k = cidx(b, loc, c * v + j);
        Value linear;
        if (needLinear)
          linear = opts.gpu ? b.createOrFold<arith::AddIOp>(
                                  loc, threadBase, cidx(b, loc, c * t * v + j))
                            : k;
        body(b, k, linear);
      }
    return;
  }
  scf::ForOp::create(
      b, loc, cidx(b, loc, 0), cidx(b, loc, layout.chunks), cidx(b, loc, 1),
      ValueRange(), [&](OpBuilder &lb, Location loc, Value c, ValueRange) {
        Value kBase = lb.createOrFold<arith::MulIOp>(loc, c, cidx(lb, loc, v));
        // On cpu (one thread) the linear index is the private index.
        Value lBase = kBase;
        if (needLinear && opts.gpu)
          lBase = lb.createOrFold<arith::AddIOp>(
              loc, lb.createOrFold<arith::MulIOp>(loc, c, cidx(lb, loc, t * v)),
              threadBase);
        for (int64_t j = 0; j < v; ++j) {
          Value k =
              lb.createOrFold<arith::AddIOp>(loc, kBase, cidx(lb, loc, j));
          Value linear;
          if (needLinear)
            linear = opts.gpu ? lb.createOrFold<arith::AddIOp>(loc, lBase,
                                                               cidx(lb, loc, j))
                              : k;
          body(lb, k, linear);
        }
        scf::YieldOp::create(lb, loc);
      });
}

SmallVector<Value> KernelLowering::delinearize(OpBuilder &b, Location loc,
                                               Value linear,
                                               ArrayRef<int64_t> shape) const {
  SmallVector<Value> coords(shape.size());
  int64_t shift = 0;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value shifted =
        b.createOrFold<arith::ShRUIOp>(loc, linear, cidx(b, loc, shift));
    // linear < numElements, so the outermost coordinate needs no mask.
    coords[d] = d == 0 ? shifted
                       : b.createOrFold<arith::AndIOp>(
                             loc, shifted, cidx(b, loc, shape[d] - 1));
    shift += llvm::Log2_64(shape[d]);
  }
  return coords;
}

Value KernelLowering::linearize(OpBuilder &b, Location loc,
                                ArrayRef<Value> coords,
                                ArrayRef<int64_t> shape) const {
  Value linear = cidx(b, loc, 0);
  int64_t stride = 1;
  for (int64_t d = shape.size() - 1; d >= 0; --d) {
    Value term =
        b.createOrFold<arith::MulIOp>(loc, coords[d], cidx(b, loc, stride));
    linear = b.createOrFold<arith::AddIOp>(loc, linear, term);
    stride *= shape[d];
  }
  return linear;
}

void KernelLowering::copyBuffer(OpBuilder &b, Location loc,
                                RankedTensorType type, Value src, Value dst) {
  if (src == dst)
    return;
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 Value v = memref::LoadOp::create(b, loc, src, k);
                 memref::StoreOp::create(b, loc, v, dst, k);
               });
}

void KernelLowering::barrier(OpBuilder &b, Location loc) {
  if (opts.gpu)
    NVVM::Barrier0Op::create(b, loc);
}

Value KernelLowering::writeToScratch(OpBuilder &b, Location loc, Value tile,
                                     int64_t byteOffset) {
  auto type = cast<RankedTensorType>(tile.getType());
  Type elt = type.getElementType();
  Value view = getScratchView(b, loc, elt, type.getNumElements(), byteOffset);
  Value src = bufferOf(tile);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/true,
               [&](OpBuilder &b, Value k, Value l) {
                 Value v = memref::LoadOp::create(b, loc, src, k);
                 if (elt.isInteger(1))
                   v = arith::ExtUIOp::create(b, loc, b.getI8Type(), v);
                 memref::StoreOp::create(b, loc, v, view, l);
               });
  return view;
}

Value KernelLowering::readScratch(OpBuilder &b, Location loc, Value view,
                                  Value index, Type elt) {
  Value v = memref::LoadOp::create(b, loc, view, index);
  if (elt.isInteger(1))
    v = arith::TruncIOp::create(b, loc, elt, v);
  return v;
}

//===----------------------------------------------------------------------===//
// Type helpers
//===----------------------------------------------------------------------===//

bool mlir::tessera::tile::isSupportedElementType(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() &&
           llvm::is_contained({1u, 8u, 16u, 32u, 64u}, it.getWidth());
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
}

Type mlir::tessera::tile::scratchElementType(Type t) {
  return t.isInteger(1) ? IntegerType::get(t.getContext(), 8) : t;
}

int64_t mlir::tessera::tile::scratchElementBytes(Type t) {
  return std::max<int64_t>(1,
                           scratchElementType(t).getIntOrFloatBitWidth() / 8);
}

bool mlir::tessera::tile::hasTensorType(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<TensorType>(t); });
}

bool mlir::tessera::tile::touchesTensors(Operation *op) {
  if (hasTensorType(op->getOperandTypes()) ||
      hasTensorType(op->getResultTypes()))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (hasTensorType(block.getArgumentTypes()))
        return true;
  return false;
}
