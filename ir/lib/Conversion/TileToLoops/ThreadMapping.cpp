//===- ThreadMapping.cpp - element <-> thread map and static plans --------===//
//
// The element <-> thread map of convert-tile-to-loops (see ThreadMapping.h) and
// the static decisions taken from it before any code is emitted: the block
// size, the kernel-wide chunk width, which broadcasts stay within a thread,
// how row reductions split into per-thread partials and warp shuffles, where
// each op exchanges data in the scratch buffer, and whether the kernel is a
// reduction (which the L2 policy of its loads follows). Everything here is
// integer arithmetic on shapes; the verifier and the lowering both call it, so
// their decisions cannot disagree.
//
//===----------------------------------------------------------------------===//

#include "KernelLowering.h"

#include "llvm/Support/MathExtras.h"

#include <limits>

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tile;

//===----------------------------------------------------------------------===//
// Type helpers
//===----------------------------------------------------------------------===//

bool mlir::tessera::tile::isSupportedElementType(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() &&
           llvm::is_contained({1u, 8u, 16u, 32u, 64u}, it.getWidth());
  return isa<Float16Type, BFloat16Type, Float32Type, Float64Type,
             Float8E4M3FNType, Float8E5M2Type>(t);
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

Type mlir::tessera::tile::accumulatorType(Type elt) {
  return isFloat16Or(elt) ? Float32Type::get(elt.getContext()) : elt;
}

//===----------------------------------------------------------------------===//
// The map
//===----------------------------------------------------------------------===//

int64_t Layout::linearOf(int64_t t, int64_t k) const {
  if (replicated)
    return t % numElements;
  int64_t cta = t / ctaThreads, u = t % ctaThreads;
  return cta * perThread * ctaThreads + ((k / vec) * ctaThreads + u) * vec +
         k % vec;
}

std::optional<int64_t> Layout::privateIndexOf(int64_t t, int64_t l) const {
  if (replicated)
    return t % numElements == l ? std::optional<int64_t>(0) : std::nullopt;
  int64_t perCta = perThread * ctaThreads;
  if (l / perCta != t / ctaThreads)
    return std::nullopt;
  int64_t chunk = l % perCta / vec;
  if (chunk % ctaThreads != t % ctaThreads)
    return std::nullopt;
  return (chunk / ctaThreads) * vec + l % vec;
}

Layout mlir::tessera::tile::getLayout(const LoweringOptions &opts,
                                      RankedTensorType type) {
  int64_t p = type.getNumElements(), t = opts.threads;
  if (p < t)
    return {p, 1, 1, 1, true, t, opts.ctaThreads()};
  int64_t n = p / t;
  int64_t v = std::min(opts.vectorWidth, n);
  return {p, n, v, n / v, false, t, opts.ctaThreads()};
}

int64_t mlir::tessera::tile::ringSlotElements(const LoweringOptions &opts,
                                              RankedTensorType type) {
  Layout layout = getLayout(opts, type);
  return layout.perThread * layout.threads;
}

bool mlir::tessera::tile::isUnrolled(const LoweringOptions &opts,
                                     const Layout &layout) {
  return layout.replicated || layout.chunks == 1 ||
         (opts.gpu && layout.perThread <= opts.unrollLimit);
}

/// How many times the tiles of `op` count in the block size choice and the
/// reduction test: kLoopTileWeight inside a loop, else once.
static int64_t tileWeight(Operation *op) {
  return op->getParentOfType<LoopLikeOpInterface>() ? kLoopTileWeight : 1;
}

/// Calls `visit` with every tile type of `func` (op results and block
/// arguments of nested regions) and its weight (see tileWeight; a loop's
/// own block arguments are inside it).
static void forEachTileType(func::FuncOp func,
                            function_ref<void(RankedTensorType, int64_t)> visit) {
  auto one = [&](Type t, int64_t weight) {
    if (auto tensor = dyn_cast<RankedTensorType>(t))
      visit(tensor, weight);
  };
  func.walk([&](Operation *op) {
    int64_t weight = tileWeight(op);
    for (Type t : op->getResultTypes())
      one(t, weight);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (Type t : block.getArgumentTypes())
          one(t, isa<LoopLikeOpInterface>(op) ? kLoopTileWeight : weight);
  });
}

/// Elements of the largest tile of `func`, those inside a loop counted
/// kLoopTileWeight times (see chooseBlockSize).
static int64_t largestTile(func::FuncOp func) {
  int64_t largest = 1;
  forEachTileType(func, [&](RankedTensorType tensor, int64_t weight) {
    if (tensor.hasStaticShape())
      largest = std::max(largest, tensor.getNumElements() * weight);
  });
  return largest;
}

int64_t mlir::tessera::tile::chooseBlockSize(func::FuncOp func) {
  uint64_t threads =
      std::max<int64_t>(1, largestTile(func) / kAutoElementsPerThread);
  return std::clamp<int64_t>(llvm::bit_floor(threads), kMinAutoBlockSize,
                             kMaxAutoBlockSize);
}

bool mlir::tessera::tile::isReduction(func::FuncOp func) {
  int64_t loaded = 0, stored = 0;
  auto bytes = [](Operation *op, Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return tileWeight(op) * tensor.getNumElements() *
           scratchElementBytes(tensor.getElementType());
  };
  func.walk([&](Operation *op) {
    if (auto load = dyn_cast<LoadOp>(op))
      loaded += bytes(op, load.getResult().getType());
    else if (auto store = dyn_cast<StoreOp>(op))
      stored += bytes(op, store.getValue().getType());
  });
  return loaded > 0 && 8 * stored <= loaded;
}

int64_t mlir::tessera::tile::chooseVectorWidth(const LoweringOptions &opts,
                                               func::FuncOp func) {
  int64_t narrowest = 0;
  forEachTileType(func, [&](RankedTensorType tensor, int64_t) {
    Type elt = tensor.getElementType();
    if (!elt.isIntOrFloat() || elt.isInteger(1))
      return;
    int64_t bytes = std::max<int64_t>(1, elt.getIntOrFloatBitWidth() / 8);
    narrowest = narrowest ? std::min(narrowest, bytes) : bytes;
  });
  if (!narrowest)
    return opts.vectorWidth;
  return std::max<int64_t>(
      1, std::min(opts.vectorWidth, opts.vectorBytes / narrowest));
}

//===----------------------------------------------------------------------===//
// Broadcasts
//===----------------------------------------------------------------------===//

std::optional<LocalBroadcastPlan>
mlir::tessera::tile::planLocalBroadcast(const LoweringOptions &opts,
                                        BroadcastOp op) {
  RankedTensorType in = op.getInput().getType(), out = op.getType();
  if (in.getShape() == out.getShape())
    return LocalBroadcastPlan{LocalBroadcastPlan::Identity, {}};
  if (in.getNumElements() == 1)
    return LocalBroadcastPlan{LocalBroadcastPlan::Splat, {}};
  if (opts.threads == 1)
    return LocalBroadcastPlan{LocalBroadcastPlan::SameThread, {}};
  Layout inLayout = getLayout(opts, in), outLayout = getLayout(opts, out);
  if (!isUnrolled(opts, outLayout))
    return std::nullopt;
  // The input element of result element l: its coordinates with the
  // broadcast dimensions set to 0.
  auto sourceOf = [&](int64_t l) {
    int64_t src = 0, inStride = 1;
    for (int64_t d = out.getRank() - 1; d >= 0; --d) {
      int64_t coord = l % out.getDimSize(d);
      l /= out.getDimSize(d);
      if (in.getDimSize(d) != 1)
        src += coord * inStride;
      inStride *= in.getDimSize(d);
    }
    return src;
  };
  LocalBroadcastPlan plan{LocalBroadcastPlan::Table, {}};
  for (int64_t k = 0; k < outLayout.perThread; ++k) {
    for (int64_t t = 0; t < opts.threads; ++t) {
      std::optional<int64_t> index =
          inLayout.privateIndexOf(t, sourceOf(outLayout.linearOf(t, k)));
      if (!index || (t > 0 && *index != plan.sourceIndex[k]))
        return std::nullopt;
      if (t == 0)
        plan.sourceIndex.push_back(*index);
    }
  }
  return plan;
}

std::optional<BroadcastLoadPlan>
mlir::tessera::tile::planBroadcastLoad(const LoweringOptions &opts,
                                       BroadcastOp op) {
  if (!opts.gpu || planLocalBroadcast(opts, op))
    return std::nullopt;
  RankedTensorType in = op.getInput().getType(), out = op.getType();
  const bool rowsKept = in.getShape().back() == out.getShape().back();
  const bool acrossRows = in.getShape().back() == 1 && out.getShape().back() > 1;
  if (!(rowsKept || acrossRows) || getLayout(opts, out).replicated)
    return std::nullopt;
  BroadcastLoadPlan plan;
  Value v = op.getInput();
  while (auto reshape = v.getDefiningOp<ReshapeOp>()) {
    if (!v.hasOneUse())
      return std::nullopt;
    plan.reshapes.push_back(reshape);
    v = reshape.getInput();
  }
  Operation *source = v.getDefiningOp();
  if (!source || !v.hasOneUse() || source->getBlock() != op->getBlock() ||
      (rowsKept && cast<RankedTensorType>(v.getType()).getShape().back() !=
                       in.getShape().back()))
    return std::nullopt;
  if (auto take = dyn_cast<StreamTakeOp>(source)) {
    auto ring = take.getRing().getDefiningOp<StreamBufferOp>();
    if (!ring || !ring.getBulk())
      return std::nullopt;
    plan.source = take;
    return plan;
  }
  auto load = dyn_cast<LoadOp>(source);
  auto func = op->getParentOfType<func::FuncOp>();
  if (!load || !func || !isKernelArgument(func, load.getSource()))
    return std::nullopt;
  WalkResult written = func.walk([&](StoreOp store) {
    return store.getDest() == load.getSource() ? WalkResult::interrupt()
                                               : WalkResult::advance();
  });
  if (written.wasInterrupted())
    return std::nullopt;
  plan.source = load;
  return plan;
}

//===----------------------------------------------------------------------===//
// Tensor-core mma
//===----------------------------------------------------------------------===//

std::optional<WarpMmaPlan>
mlir::tessera::tile::planWarpMma(const LoweringOptions &opts, MmaOp op) {
  if (!opts.gpu || opts.ctasPerProgram != 1 || opts.programsPerCta != 1 ||
      opts.ctaThreads() % kWarpSize != 0)
    return std::nullopt;
  RankedTensorType a = op.getA().getType(), bt = op.getB().getType(),
                   out = op.getType();
  // B's type is A's, or for 8-bit floats the other format (tile.mma's
  // verifier); 8-bit floats of either format are widened to f16.
  Type elt = a.getElementType();
  const bool float8 = isFloat8(elt);
  if (!(isFloat16Or(elt) || float8) || !out.getElementType().isF32())
    return std::nullopt;
  WarpMmaPlan plan;
  plan.stageType = float8 ? Float16Type::get(elt.getContext()) : elt;
  plan.m = a.getDimSize(0);
  plan.k = a.getDimSize(1);
  plan.n = bt.getDimSize(1);
  if (plan.k % 16 != 0 || plan.n % 16 != 0)
    return std::nullopt;
  auto roundUp16 = [](int64_t bytes) { return llvm::alignTo(bytes, 16); };
  plan.rowElems = plan.k + 8;
  plan.nRowElems = plan.n + 8;
  plan.aBytes = roundUp16(plan.m * plan.rowElems * 2);
  plan.outBytes = llvm::alignTo(plan.m, 16) * plan.nRowElems * 4;
  if (auto t = op.getB().getDefiningOp<TransposeOp>();
      t && t->hasOneUse() && t->getBlock() == op->getBlock())
    plan.transposedB = t;
  plan.bBytes = roundUp16(plan.transposedB ? plan.n * plan.rowElems * 2
                                           : plan.k * plan.nRowElems * 2);
  // The f32 product's rows make the plan larger than the operands the
  // element-by-element mma exchanges: a tile too large for it keeps that one.
  if (plan.scratchBytes() > opts.maxSharedBytes)
    return std::nullopt;
  return plan;
}

bool mlir::tessera::tile::isAbsorbedTranspose(const LoweringOptions &opts,
                                              TransposeOp op) {
  if (!op->hasOneUse())
    return false;
  auto mma = dyn_cast<MmaOp>(*op->getUsers().begin());
  if (!mma || mma.getB() != op.getResult())
    return false;
  std::optional<WarpMmaPlan> plan = planWarpMma(opts, mma);
  return plan && plan->transposedB == op;
}

//===----------------------------------------------------------------------===//
// Row reductions
//===----------------------------------------------------------------------===//

std::optional<RowReducePlan>
mlir::tessera::tile::planRowReduce(const LoweringOptions &opts, ReduceOp op) {
  RankedTensorType in = op.getInput().getType();
  int64_t axis = op.getAxis();
  for (int64_t d = axis + 1; d < in.getRank(); ++d)
    if (in.getDimSize(d) != 1)
      return std::nullopt; // elements of a row are not contiguous
  Layout inLayout = getLayout(opts, in);
  Layout outLayout = getLayout(opts, op.getType());
  RowReducePlan plan;
  plan.rowLength = in.getDimSize(axis);
  plan.rows = in.getNumElements() / plan.rowLength;
  // A chunk lies within a row or holds whole rows (powers of two), so a row
  // is owned by g consecutive, aligned threads holding L/g elements each.
  int64_t v = inLayout.vec;
  plan.group = std::clamp<int64_t>(plan.rowLength / v, 1, opts.threads);
  if (inLayout.replicated) // one element per thread
    plan.group = plan.rowLength;
  plan.perPartial = plan.rowLength / plan.group;
  plan.numPartials = inLayout.perThread / plan.perPartial;
  plan.warpsPerRow = std::max<int64_t>(1, plan.group / opts.warpSize());

  // Without a cross-warp step, each thread of a group holds its row's total
  // after the shuffles; the scratch is not needed if every result element is
  // owned by a thread that holds its row's total, in a partial whose index
  // does not depend on the thread.
  if (plan.warpsPerRow == 1) {
    bool ok = true;
    bool resultLoop = !isUnrolled(opts, outLayout);
    for (int64_t t = 0; ok && t < opts.threads; ++t) {
      DenseMap<int64_t, int64_t> partialOfRow;
      for (int64_t p = 0; p < plan.numPartials; ++p)
        partialOfRow[inLayout.linearOf(t, p * plan.perPartial) /
                     plan.rowLength] = p;
      for (int64_t k = 0; ok && k < outLayout.perThread; ++k) {
        auto it = partialOfRow.find(outLayout.linearOf(t, k));
        if (it == partialOfRow.end()) {
          ok = false;
        } else if (t == 0) {
          plan.partialOfResult.push_back(it->second);
          ok = !resultLoop || it->second == k;
        } else {
          ok = plan.partialOfResult[k] == it->second;
        }
      }
    }
    plan.exchangeFree = ok;
    if (!ok)
      plan.partialOfResult.clear();
  }
  if (!plan.exchangeFree)
    plan.scratchBytes =
        plan.rows * plan.warpsPerRow *
        scratchElementBytes(accumulatorType(in.getElementType()));
  return plan;
}

//===----------------------------------------------------------------------===//
// Scratch
//===----------------------------------------------------------------------===//

int64_t mlir::tessera::tile::splitSumSlots(const LoweringOptions &opts,
                                           SplitSumOp op) {
  int64_t slots = 0;
  for (Type t : op.getInputs().getTypes())
    slots += getLayout(opts, cast<RankedTensorType>(t)).perThread *
             opts.ctaThreads();
  return slots;
}

/// Scratch bytes of an op exchanging data through the shared region (0 for
/// ops that need none).
static int64_t sharedScratchBytes(const LoweringOptions &opts, Operation *op) {
  auto bytesOf = [](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getNumElements() * scratchElementBytes(t.getElementType());
  };
  if (auto b = dyn_cast<BroadcastOp>(op))
    return planLocalBroadcast(opts, b) || planBroadcastLoad(opts, b)
               ? 0
               : bytesOf(b.getInput());
  if (auto t = dyn_cast<TransposeOp>(op))
    return isAbsorbedTranspose(opts, t) ? 0 : bytesOf(t.getInput());
  if (auto r = dyn_cast<ReduceOp>(op)) {
    if (std::optional<RowReducePlan> plan = planRowReduce(opts, r))
      return plan->scratchBytes;
    return bytesOf(r.getInput());
  }
  if (auto m = dyn_cast<MmaOp>(op)) {
    if (std::optional<WarpMmaPlan> plan = planWarpMma(opts, m))
      return plan->scratchBytes();
    return bytesOf(m.getA()) + bytesOf(m.getB());
  }
  if (auto sum = dyn_cast<SplitSumOp>(op))
    return splitSumSlots(opts, sum) * 4;
  if (auto ring = dyn_cast<StreamBufferOp>(op)) {
    MemRefType type = ring.getRing().getType();
    auto slot = RankedTensorType::get(type.getShape().drop_front(),
                                      type.getElementType());
    int64_t elements = ring.getBulk() ? slot.getNumElements()
                                      : ringSlotElements(opts, slot);
    return type.getShape().front() * elements *
           scratchElementBytes(type.getElementType());
  }
  return 0;
}

/// True if `op` runs at most once per program: only scf.if between it and
/// `func`.
static bool runsOnce(Operation *op, func::FuncOp func) {
  for (Operation *p = op->getParentOp(); p && p != func; p = p->getParentOp())
    if (!isa<scf::IfOp>(p))
      return false;
  return true;
}

FailureOr<ScratchPlan>
mlir::tessera::tile::planScratch(const LoweringOptions &opts,
                                 func::FuncOp func) {
  int64_t shared = 0;
  Operation *largest = nullptr;
  SmallVector<std::pair<Operation *, int64_t>> candidates;
  // Rings of streamed loads (tile-stream-loads) get their own area after
  // everything else: they are written asynchronously while other scratch is
  // in use. The rings one loop takes from are live together; those of
  // different loops never are (a loop's copies complete within it, and each
  // thread reads back only what it copied), so loops share the area, sized
  // for the largest.
  DenseMap<Operation *, int64_t> loopRingBytes;
  SmallVector<std::pair<Operation *, std::pair<Operation *, int64_t>>> rings;
  Operation *largestRing = nullptr;
  func.walk([&](StreamBufferOp ring) {
    Operation *loop = ring;
    for (Operation *user : ring->getUsers())
      if (isa<StreamTakeOp>(user))
        loop = user->getParentOp();
    int64_t &cursor = loopRingBytes[loop];
    rings.push_back({ring, {loop, cursor}});
    cursor += llvm::alignTo(sharedScratchBytes(opts, ring), 16);
  });
  int64_t ringArea = 0;
  for (auto [loop, bytes] : loopRingBytes)
    if (bytes > ringArea) {
      ringArea = bytes;
      largestRing = loop;
    }
  func.walk([&](Operation *op) {
    if (!isa_and_nonnull<TileDialect>(op->getDialect()) ||
        isa<StreamBufferOp>(op))
      return;
    int64_t bytes = sharedScratchBytes(opts, op);
    if (bytes == 0)
      return;
    // Row reductions exchange a few partials: give them their own region
    // (no trailing barrier) when they run once.
    if (isa<ReduceOp>(op) && planRowReduce(opts, cast<ReduceOp>(op)) &&
        runsOnce(op, func)) {
      candidates.push_back({op, bytes});
      return;
    }
    if (bytes > shared) {
      shared = bytes;
      largest = op;
    }
  });
  auto align16 = [](int64_t x) { return llvm::alignTo(x, 16); };
  // The row reductions get own regions after the shared one if all fit in
  // `limit`; else they share it (which grows to the largest of them).
  auto layOut = [&](int64_t limit, int64_t &sharedBytes, Operation *&user) {
    ScratchPlan plan;
    int64_t total = align16(sharedBytes);
    for (auto [op, bytes] : candidates)
      total += align16(bytes);
    bool fits = total <= limit;
    int64_t cursor = align16(sharedBytes);
    for (auto [op, bytes] : candidates) {
      if (fits) {
        plan.privateOffset[op] = cursor;
        cursor += align16(bytes);
      } else if (bytes > sharedBytes) {
        sharedBytes = bytes;
        user = op;
      }
    }
    plan.totalBytes = fits ? cursor : sharedBytes;
    if (ringArea > 0) {
      int64_t base = align16(plan.totalBytes);
      for (auto [ring, at] : rings)
        plan.privateOffset[ring] = base + at.second;
      plan.totalBytes = base + ringArea;
      for (auto [ring, at] : rings)
        if (auto buffer = cast<StreamBufferOp>(ring); buffer.getBulk()) {
          plan.ringBarrierOffset[ring] = plan.totalBytes;
          plan.totalBytes += ringBarrierBytes(
              buffer.getRing().getType().getShape().front());
        }
    }
    return plan;
  };
  if (!opts.gpu)
    return layOut(std::numeric_limits<int64_t>::max(), shared, largest);
  // Within the static 48 KiB first: a kernel that fits is laid out as it
  // always was, as a static shared array.
  int64_t staticLimit = std::min(kMaxStaticSharedBytes, opts.maxSharedBytes);
  int64_t staticShared = shared;
  Operation *staticLargest = largest;
  ScratchPlan plan = layOut(staticLimit, staticShared, staticLargest);
  if (plan.totalBytes <= staticLimit)
    return plan;
  plan = layOut(opts.maxSharedBytes, shared, largest);
  plan.dynamic = true;
  if (plan.totalBytes > opts.maxSharedBytes && ringArea > 0 &&
      (!largest || ringArea >= shared))
    return largestRing->emitOpError()
           << "needs " << ringArea
           << " bytes of shared memory for the rings of its streamed loads "
              "(and "
           << plan.totalBytes - ringArea << " for other scratch), more than the "
           << opts.maxSharedBytes << " bytes a CTA can use on this target; "
              "run tile-stream-loads with a smaller max-bytes";
  if (plan.totalBytes > opts.maxSharedBytes)
    return largest->emitOpError()
           << "needs " << shared
           << " bytes of shared memory scratch, more than the "
           << opts.maxSharedBytes << " bytes (" << opts.maxSharedBytes / 1024
           << " KiB) of shared memory a CTA can use on this target; use "
              "smaller tiles";
  return plan;
}

//===----------------------------------------------------------------------===//
// Programs split over CTAs
//===----------------------------------------------------------------------===//

bool mlir::tessera::tile::isExchangeFree(const LoweringOptions &opts,
                                         func::FuncOp func) {
  WalkResult result = func.walk([&](Operation *op) {
    if (isa<ReduceOp, TransposeOp, MmaOp, DeviceCallOp>(op) ||
        (isa_and_nonnull<TileDialect>(op->getDialect()) &&
         sharedScratchBytes(opts, op) != 0))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

void mlir::tessera::tile::chooseProgramsPerCta(func::FuncOp func,
                                               LoweringOptions &opts,
                                               const ScratchPlan &scratch) {
  if (!opts.gpu || opts.ctasPerProgram != 1 ||
      opts.threads >= kSharedCtaThreads || scratch.totalBytes != 0)
    return;
  WalkResult result = func.walk([](DeviceCallOp) {
    return WalkResult::interrupt();
  });
  if (!result.wasInterrupted())
    opts.programsPerCta = kSharedCtaThreads / opts.threads;
}

void mlir::tessera::tile::chooseCtaSplit(func::FuncOp func,
                                         LoweringOptions &opts) {
  int64_t ctaThreads = kSplitCtaThreads / opts.splitChunks;
  int64_t threads = largestTile(func) / (opts.vectorWidth * opts.splitChunks);
  if (ctaThreads < 1 || threads < 2 * ctaThreads)
    return;
  LoweringOptions split = opts;
  split.threads = threads;
  split.ctasPerProgram = threads / ctaThreads;
  if (isExchangeFree(split, func))
    opts = split;
}
