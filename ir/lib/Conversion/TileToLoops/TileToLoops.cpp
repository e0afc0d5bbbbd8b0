//===- TileToLoops.cpp - tile kernels to per-thread scalar code -----------===//
//
// Implements `convert-tile-to-loops`: every `tile.kernel` function is rewritten
// so that no tensor values and no tile ops remain. Each tile SSA value lives in
// a per-thread private buffer (an entry-block `memref.alloca`); elementwise ops
// run per owned element on scalars; loads and stores become bounds-checked
// scalar accesses; layout-changing ops exchange data through a scratch buffer
// (shared memory on gpu) between barriers. See Passes.td for the mapping.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Iterators.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CastInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

#include <limits>

#define DEBUG_TYPE "convert-tile-to-loops"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTTILETOLOOPS
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;
namespace {

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
           << ", but convert-tile-to-loops needs tiles of rank >= 1 with static "
              "power-of-two dimensions and no encoding";
  if (!isSupportedElementType(ranked.getElementType()))
    return op->emitOpError()
           << "uses tile element type " << ranked.getElementType()
           << ", but convert-tile-to-loops supports i1, i8, i16, i32, i64, f16, "
              "bf16, f32, f64, f8E4M3FN and f8E5M2";
  return success();
}

/// Checks the `tile.align` argument attributes of `func`.
LogicalResult verifyAlignAttrs(func::FuncOp func) {
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Attribute attr = func.getArgAttr(i, kAlignAttrName);
    if (!attr)
      continue;
    auto align = dyn_cast<IntegerAttr>(attr);
    if (!align || !isa<MemRefType>(func.getArgument(i).getType()) ||
        align.getInt() <= 0 ||
        !llvm::isPowerOf2_64(static_cast<uint64_t>(align.getInt())))
      return func.emitError("argument ")
             << i << ": '" << kAlignAttrName
             << "' must be a positive power-of-two integer on a memref "
                "argument, got "
             << attr;
  }
  return success();
}

/// A tile.device_call's callee must be undefined in the module, or an
/// external func.func of the scalar type the call implies.
LogicalResult verifyDeviceCallee(DeviceCallOp call) {
  auto module = call->getParentOfType<ModuleOp>();
  Operation *symbol =
      module ? SymbolTable::lookupSymbolIn(module, call.getCalleeAttr())
             : nullptr;
  if (!symbol)
    return success();
  auto fn = dyn_cast<func::FuncOp>(symbol);
  if (!fn || !fn.isExternal())
    return call.emitOpError("callee '")
           << call.getCallee() << "' must be an external function";
  if (fn.getFunctionType() != deviceCalleeType(call))
    return call.emitOpError("callee '")
           << call.getCallee() << "' is declared as " << fn.getFunctionType()
           << " but called as " << deviceCalleeType(call);
  return success();
}

/// Rejects, with a diagnostic, everything in `func` the lowering cannot handle.
LogicalResult verifyTileKernel(func::FuncOp func) {
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
  if (failed(verifyAlignAttrs(func)))
    return failure();
  if (Attribute grid = func->getAttr(TileDialect::getGridAttrName())) {
    auto sizes = dyn_cast<DenseI64ArrayAttr>(grid);
    if (!sizes || sizes.size() != 3 ||
        llvm::any_of(sizes.asArrayRef(), [](int64_t g) {
          return g < 1 || g > std::numeric_limits<int32_t>::max();
        }))
      return func.emitError("'")
             << TileDialect::getGridAttrName()
             << "' must be three positive i32-sized program counts "
                "(array<i64: X, Y, Z>), got "
             << grid;
  }

  WalkResult result = func.getBody().walk<WalkOrder::PreOrder>(
      [&](Operation *op) -> WalkResult {
        if (Attribute a = op->getAttr(kInteriorAttrName);
            a && (!isa<UnitAttr>(a) || !isa<LoadOp, StoreOp, StreamCopyOp>(op))) {
          op->emitOpError("carries '")
              << kInteriorAttrName
              << "', a unit attribute of tile.load, tile.store and "
                 "tile.stream_copy only";
          return WalkResult::interrupt();
        }
        if (op->hasAttr(kRewidenAttrName) && !isRewidenable(op)) {
          op->emitOpError("carries '")
              << kRewidenAttrName
              << "', an attribute of arith.extf from a bf16 to an f32 tile "
                 "only";
          return WalkResult::interrupt();
        }
        for (Type t : op->getOperandTypes())
          if (failed(verifyTileType(op, t)))
            return WalkResult::interrupt();
        for (Type t : op->getResultTypes())
          if (failed(verifyTileType(op, t)))
            return WalkResult::interrupt();

        Dialect *dialect = op->getDialect();
        StringRef ns = dialect ? dialect->getNamespace() : StringRef();
        bool tensors = touchesTensors(op);

        if (auto call = dyn_cast<DeviceCallOp>(op))
          if (failed(verifyDeviceCallee(call)))
            return WalkResult::interrupt();
        if (isa_and_nonnull<TileDialect>(dialect))
          return WalkResult::advance();
        if (isa<scf::ForOp, scf::IfOp>(op))
          return WalkResult::advance();
        if (isa<scf::YieldOp>(op)) {
          if (tensors && !isa<scf::ForOp, scf::IfOp>(op->getParentOp())) {
            op->emitOpError("yields tiles from a '")
                << op->getParentOp()->getName()
                << "', which convert-tile-to-loops does not support";
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
  return failure(result.wasInterrupted());
}

/// Verifies and lowers one kernel.
LogicalResult lowerKernel(func::FuncOp func, LoweringOptions opts) {
  if (failed(verifyTileKernel(func)))
    return failure();
  bool chooseThreads = opts.gpu && opts.threads == 0;
  if (chooseThreads)
    opts.threads = chooseBlockSize(func);
  opts.vectorWidth = chooseVectorWidth(opts, func);
  int64_t ctas = opts.ctasPerProgram;
  opts.ctasPerProgram = 1;
  if (auto split = func->getAttrOfType<IntegerAttr>(
          TileDialect::getSplitKAttrName())) {
    // tile-split-k-loop's kernels: every CTA runs the whole program.
    if (!opts.gpu)
      return func.emitOpError()
             << "carries '" << TileDialect::getSplitKAttrName()
             << "': its programs run as several CTAs, which only the gpu "
                "target has";
    opts.splitK = split.getInt();
    ctas = 1;
  }
  if (opts.gpu && ctas == 0 && chooseThreads)
    chooseCtaSplit(func, opts);
  else if (opts.gpu && ctas > 1) {
    if (ctas > opts.threads)
      return func.emitOpError()
             << "cannot split a program of " << opts.threads
             << " threads over " << ctas << " CTAs (ctas-per-program)";
    opts.ctasPerProgram = ctas;
    if (!isExchangeFree(opts, func))
      return func.emitOpError()
             << "cannot run a program as " << ctas
             << " CTAs (ctas-per-program): its threads exchange data (a "
                "reduce, transpose, mma, device call or broadcast across "
                "threads)";
  }
  broadcastElementwiseInputs(func, opts);
  FailureOr<ScratchPlan> scratch = planScratch(opts, func);
  if (failed(scratch))
    return failure();
  if (chooseThreads && ctas == 0)
    chooseProgramsPerCta(func, opts, *scratch);
  // Counted on the tile ops, before the lowering replaces them.
  const bool reduction = opts.gpu && isReduction(func);
  const bool exchangeFree = opts.gpu && isExchangeFree(opts, func);
  if (failed(KernelLowering(func, opts, std::move(*scratch)).run()))
    return failure();
  // Programs sharing a CTA cannot share its barrier (they may take different
  // paths): chooseProgramsPerCta only groups kernels without scratch.
  if (opts.programsPerCta > 1 &&
      func.walk([](NVVM::Barrier0Op) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return func.emitOpError(
        "internal error: a barrier in a CTA shared by several programs");
  if (reduction)
    func->setAttr(TileDialect::getReductionAttrName(),
                  UnitAttr::get(func.getContext()));
  if (exchangeFree)
    func->setAttr(TileDialect::getExchangeFreeAttrName(),
                  UnitAttr::get(func.getContext()));
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

void KernelLowering::lowerBlock(Block &block) {
  const auto tileOps = llvm::count_if(block, [](Operation &op) {
    return touchesTensors(&op);
  });
  if (tileOps > opts.fuseAbove && lowerFusedElementwise(block)) {
    // What the fused loop leaves: the program ids its accesses index with.
    for (Operation &op : llvm::make_early_inc_range(block))
      if (isa<ProgramIdOp, NumProgramsOp>(op))
        lowerOp(&op);
    return;
  }
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
  if (absorbed.contains(op)) {
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
        .Case([&](DeviceCallOp o) { lowerDeviceCall(o); })
        .Case([&](StreamBufferOp o) { lowerStreamBuffer(o); })
        .Case([&](StreamCopyOp o) { lowerStreamCopy(o); })
        .Case([&](StreamTakeOp o) { lowerStreamTake(o); })
        .Case([&](StreamReadyOp o) { lowerStreamReady(o); })
        .Case([&](GridDependencyWaitOp o) { lowerGridDependencyWait(o); })
        .Case([&](SplitRankOp o) { lowerSplitRank(o); })
        .Case([&](SplitSumOp o) { lowerSplitSum(o); })
        .Case([&](StreamReleaseOp o) { lowerStreamRelease(o); })
        .Case<StreamCommitOp, StreamWaitOp>(
            [&](Operation *o) { lowerStreamSync(o); })
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
    } else if (carriedSums.contains(op)) {
      lowerCarriedSum(op);
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
  func.walk([&](BroadcastOp op) {
    if (std::optional<BroadcastLoadPlan> plan = planBroadcastLoad(opts, op)) {
      broadcastLoads[op] = plan->source;
      absorbed.insert(plan->source);
      for (ReshapeOp r : plan->reshapes)
        absorbed.insert(r);
    }
  });
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
                  entry.getI32IntegerAttr(opts.blockThreads()));
  if (opts.gpu && opts.ctasAlongX() > 1)
    func->setAttr(TileDialect::getCtasPerProgramAttrName(),
                  entry.getI32IntegerAttr(opts.ctasAlongX()));
  if (opts.gpu && opts.programsPerCta > 1)
    func->setAttr(TileDialect::getProgramsPerCtaAttrName(),
                  entry.getI32IntegerAttr(opts.programsPerCta));
  if (opts.gpu && scratch.dynamic)
    func->setAttr(TileDialect::getDynamicSharedBytesAttrName(),
                  entry.getI32IntegerAttr(scratch.totalBytes));
  WalkResult leftover = func.walk([](Operation *op) {
    if (touchesTensors(op) || isa_and_nonnull<TileDialect>(op->getDialect())) {
      op->emitOpError("was not lowered by convert-tile-to-loops");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(leftover.wasInterrupted());
}

namespace {

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct ConvertTileToLoopsPass
    : mlir::tessera::impl::ConvertTileToLoopsBase<ConvertTileToLoopsPass> {
  using ConvertTileToLoopsBase::ConvertTileToLoopsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    LoweringOptions opts;
    if (target != "cpu" && target != "gpu") {
      module.emitError("convert-tile-to-loops: target must be 'cpu' or 'gpu', "
                       "got '")
          << target << "'";
      return signalPassFailure();
    }
    opts.gpu = target == "gpu";
    auto isPow2 = [](int64_t v) {
      return v > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(v));
    };
    if ((blockSize != 0 && !isPow2(blockSize)) ||
        (ctasPerProgram != 0 && !isPow2(ctasPerProgram)) ||
        !isPow2(splitChunks) || splitChunks > kSplitCtaThreads ||
        blockSize > 1024 * std::max<int64_t>(1, ctasPerProgram) ||
        !isPow2(vectorWidth) || !isPow2(vectorBytes) || unrollLimit < 0 ||
        fuseAbove < 0 || maxSharedBytes < 0 ||
        maxSharedBytes > std::numeric_limits<int32_t>::max()) {
      module.emitError("convert-tile-to-loops: block-size must be 0 or a power "
                       "of two, at most 1024 per CTA, ctas-per-program 0 or "
                       "a power of two, split-chunks a power of two up to "
                       "256, vector-width and vector-bytes positive powers "
                       "of two, unroll-limit and fuse-above >= 0 and max-shared-bytes "
                       "between 0 and 2^31 - 1");
      return signalPassFailure();
    }
    opts.threads = opts.gpu ? blockSize : 1;
    opts.ctasPerProgram = opts.gpu ? ctasPerProgram : 1;
    opts.vectorWidth = vectorWidth;
    opts.vectorBytes = vectorBytes;
    opts.unrollLimit = unrollLimit;
    opts.fuseAbove = fuseAbove;
    opts.splitChunks = splitChunks;
    opts.expRangeTest = expRangeTest;
    opts.carriedSums = carriedSums;
    opts.maxSharedBytes = maxSharedBytes;

    SmallVector<func::FuncOp> kernels;
    module.walk([&](func::FuncOp f) {
      if (f->hasAttr(TileDialect::getKernelAttrName()))
        kernels.push_back(f);
    });
    bool failed = false;
    for (func::FuncOp kernel : kernels)
      if (mlir::failed(lowerKernel(kernel, opts)))
        failed = true;
    if (failed)
      signalPassFailure();
  }
};

} // namespace
