//===- LoweringSupport.cpp - per-thread building blocks ------------------===//
//
// The per-thread building blocks of KernelLowering, on top of the map of
// ThreadMapping.h: thread and program ids, private buffers (entry-block
// allocas promoted to registers by SROA when indexed by constants), the loops
// over a thread's chunks and elements, warp shuffles, and the scratch buffer
// (shared memory on gpu) through which layout-changing ops exchange elements
// between barriers.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "llvm/Support/MathExtras.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

Value KernelLowering::newBuffer(RankedTensorType type) {
  Layout layout = getLayout(type);
  auto memrefType = MemRefType::get({layout.perThread}, type.getElementType());
  // On cpu one thread holds a whole tile: tile-cpu-workspace then moves the
  // arrays that would overflow a host thread's stack to a workspace.
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
  // gpu: the special registers are read on first use (see getProgramId). G
  // programs sharing a CTA: the grid counts CTAs, not programs, so the number
  // of programs along x comes as a trailing i32 argument (the launcher
  // appends it).
  if (opts.programsPerCta > 1) {
    unsigned n = func.getNumArguments();
    (void)func.insertArgument(n, i32, DictionaryAttr::get(func.getContext()),
                              loc);
    numPrograms[0] = func.getArgument(n);
  }
}

Value KernelLowering::getProgramId(bool count, unsigned dim) {
  Value &slot = count ? numPrograms[dim] : programIds[dim];
  if (slot)
    return slot;
  Location loc = func.getLoc();
  Type i32 = entry.getI32Type();
  auto constant = [&](int64_t v) {
    return arith::ConstantIntOp::create(entry, loc, i32, v);
  };
  // A kernel compiled for one launch's grid (tile.grid, checked by
  // verifyTileKernel): the counts are constants, and the CTA ids read on gpu
  // carry their range, so that bounds tests of whole tiles fold away.
  auto grid = func->getAttrOfType<DenseI64ArrayAttr>(
      TileDialect::getGridAttrName());
  if (grid && count)
    return slot = constant(grid[dim]);
  auto ctaRange = [&](int64_t ctas) -> LLVM::ConstantRangeAttr {
    if (!grid)
      return {};
    return LLVM::ConstantRangeAttr::get(func.getContext(), 32, 0, ctas);
  };
  // A program split over S CTAs along x (or its K loop over K CTAs): CTA c
  // runs program c / S.
  auto perProgram = [&](Value ctas) -> Value {
    if (opts.ctasAlongX() == 1)
      return ctas;
    return arith::ShRUIOp::create(entry, loc, ctas,
                                  constant(llvm::Log2_64(opts.ctasAlongX())));
  };
  switch (dim + (count ? 3 : 0)) {
  case 0:
    if (opts.programsPerCta > 1) {
      // Programs sharing CTAs: program ctaid.x * g + tid.x / T, with g =
      // ntid.x / T programs in each CTA of this launch (at most G: the
      // launcher gives a grid of few programs smaller CTAs).
      auto threads = LLVM::ConstantRangeAttr::get(func.getContext(), 32, 0,
                                                  opts.blockThreads());
      auto blocks = LLVM::ConstantRangeAttr::get(
          func.getContext(), 32, opts.ctaThreads(), opts.blockThreads() + 1);
      Value shift = constant(llvm::Log2_64(opts.ctaThreads()));
      Value group = arith::ShRUIOp::create(
          entry, loc, NVVM::ThreadIdXOp::create(entry, loc, i32, threads),
          shift);
      Value perCta = arith::ShRUIOp::create(
          entry, loc, NVVM::BlockDimXOp::create(entry, loc, i32, blocks),
          shift);
      Value first = arith::MulIOp::create(
          entry, loc, NVVM::BlockIdXOp::create(entry, loc, i32), perCta);
      return slot = arith::AddIOp::create(entry, loc, first, group);
    }
    return slot = perProgram(NVVM::BlockIdXOp::create(
               entry, loc, i32,
               ctaRange(grid ? grid[0] * opts.ctasAlongX() : 0)));
  case 1:
    return slot = NVVM::BlockIdYOp::create(entry, loc, i32,
                                           ctaRange(grid ? grid[1] : 0));
  case 2:
    return slot = NVVM::BlockIdZOp::create(entry, loc, i32,
                                           ctaRange(grid ? grid[2] : 0));
  case 3:
    return slot = perProgram(NVVM::GridDimXOp::create(entry, loc, i32));
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
  Type i32 = entry.getI32Type();
  auto range =
      LLVM::ConstantRangeAttr::get(func.getContext(), 32, 0, opts.blockThreads());
  Value tid = NVVM::ThreadIdXOp::create(entry, loc, i32, range);
  if (opts.programsPerCta > 1) {
    // Thread tid.x mod T of program tid.x / T of the CTA.
    tid = arith::AndIOp::create(
        entry, loc, tid,
        arith::ConstantIntOp::create(entry, loc, i32, opts.ctaThreads() - 1));
  }
  if (opts.ctasPerProgram > 1) {
    // Thread t of the program is thread t mod (T/S) of CTA t / (T/S) of the
    // program; CTA c of the grid is CTA c mod S of its program.
    Value cta = arith::AndIOp::create(
        entry, loc, NVVM::BlockIdXOp::create(entry, loc, i32),
        arith::ConstantIntOp::create(entry, loc, i32,
                                     opts.ctasPerProgram - 1));
    Value first = arith::ShLIOp::create(
        entry, loc, cta,
        arith::ConstantIntOp::create(entry, loc, i32,
                                     llvm::Log2_64(opts.ctaThreads())));
    tid = arith::OrIOp::create(entry, loc, first, tid);
  }
  threadId = arith::IndexCastOp::create(entry, loc, entry.getIndexType(), tid);
  return threadId;
}

Value KernelLowering::getScratchView(OpBuilder &b, Location loc, Type elt,
                                     int64_t count, int64_t byteOffset) {
  Attribute space;
  if (opts.gpu)
    space = entry.getI64IntegerAttr(3);
  if (!scratchBase) {
    auto baseType = MemRefType::get({scratch.totalBytes}, entry.getI8Type(),
                                    MemRefLayoutAttrInterface(), space);
    if (opts.gpu) {
      auto module = func->getParentOfType<ModuleOp>();
      SymbolTable symbols(module);
      OpBuilder mb(module.getContext()); // no insertion point: detached op
      memref::GlobalOp global;
      if (scratch.dynamic) {
        // Dynamic shared memory: an external declaration of no elements (in
        // PTX `.extern .shared .align 16 .b8 name[]`), whose size the launch
        // gives; the views below reach past its declared size.
        baseType = MemRefType::get({0}, entry.getI8Type(),
                                   MemRefLayoutAttrInterface(), space);
        global = memref::GlobalOp::create(
            mb, func.getLoc(),
            ("__tile_dynamic_scratch_" + func.getSymName()).str(),
            /*sym_visibility=*/StringAttr(), baseType, Attribute(),
            /*constant=*/false, mb.getI64IntegerAttr(16));
      } else {
        global = memref::GlobalOp::create(
            mb, func.getLoc(), ("__tile_scratch_" + func.getSymName()).str(),
            mb.getStringAttr("private"), baseType, mb.getUnitAttr(),
            /*constant=*/false, mb.getI64IntegerAttr(16));
      }
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

Value KernelLowering::addConst(OpBuilder &b, Location loc, Value a,
                               int64_t c) {
  if (c == 0)
    return a;
  return b.createOrFold<arith::AddIOp>(loc, a, cidx(b, loc, c));
}

void KernelLowering::forEachChunk(
    OpBuilder &b, Location loc, const Layout &layout, bool needLinear,
    function_ref<void(OpBuilder &, Value, Value)> body, bool rolled) {
  assert(!layout.replicated && "replicated layouts have no chunks");
  // Chunks of a thread are Tc * v elements apart (see Layout).
  int64_t t = layout.ctaThreads, v = layout.vec;
  // Linear index of this thread's first element: tid * v, or in a program
  // split over CTAs, s * (P/S) + u * v for thread u of CTA s.
  Value threadBase;
  if (needLinear && opts.gpu) {
    Value tid = getThreadId();
    threadBase = b.createOrFold<arith::MulIOp>(loc, tid, cidx(b, loc, v));
    if (opts.ctasPerProgram > 1 && layout.chunks > 1) {
      // s * (P/S) + u * v = t * v + s * Tc * v * (C - 1), s = t / Tc.
      Value cta = b.createOrFold<arith::ShRUIOp>(
          loc, tid, cidx(b, loc, llvm::Log2_64(layout.ctaThreads)));
      threadBase = b.createOrFold<arith::AddIOp>(
          loc, threadBase,
          b.createOrFold<arith::MulIOp>(
              loc, cta,
              cidx(b, loc, layout.ctaThreads * v * (layout.chunks - 1))));
    }
  }
  // One chunk, or a gpu value small enough to unroll: constant indices.
  if (!rolled && isUnrolled(opts, layout)) {
    for (int64_t c = 0; c < layout.chunks; ++c) {
      Value k0 = cidx(b, loc, c * v);
      Value l0;
      if (needLinear)
        // On cpu (one thread) the linear index is the private index.
        l0 = opts.gpu ? addConst(b, loc, threadBase, c * t * v) : k0;
      body(b, k0, l0);
    }
    return;
  }
  auto loop = scf::ForOp::create(
      b, loc, cidx(b, loc, 0), cidx(b, loc, layout.chunks), cidx(b, loc, 1),
      ValueRange(), [&](OpBuilder &lb, Location loc, Value c, ValueRange) {
        Value k0 = lb.createOrFold<arith::MulIOp>(loc, c, cidx(lb, loc, v));
        Value l0 = k0;
        if (needLinear && opts.gpu)
          l0 = lb.createOrFold<arith::AddIOp>(
              loc, lb.createOrFold<arith::MulIOp>(loc, c, cidx(lb, loc, t * v)),
              threadBase);
        body(lb, k0, l0);
        scf::YieldOp::create(lb, loc);
      });
  // A loop asked for (rather than one too long to unroll) must stay one: LLVM
  // would otherwise unroll it again.
  if (rolled) {
    MLIRContext *ctx = b.getContext();
    auto noUnroll = LLVM::LoopUnrollAttr::get(
        ctx, /*disable=*/b.getBoolAttr(true), {}, {}, {}, {}, {}, {});
    loop->setAttr("loop_annotation",
                  LLVM::LoopAnnotationAttr::get(ctx, {}, {}, {}, noUnroll, {},
                                                {}, {}, {}, {}, {}, {}, {}, {},
                                                {}, {}));
  }
}

void KernelLowering::forEachOwned(
    OpBuilder &b, Location loc, const Layout &layout, bool needLinear,
    function_ref<void(OpBuilder &, Value, Value)> body, bool rolled) {
  if (layout.replicated) {
    Value linear;
    if (needLinear)
      linear = b.createOrFold<arith::AndIOp>(
          loc, getThreadId(), cidx(b, loc, layout.numElements - 1));
    body(b, cidx(b, loc, 0), linear);
    return;
  }
  forEachChunk(
      b, loc, layout, needLinear,
      [&](OpBuilder &b, Value k0, Value l0) {
        for (int64_t j = 0; j < layout.vec; ++j)
          body(b, addConst(b, loc, k0, j),
               needLinear ? addConst(b, loc, l0, j) : Value());
      },
      rolled);
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

Value KernelLowering::shuffleXor(OpBuilder &b, Location loc, Value v,
                                 int64_t offset) {
  assert(opts.gpu && offset < opts.warpSize() && "shuffle outside a warp");
  Type i32 = b.getI32Type();
  auto i32Const = [&](int64_t x) {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(x));
  };
  // All lanes of the warp take part (fewer when the program is smaller).
  Value mask = i32Const(opts.warpSize() == kWarpSize
                            ? -1
                            : static_cast<int32_t>((1u << opts.warpSize()) - 1));
  Value lane = i32Const(offset);
  Value clamp = i32Const(kWarpSize - 1);
  auto shfl = [&](Value x) -> Value {
    return NVVM::ShflOp::create(b, loc, x.getType(), mask, x, lane, clamp,
                                NVVM::ShflKind::bfly, UnitAttr());
  };
  Type type = v.getType();
  if (type.isF32() || type.isInteger(32))
    return shfl(v);
  if (type.getIntOrFloatBitWidth() < 32) {
    // i1, i8, i16 (accumulators of 16-bit floats are f32).
    Value wide = arith::ExtUIOp::create(b, loc, i32, v);
    return arith::TruncIOp::create(b, loc, type, shfl(wide));
  }
  // 64-bit values: two 32-bit halves.
  Type i64 = b.getI64Type();
  Value bits = type.isF64() ? arith::BitcastOp::create(b, loc, i64, v) : v;
  Value c32 = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(32));
  Value lo = arith::TruncIOp::create(b, loc, i32, bits);
  Value hi = arith::TruncIOp::create(b, loc, i32,
                                     arith::ShRUIOp::create(b, loc, bits, c32));
  lo = arith::ExtUIOp::create(b, loc, i64, shfl(lo));
  hi = arith::ExtUIOp::create(b, loc, i64, shfl(hi));
  Value joined =
      arith::OrIOp::create(b, loc, lo, arith::ShLIOp::create(b, loc, hi, c32));
  return type.isF64() ? arith::BitcastOp::create(b, loc, type, joined) : joined;
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
