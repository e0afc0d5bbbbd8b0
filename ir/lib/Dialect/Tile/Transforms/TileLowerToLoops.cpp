//===- TileLowerToLoops.cpp - tile kernels to per-thread scalar code ------===//
//
// Implements `tile-lower-to-loops`: every `tile.kernel` function is rewritten
// so that no tensor values and no tile ops remain. Each tile SSA value lives in
// a per-thread private buffer (an entry-block `memref.alloca`); elementwise ops
// run per owned element on scalars; loads and stores become bounds-checked
// scalar accesses; layout-changing ops exchange data through a scratch buffer
// (shared memory on gpu) between barriers. See Passes.td for the mapping.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#define DEBUG_TYPE "tile-lower-to-loops"

namespace mlir::tessera::tile {
#define GEN_PASS_DEF_TILELOWERTOLOOPS
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"
} // namespace mlir::tessera::tile

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

namespace {

/// Static shared memory available to a CTA without opt-in.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

/// Lowering parameters derived from the pass options.
struct LoweringOptions {
  bool gpu = false;
  int64_t threads = 1;     // T
  int64_t vectorWidth = 4; // V
  int64_t unrollLimit = 64;
};

/// How the P elements of a tile are spread over the T threads of a program.
/// Thread t owns elements (c, j), c < chunks, j < vec, at linear index
/// (c*T + t)*vec + j and keeps element (c, j) at private index c*vec + j.
/// When P < T, thread t owns element t mod P (replicated).
struct Layout {
  int64_t numElements; // P
  int64_t perThread;   // n
  int64_t vec;         // v
  int64_t chunks;      // C
  bool replicated;
};

bool isFloat16Or(Type t) { return isa<Float16Type, BFloat16Type>(t); }

bool isSupportedElementType(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() &&
           llvm::is_contained({1u, 8u, 16u, 32u, 64u}, it.getWidth());
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type>(t);
}

/// Scratch storage type of an element (i1 is kept as a byte).
Type scratchElementType(Type t) {
  return t.isInteger(1) ? IntegerType::get(t.getContext(), 8) : t;
}

int64_t scratchElementBytes(Type t) {
  return std::max<int64_t>(1,
                           scratchElementType(t).getIntOrFloatBitWidth() / 8);
}

bool hasTensorType(TypeRange types) {
  return llvm::any_of(types, [](Type t) { return isa<TensorType>(t); });
}

bool touchesTensors(Operation *op) {
  if (hasTensorType(op->getOperandTypes()) ||
      hasTensorType(op->getResultTypes()))
    return true;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (hasTensorType(block.getArgumentTypes()))
        return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Kernel verification
//===----------------------------------------------------------------------===//

LogicalResult verifyTileType(Operation *op, Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return success();
  auto ranked = dyn_cast<RankedTensorType>(tensor);
  if (!ranked || ranked.getRank() == 0 || ranked.getEncoding() ||
      !isTileShape(ranked))
    return op->emitOpError()
           << "uses tile type " << type
           << ", but tile-lower-to-loops needs tiles of rank >= 1 with static "
              "power-of-two dimensions and no encoding";
  if (!isSupportedElementType(ranked.getElementType()))
    return op->emitOpError()
           << "uses tile element type " << ranked.getElementType()
           << ", but tile-lower-to-loops supports i1, i8, i16, i32, i64, f16, "
              "bf16, f32 and f64";
  return success();
}

/// Scratch bytes a layout-changing op needs (0 for other ops).
int64_t scratchBytesOf(Operation *op) {
  auto bytesOf = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getNumElements() * scratchElementBytes(t.getElementType());
  };
  if (auto b = dyn_cast<BroadcastOp>(op))
    return bytesOf(b.getInput());
  if (auto t = dyn_cast<TransposeOp>(op))
    return bytesOf(t.getInput());
  if (auto r = dyn_cast<ReduceOp>(op))
    return bytesOf(r.getInput());
  if (auto m = dyn_cast<MmaOp>(op))
    return bytesOf(m.getA()) + bytesOf(m.getB());
  return 0;
}

/// Rejects, with a diagnostic, everything in `func` the lowering cannot handle.
/// On success sets `scratchBytes` to the scratch buffer size the kernel needs.
LogicalResult verifyTileKernel(func::FuncOp func, const LoweringOptions &opts,
                               int64_t &scratchBytes) {
  if (func.isExternal())
    return func.emitError("tile kernel '")
           << func.getSymName() << "' has no body";
  for (Type t : func.getArgumentTypes())
    if (isa<TensorType>(t))
      return func.emitError("tile kernel arguments must be scalars or memrefs, "
                            "got ")
             << t;
  for (Type t : func.getResultTypes())
    if (isa<TensorType>(t))
      return func.emitError("tile kernels cannot return tiles, got ") << t;

  scratchBytes = 0;
  Operation *largest = nullptr;
  WalkResult result = func.getBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) -> WalkResult {
        for (Type t : op->getOperandTypes())
          if (failed(verifyTileType(op, t)))
            return WalkResult::interrupt();
        for (Type t : op->getResultTypes())
          if (failed(verifyTileType(op, t)))
            return WalkResult::interrupt();

        Dialect *dialect = op->getDialect();
        StringRef ns = dialect ? dialect->getNamespace() : StringRef();
        bool tensors = touchesTensors(op);

        if (isa_and_nonnull<TileDialect>(dialect)) {
          int64_t bytes = scratchBytesOf(op);
          if (bytes > scratchBytes) {
            scratchBytes = bytes;
            largest = op;
          }
          return WalkResult::advance();
        }
        if (isa<scf::ForOp, scf::IfOp>(op))
          return WalkResult::advance();
        if (isa<scf::YieldOp>(op)) {
          if (tensors && !isa<scf::ForOp, scf::IfOp>(op->getParentOp())) {
            op->emitOpError("yields tiles from a '")
                << op->getParentOp()->getName()
                << "', which tile-lower-to-loops does not support";
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        }
        if (ns == "arith" || ns == "math") {
          if (!tensors)
            return WalkResult::advance();
          if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
            auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
            if (!dense || !dense.isSplat()) {
              op->emitOpError("tile constants must be splat dense attributes");
              return WalkResult::interrupt();
            }
            return WalkResult::advance();
          }
          if (op->getNumRegions() != 0) {
            op->emitOpError("with regions cannot take tiles");
            return WalkResult::interrupt();
          }
          std::optional<ArrayRef<int64_t>> shape;
          for (Type t : llvm::concat<const Type>(op->getOperandTypes(),
                                                 op->getResultTypes())) {
            auto tensor = dyn_cast<RankedTensorType>(t);
            if (!tensor)
              continue;
            if (!shape) {
              shape = tensor.getShape();
            } else if (*shape != tensor.getShape()) {
              op->emitOpError(
                  "elementwise operands and results must have one "
                  "shape; broadcast explicitly with tile.broadcast");
              return WalkResult::interrupt();
            }
          }
          if (op->getNumResults() == 0 ||
              !llvm::all_of(op->getResultTypes(),
                            [](Type t) { return isa<TensorType>(t); })) {
            op->emitOpError("mixes tile and scalar results");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        }
        if (tensors) {
          op->emitOpError("cannot take or produce tiles inside a tile kernel");
          return WalkResult::interrupt();
        }
        static constexpr StringLiteral allowed[] = {
            "func", "scf", "arith", "math", "memref", "cf", "index", "ub"};
        if (!llvm::is_contained(allowed, ns)) {
          op->emitOpError("is not supported inside a tile kernel");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
  if (result.wasInterrupted())
    return failure();

  if (opts.gpu && scratchBytes > kMaxStaticSharedBytes)
    return largest->emitOpError()
           << "needs " << scratchBytes
           << " bytes of shared memory scratch, more than the "
           << kMaxStaticSharedBytes
           << " bytes (48 KiB) of static shared memory";
  return success();
}

//===----------------------------------------------------------------------===//
// Kernel lowering
//===----------------------------------------------------------------------===//

class KernelLowering {
public:
  KernelLowering(func::FuncOp func, const LoweringOptions &opts,
                 int64_t scratchBytes)
      : func(func), opts(opts), scratchBytes(scratchBytes),
        entry(func.getContext()) {}

  LogicalResult run();

private:
  // Setup.
  void setUpProgramIds();
  Value getProgramId(bool count, unsigned dim);
  Value getThreadId();
  Value getScratchView(OpBuilder &b, Location loc, Type elt, int64_t count,
                       int64_t byteOffset);

  // Helpers.
  Layout getLayout(RankedTensorType type) const;
  Value newBuffer(RankedTensorType type);
  Value bufferOf(Value tile) const;
  Value cidx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  void forEachOwned(OpBuilder &b, Location loc, const Layout &layout,
                    bool needLinear,
                    function_ref<void(OpBuilder &, Value k, Value l)> body);
  SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                                 ArrayRef<int64_t> shape) const;
  Value linearize(OpBuilder &b, Location loc, ArrayRef<Value> coords,
                  ArrayRef<int64_t> shape) const;
  void copyBuffer(OpBuilder &b, Location loc, RankedTensorType type, Value src,
                  Value dst);
  void barrier(OpBuilder &b, Location loc);
  Value writeToScratch(OpBuilder &b, Location loc, Value tile,
                       int64_t byteOffset);
  Value readScratch(OpBuilder &b, Location loc, Value view, Value index,
                    Type elt);

  // Op lowering.
  void lowerBlock(Block &block);
  void lowerOp(Operation *op);
  void lowerLoad(LoadOp op);
  void lowerStore(StoreOp op);
  void lowerFill(Operation *op, Value scalar);
  void lowerIota(IotaOp op);
  void lowerBroadcast(BroadcastOp op);
  void lowerTranspose(TransposeOp op);
  void lowerReduce(ReduceOp op);
  void lowerMma(MmaOp op);
  void lowerElementwise(Operation *op);
  void lowerFor(scf::ForOp op);
  void lowerIf(scf::IfOp op);
  void lowerYield(scf::YieldOp op);
  scf::YieldOp rebuildYield(scf::YieldOp yield);

  func::FuncOp func;
  LoweringOptions opts;
  int64_t scratchBytes;
  /// Inserts at the start of the entry block (allocas, thread/program ids).
  OpBuilder entry;
  Value threadId;
  Value scratchBase;
  Value programIds[3];
  Value numPrograms[3];
  DenseMap<Value, Value> buffers;
  /// Per scf.yield with tiles: the buffers its tile operands are copied to.
  DenseMap<Operation *, SmallVector<Value>> yieldTargets;
  /// Replaced ops, erased once the whole kernel is rewritten.
  SmallVector<Operation *> toErase;
};

Layout KernelLowering::getLayout(RankedTensorType type) const {
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
// Global memory
//===----------------------------------------------------------------------===//

Value paddingValue(OpBuilder &b, Location loc, Type elt, PaddingKind kind) {
  if (auto ft = dyn_cast<FloatType>(elt)) {
    APFloat value = kind == PaddingKind::zero
                        ? APFloat::getZero(ft.getFloatSemantics())
                        : APFloat::getInf(ft.getFloatSemantics(),
                                          kind == PaddingKind::neg_inf);
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(ft, value));
  }
  unsigned width = elt.getIntOrFloatBitWidth();
  APInt value = APInt::getZero(width);
  if (width == 1)
    value = APInt(1, kind == PaddingKind::pos_inf ? 1 : 0);
  else if (kind == PaddingKind::neg_inf)
    value = APInt::getSignedMinValue(width);
  else if (kind == PaddingKind::pos_inf)
    value = APInt::getSignedMaxValue(width);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(elt, value));
}

void KernelLowering::lowerLoad(LoadOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  ArrayRef<int64_t> shape = type.getShape();
  Value src = op.getSource();
  SmallVector<Value> dims, base;
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    dims.push_back(memref::DimOp::create(b, loc, src, d));
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
    base.push_back(
        b.createOrFold<arith::MulIOp>(loc, i, cidx(b, loc, shape[d])));
  }
  Value pad = paddingValue(b, loc, type.getElementType(), op.getPadding());
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> coords = delinearize(b, loc, l, shape);
        SmallVector<Value> global;
        Value inBounds;
        for (auto [d, c] : llvm::enumerate(coords)) {
          global.push_back(b.createOrFold<arith::AddIOp>(loc, base[d], c));
          // Unsigned compare: negative indices are out of bounds too.
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global.back(), dims[d]);
          inBounds =
              inBounds ? arith::AndIOp::create(b, loc, inBounds, ok) : ok;
        }
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{type.getElementType()},
                                      inBounds,
                                      /*withElseRegion=*/true);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        Value v = memref::LoadOp::create(tb, loc, src, global);
        scf::YieldOp::create(tb, loc, v);
        OpBuilder eb = ifOp.getElseBodyBuilder();
        scf::YieldOp::create(eb, loc, pad);
        memref::StoreOp::create(b, loc, ifOp.getResult(0), dst, k);
      });
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerStore(StoreOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getValue().getType();
  ArrayRef<int64_t> shape = type.getShape();
  Value dst = op.getDest();
  Layout layout = getLayout(type);
  SmallVector<Value> dims, base;
  for (auto [d, index] : llvm::enumerate(op.getIndices())) {
    dims.push_back(memref::DimOp::create(b, loc, dst, d));
    Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
    base.push_back(
        b.createOrFold<arith::MulIOp>(loc, i, cidx(b, loc, shape[d])));
  }
  Value src = bufferOf(op.getValue());
  forEachOwned(
      b, loc, layout, /*needLinear=*/true, [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> coords = delinearize(b, loc, l, shape);
        SmallVector<Value> global;
        Value cond;
        // Replicated tiles: only the first P threads store.
        if (layout.replicated)
          cond = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       getThreadId(),
                                       cidx(b, loc, layout.numElements));
        for (auto [d, c] : llvm::enumerate(coords)) {
          global.push_back(b.createOrFold<arith::AddIOp>(loc, base[d], c));
          Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                           global.back(), dims[d]);
          cond = cond ? arith::AndIOp::create(b, loc, cond, ok) : ok;
        }
        Value v = memref::LoadOp::create(b, loc, src, k);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                      /*withElseRegion=*/false);
        OpBuilder tb = ifOp.getThenBodyBuilder();
        memref::StoreOp::create(tb, loc, v, dst, global);
      });
}

//===----------------------------------------------------------------------===//
// Tile construction and layout changes
//===----------------------------------------------------------------------===//

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
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType srcType = op.getInput().getType(), type = op.getType();
  Value view = writeToScratch(b, loc, op.getInput(), 0);
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(b, loc, getLayout(type), /*needLinear=*/true,
               [&](OpBuilder &b, Value k, Value l) {
                 SmallVector<Value> coords =
                     delinearize(b, loc, l, type.getShape());
                 for (auto [d, size] : llvm::enumerate(srcType.getShape()))
                   if (size == 1)
                     coords[d] = cidx(b, loc, 0);
                 Value src = linearize(b, loc, coords, srcType.getShape());
                 Value v =
                     readScratch(b, loc, view, src, type.getElementType());
                 memref::StoreOp::create(b, loc, v, dst, k);
               });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

void KernelLowering::lowerTranspose(TransposeOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  RankedTensorType type = op.getType();
  Value view = writeToScratch(b, loc, op.getInput(), 0);
  barrier(b, loc);
  Value dst = newBuffer(type);
  forEachOwned(
      b, loc, getLayout(type), /*needLinear=*/true,
      [&](OpBuilder &b, Value k, Value l) {
        SmallVector<Value> rc = delinearize(b, loc, l, type.getShape());
        // result[i, j] = input[j, i]; the input is (R1 x R0).
        Value src = linearize(b, loc, {rc[1], rc[0]},
                              {type.getDimSize(1), type.getDimSize(0)});
        Value v = readScratch(b, loc, view, src, type.getElementType());
        memref::StoreOp::create(b, loc, v, dst, k);
      });
  barrier(b, loc);
  buffers[op.getResult()] = dst;
}

/// Type reductions and products accumulate in: f32 for 16-bit floats.
Type accumulatorType(Type elt) {
  return isFloat16Or(elt) ? Float32Type::get(elt.getContext()) : elt;
}

Value extendTo(OpBuilder &b, Location loc, Value v, Type type) {
  return v.getType() == type ? v : arith::ExtFOp::create(b, loc, type, v);
}

Value combine(OpBuilder &b, Location loc, ReduceKind kind, Value acc, Value x) {
  Type t = acc.getType();
  if (isa<FloatType>(t)) {
    switch (kind) {
    case ReduceKind::sum:
      return arith::AddFOp::create(b, loc, acc, x);
    case ReduceKind::max:
      return arith::MaximumFOp::create(b, loc, acc, x);
    case ReduceKind::min:
      return arith::MinimumFOp::create(b, loc, acc, x);
    }
  }
  if (t.isInteger(1)) { // i1 as unsigned: max = or, min = and, sum = xor.
    switch (kind) {
    case ReduceKind::sum:
      return arith::XOrIOp::create(b, loc, acc, x);
    case ReduceKind::max:
      return arith::OrIOp::create(b, loc, acc, x);
    case ReduceKind::min:
      return arith::AndIOp::create(b, loc, acc, x);
    }
  }
  switch (kind) {
  case ReduceKind::sum:
    return arith::AddIOp::create(b, loc, acc, x);
  case ReduceKind::max:
    return arith::MaxSIOp::create(b, loc, acc, x);
  case ReduceKind::min:
    return arith::MinSIOp::create(b, loc, acc, x);
  }
  llvm_unreachable("unknown reduce kind");
}

void KernelLowering::lowerReduce(ReduceOp op) {
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

//===----------------------------------------------------------------------===//
// Elementwise arith/math ops
//===----------------------------------------------------------------------===//

void KernelLowering::lowerElementwise(Operation *op) {
  OpBuilder b(op);
  Location loc = op->getLoc();
  auto shapeType = cast<RankedTensorType>(op->getResult(0).getType());
  Type f32 = b.getF32Type();
  auto eltOf = [](Type t) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    return tensor ? tensor.getElementType() : t;
  };
  // 16-bit float arithmetic, compares and math run in f32; casts and
  // selects move values unchanged.
  bool promote = !isa<CastOpInterface, arith::SelectOp>(op) &&
                 llvm::any_of(llvm::concat<const Type>(op->getOperandTypes(),
                                                       op->getResultTypes()),
                              [&](Type t) { return isFloat16Or(eltOf(t)); });

  SmallVector<Value> results;
  for (Value r : op->getResults())
    results.push_back(newBuffer(cast<RankedTensorType>(r.getType())));

  forEachOwned(b, loc, getLayout(shapeType), /*needLinear=*/false,
               [&](OpBuilder &b, Value k, Value) {
                 IRMapping mapping;
                 for (Value operand : op->getOperands()) {
                   if (mapping.contains(operand))
                     continue;
                   Value v = operand;
                   if (isa<TensorType>(operand.getType()))
                     v = memref::LoadOp::create(b, loc, bufferOf(operand), k);
                   if (promote && isFloat16Or(v.getType()))
                     v = arith::ExtFOp::create(b, loc, f32, v);
                   mapping.map(operand, v);
                 }
                 Operation *scalar = b.clone(*op, mapping);
                 for (auto [i, result] :
                      llvm::enumerate(scalar->getResults())) {
                   Type elt = eltOf(op->getResult(i).getType());
                   bool narrow = promote && isFloat16Or(elt);
                   result.setType(narrow ? f32 : elt);
                   Value v = result;
                   if (narrow)
                     v = arith::TruncFOp::create(b, loc, elt, v);
                   memref::StoreOp::create(b, loc, v, results[i], k);
                 }
               });
  for (auto [r, buf] : llvm::zip(op->getResults(), results))
    buffers[r] = buf;
}

//===----------------------------------------------------------------------===//
// Control flow carrying tiles
//===----------------------------------------------------------------------===//

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
    for (Region &region : op->getRegions())
      for (Block &block : region)
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

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block))
    lowerOp(&op);
}

void KernelLowering::lowerOp(Operation *op) {
  if (auto pid = dyn_cast<ProgramIdOp>(op)) {
    pid.getResult().replaceAllUsesWith(getProgramId(false, pid.getDim()));
    toErase.push_back(op);
    return;
  }
  if (auto np = dyn_cast<NumProgramsOp>(op)) {
    np.getResult().replaceAllUsesWith(getProgramId(true, np.getDim()));
    toErase.push_back(op);
    return;
  }
  if (isa_and_nonnull<TileDialect>(op->getDialect())) {
    TypeSwitch<Operation *>(op)
        .Case([&](LoadOp o) { lowerLoad(o); })
        .Case([&](StoreOp o) { lowerStore(o); })
        .Case([&](SplatOp o) { lowerFill(o, o.getInput()); })
        .Case([&](BroadcastOp o) { lowerBroadcast(o); })
        .Case([&](ReshapeOp o) {
          // Same element count, same mapping: reuse the buffer.
          buffers[o.getResult()] = bufferOf(o.getInput());
        })
        .Case([&](TransposeOp o) { lowerTranspose(o); })
        .Case([&](ReduceOp o) { lowerReduce(o); })
        .Case([&](IotaOp o) { lowerIota(o); })
        .Case([&](MmaOp o) { lowerMma(o); })
        .Default([](Operation *) { llvm_unreachable("unhandled tile op"); });
    toErase.push_back(op);
    return;
  }
  if (auto forOp = dyn_cast<scf::ForOp>(op))
    return lowerFor(forOp);
  if (auto ifOp = dyn_cast<scf::IfOp>(op))
    return lowerIf(ifOp);
  if (auto yield = dyn_cast<scf::YieldOp>(op))
    return lowerYield(yield);
  if (touchesTensors(op)) {
    if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
      auto dense = cast<DenseElementsAttr>(cst.getValue());
      OpBuilder b(op);
      Value scalar = arith::ConstantOp::create(
          b, op->getLoc(), cast<TypedAttr>(dense.getSplatValue<Attribute>()));
      lowerFill(op, scalar);
    } else {
      lowerElementwise(op);
    }
    toErase.push_back(op);
    return;
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      lowerBlock(block);
}

LogicalResult KernelLowering::run() {
  Block &entryBlock = func.getBody().front();
  entry.setInsertionPointToStart(&entryBlock);
  setUpProgramIds();
  // Ops are lowered in place (new code goes before each op); the replaced ops
  // are erased at the end, when none of their results is used any more.
  for (Block &block : func.getBody())
    lowerBlock(block);
  for (Operation *op : toErase)
    op->dropAllReferences();
  for (Operation *op : toErase)
    op->erase();
  // Unused index arithmetic and constants (users first, hence the reverse
  // walk).
  func.walk<WalkOrder::PostOrder, ReverseIterator>([](Operation *op) {
    if (isOpTriviallyDead(op))
      op->erase();
  });

  if (opts.gpu)
    func->setAttr(TileDialect::getBlockSizeAttrName(),
                  entry.getI32IntegerAttr(opts.threads));
  WalkResult leftover = func.walk([](Operation *op) {
    if (touchesTensors(op) || isa_and_nonnull<TileDialect>(op->getDialect())) {
      op->emitOpError("was not lowered by tile-lower-to-loops");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(leftover.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct TileLowerToLoopsPass
    : tile::impl::TileLowerToLoopsBase<TileLowerToLoopsPass> {
  using TileLowerToLoopsBase::TileLowerToLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LoweringOptions opts;
    if (target != "cpu" && target != "gpu") {
      module.emitError("tile-lower-to-loops: target must be 'cpu' or 'gpu', "
                       "got '")
          << target << "'";
      return signalPassFailure();
    }
    opts.gpu = target == "gpu";
    auto isPow2 = [](int64_t v) {
      return v > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(v));
    };
    if (!isPow2(blockSize) || !isPow2(vectorWidth) || unrollLimit < 0) {
      module.emitError("tile-lower-to-loops: block-size and vector-width must "
                       "be positive powers of two and unroll-limit >= 0");
      return signalPassFailure();
    }
    opts.threads = opts.gpu ? blockSize : 1;
    opts.vectorWidth = vectorWidth;
    opts.unrollLimit = unrollLimit;

    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr(TileDialect::getKernelAttrName()))
        kernels.push_back(f);
    });
    bool failed = false;
    for (func::FuncOp kernel : kernels) {
      int64_t scratchBytes = 0;
      if (mlir::failed(verifyTileKernel(kernel, opts, scratchBytes)) ||
          mlir::failed(KernelLowering(kernel, opts, scratchBytes).run()))
        failed = true;
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
