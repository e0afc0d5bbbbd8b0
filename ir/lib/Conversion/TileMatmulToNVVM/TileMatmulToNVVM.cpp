//===- TileMatmulToNVVM.cpp - matmul tile kernels to wgmma code -----------===//
//
// Implements `convert-tile-matmul-to-nvvm` (Conversion/Passes.td). A kernel
// that matchMatmulKernel accepts gets a new body, built in front of the old
// one, which is then erased:
//
//   - shared memory: `stages` stages of [A: BK/64 boxes of BM rows x 128 B]
//     [B: BN/64 boxes of BK rows x 128 B, or BK/64 boxes of BN rows x 128 B
//     when B is K-major], each 1024-byte aligned (128-byte
//     swizzle repeats every 8 rows of 128 B), then, where the epilogue
//     stages the output, each consumer's boxes of 64 output rows x 128 B,
//     then each consumer's 64 rows of the epilogue's tiles of other
//     arguments (EpilogueTile), then a full and an empty mbarrier per stage
//     (and per consumer, for those tiles);
//   - warpgroup 0, the producer: its first thread waits for a stage to be
//     empty, expects the stage's bytes on its full barrier and issues the TMA
//     loads of A's and B's boxes for the next k-tile; after a program's
//     k-tiles, once each consumer has released its epilogue tiles, the TMA
//     loads of the program's ones;
//   - warpgroups 1 .. BM/64 (BN/64 transposed), the consumers: each waits
//     for a stage to be full, issues BK/16 wgmma m64nBNk16 for its 64 rows,
//     waits for them, releases the stage (one arrival per consumer) and,
//     after the last k-tile, runs the epilogue on its accumulator registers
//     (reading its epilogue tiles from shared memory, then releasing them)
//     and stores the tile: from registers, or (an epilogue that loads
//     nothing, an output TMA can write) through its staging boxes and TMA
//     stores that run on while it goes on to its next program;
//   - both loop over the programs of the launch in the same grouped order
//     (persistent CTAs), so that stage s and its barrier parities agree;
//   - with a split (split-k S, CTAs in clusters of S): the programs of the
//     last round, where there are no more of them than clusters, run after
//     that loop, one per cluster, each rank multiplying 1/S of the program's
//     k-tiles, the ring going on, and rank 0 adding the others' partial sums
//     through distributed shared memory (ClusterSum.h) before its epilogue;
//   - without one (halve-tail, BN 128 or 256): the programs of the last
//     round, where they are no more than half the CTAs, run after that loop
//     as halves, CTA c < 2 tail computing BN/2 columns of program whole +
//     c / 2 from column BN/2 (c mod 2), all of K, the ring going on: half of
//     B's boxes per stage, in the places of a whole program's first ones (a
//     K-major B's through a tensor map of BN/2-row boxes), wgmma m64n(BN/2);
//   - ping-pong (tiles of at most 128 x 128, without a split): two consumers
//     take the CTA's programs in turn, program j of the CTA consumer j mod
//     2's, all BM rows of it (BM/64 wgmma per K step), while the other steps
//     its ring state over the program's k-tiles; named barriers hand the
//     products from one consumer to the next, so that one's epilogue runs
//     beside the other's products.
//
// Values the kernel computed from its arguments (the loop's trip count, load
// indices of the epilogue) are cloned into the new body per program, with
// tile.program_id 0 and 1 replaced by the program's coordinates.
//
// The descriptors follow the PTX ISA's layouts for 128-byte swizzling,
// validated on an H200 against cuBLAS: A (K-major) with LBO 16 and SBO 1024
// (8 rows of 128 B), a K step of 16 elements 32 bytes into the row, the second
// consumer's 64 rows 8 KiB in; B (MN-major, transposed) with LBO the distance
// between its 64-column boxes and SBO 1024, a K step of 16 rows 2048 bytes.
// A B operand with contiguous columns (the transposed view of an [N, K]
// row-major weight) is K-major: its boxes are BN rows of 128 B of k, its
// tensor map is over [N, K], and its descriptors are A's (tnsp-b 0).
// f32 inputs run as tf32 where B is K-major (wgmma reads tf32 from K-major
// tiles only; the matcher's other f32 kernels are left to the mma.sync
// lowering): a 128-byte box row is 32 f32, a K step of wgmma m64nNk8 is the
// same 32 bytes of each row as bf16's k16, and the instruction has no
// transpose operands. wgmma reads the f32 bits and uses their tf32 part.
// f32 inputs with a row-major B run transposed, C^T = B^T A^T: the same
// shared tiles, but A's (K-major) is wgmma's B operand, of N = BM, and B^T is
// its A operand in registers, 64 x 8 per consumer and K step, read from B's
// row-major boxes with 32-bit shared loads; each consumer owns 64 columns of
// the tile, and the epilogue reads its accumulator transposed.
// 8-bit float inputs (f8E4M3FN, f8E5M2) take wgmma m64nNk32, which reads
// both operands K-major only (it has no transpose operands): B must be the
// transposed view of an [N, K] matrix. A 128-byte box row is 128 elements and
// a K step of k32 is again 32 bytes of each row, so the boxes, descriptors
// and K steps are bf16's K-major ones in bytes; the tensor maps are of bytes
// (the launcher encodes 8-bit floats as uint8).
// The fragment of m64nNk16 with f32 accumulators: register r of thread t of
// the warpgroup (warp w = t / 32, lane l) holds row 16 w + l / 4 + 8 ((r / 2)
// mod 2) and column 8 (r / 4) + 2 (l mod 4) + r mod 2.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/TileMatmulToNVVM/TileMatmulToNVVM.h"

#include "../Utils/ClusterSum.h"
#include "../Utils/HopperPtx.h"
#include "MatmulEpilogue.h"
#include "MatmulKernel.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#include <functional>
#include <tuple>
#include <map>

#define DEBUG_TYPE "convert-tile-matmul-to-nvvm"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTTILEMATMULTONVVM
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

constexpr int64_t kWarpgroup = 128;
constexpr int64_t kProducerRegisters = 40;
constexpr int64_t kConsumerRegisters = 232;
/// The fewest ring stages an epilogue's TMA-loaded tiles may leave (or the
/// stages without them, where those are fewer).
constexpr int64_t kMinStagesWithEpilogueTiles = 5;
constexpr int64_t kSwizzleBytes = 128;
constexpr int64_t kMaxStages = 6;
/// Ping-pong's two named barriers (MatmulLowering::orderBarrier): 0 is the
/// CTA's, 1 + c consumer c's (warpgroupBarrier), 3 the consumers' before a
/// split's sum (sumSplit).
constexpr int64_t kOrderBarrier = 4;

/// Sizes of one kernel's CTA, in bytes where not said otherwise.
struct Geometry {
  int64_t bm, bn, bk, stages, consumers;
  bool bKMajor;  // B's boxes are BN rows of 128 bytes of k (as A's), else BK rows of 128 bytes of n
  /// 2 (bf16, f16), 4 (f32, multiplied as tf32) or 1 (8-bit floats).
  int64_t elementBytes;
  /// The product computed transposed, C^T = B^T A^T (tf32 with a row-major
  /// B): each consumer owns 64 columns of the tile, B^T's 64 x 8 fragments
  /// are wgmma's register operand and the A tile its K-major shared operand.
  bool transposed;
  /// The N of each wgmma: the tile's columns, or its rows when transposed.
  int64_t wgmmaN() const { return transposed ? bm : bn; }
  /// The bytes of an output element where the epilogue stages each
  /// consumer's 64 rows in shared memory and stores them with TMA; 0 where it
  /// stores from registers.
  int64_t outElementBytes;
  bool tmaStore() const { return outElementBytes != 0; }
  /// Ping-pong: two consumers take the CTA's programs in turn, each
  /// multiplying all BM rows of its own; else (cooperative) every program is
  /// all consumers', each multiplying 64 rows of it.
  bool pingPong = false;
  /// The blocks of 64 rows a consumer multiplies of its programs: one
  /// accumulator, and one wgmma per K step, each.
  int64_t rowBlocks() const { return pingPong ? bm / 64 : 1; }
  /// The output's boxes: 64 rows of 128 bytes, 128-byte swizzled.
  int64_t outBoxElements() const { return kSwizzleBytes / outElementBytes; }
  int64_t outBoxBytes() const { return 64 * kSwizzleBytes; }
  /// Each consumer's staging buffer: BN / outBoxElements boxes per block of
  /// 64 rows it multiplies.
  int64_t blockStagingBytes() const { return 64 * bn * outElementBytes; }
  int64_t consumerStagingBytes() const {
    return tmaStore() ? rowBlocks() * blockStagingBytes() : 0;
  }
  int64_t stagingOffset() const { return stages * stageBytes(); }
  /// Each consumer's 64 rows of the epilogue's tiles that the producer loads
  /// with TMA (EpilogueTile), unswizzled, one after another; 0 for none.
  int64_t epilogueTileBytes = 0;
  int64_t epilogueOffset() const {
    return stagingOffset() + consumers * consumerStagingBytes();
  }
  /// The elements of a 128-byte box row: 64 bf16 or f16, 32 f32, 128 f8.
  int64_t boxElements() const { return kSwizzleBytes / elementBytes; }
  /// The wgmma K steps of a k-tile: 32 bytes of each row each (k16, k8 for
  /// tf32, k32 for 8-bit floats).
  int64_t kSteps() const { return bk * elementBytes / 32; }
  int64_t aBoxBytes() const { return bm * kSwizzleBytes; }  // BM rows of 128 B
  int64_t bBoxBytes() const { return (bKMajor ? bn : bk) * kSwizzleBytes; }
  int64_t aBytes() const { return bm * bk * elementBytes; }
  int64_t bBytes() const { return bBytes(bn); }
  int64_t stageBytes() const { return aBytes() + bBytes(); }
  int64_t barriersOffset() const {
    return epilogueOffset() + consumers * epilogueTileBytes;
  }
  /// The barriers: a full and an empty one per stage, and where the epilogue
  /// has tiles a full and an empty one per consumer.
  int64_t barrierBytes() const {
    return 16 * stages + (epilogueTileBytes ? 16 * consumers : 0);
  }
  // The barriers, and 1024 bytes to align the dynamic shared memory's start.
  int64_t sharedBytes() const { return barriersOffset() + barrierBytes() + 1024; }
  int64_t threads() const { return (consumers + 1) * kWarpgroup; }
  int64_t accumulatorRegisters() const { return wgmmaN() / 2; }
  /// A consumer thread's accumulators: one wgmma's per block of 64 rows.
  int64_t consumerAccumulators() const { return rowBlocks() * accumulatorRegisters(); }
  /// CTAs of a cluster sharing each program's k-tiles (1: none).
  int64_t splitK = 1;
  /// Without a split: the programs of the last round, where they are no
  /// more than half the CTAs, run as two halves of BN / 2 columns each, on
  /// two CTAs (all of K each, nothing to add up).
  bool halvesTail = false;
  /// The B bytes of a stage that a program of `columns` columns fills (its
  /// boxes sit where the whole program's first ones do).
  int64_t bBytes(int64_t columns) const { return bk * columns * elementBytes; }
  /// A split's partial sums: every consumer thread's accumulators, written
  /// over the stages (free once the program's k-tiles are multiplied).
  int64_t partialBytes() const {
    return consumers * kWarpgroup * accumulatorRegisters() * 4;
  }
};

/// A load of the epilogue that reads the output's own tile of another
/// argument (a residual, the gate of a SwiGLU): the producer loads it with
/// TMA into each consumer's shared memory while the consumers multiply,
/// where the epilogue would otherwise wait on its global loads.
struct EpilogueTile {
  LoadOp load;
  unsigned arg;
  int64_t elementBytes;
  /// A consumer's 64 rows of the tile, BN columns wide.
  int64_t consumerBytes(int64_t bn) const { return 64 * bn * elementBytes; }
};

/// Builds the new body of one kernel.
class MatmulLowering {
public:
  MatmulLowering(MatmulKernel k, const Geometry &g, int64_t groupM,
                 SmallVector<EpilogueTile> tiles)
      : k(k), g(g), groupM(groupM), b(k.func.getContext()),
        loc(k.func.getLoc()), tiles(std::move(tiles)) {}

  void run();

private:
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value add(Value x, Value y) { return b.createOrFold<arith::AddIOp>(loc, x, y); }
  Value mul(Value x, Value y) { return b.createOrFold<arith::MulIOp>(loc, x, y); }
  Value addConst(Value x, int64_t c) { return c ? add(x, i32(c)) : x; }
  Value mulConst(Value x, int64_t c) { return c == 1 ? x : mul(x, i32(c)); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value dimOf(Value memref, int64_t d);
  Value index(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }
  /// `v` of the old body, recomputed at the insertion point (pure scalar ops,
  /// program ids from `programIds`).
  Value materialize(Value v, IRMapping &mapping);

  void addTensorMapArguments();
  Value sharedBase();
  Value fullBarrier(Value stage) {
    return add(barriers, mulConst(stage, 8));
  }
  Value emptyBarrier(Value stage) {
    return add(barriers, addConst(mulConst(stage, 8), 8 * g.stages));
  }
  /// (pid0, pid1) of the `tile`-th program in grouped order.
  std::pair<Value, Value> programOf(Value tile);
  /// The old body's program ids as the program (pid0, pid1); pid2 is 0 (the
  /// output is 2-d: one program along z).
  IRMapping programMapping(Value pid0, Value pid1) {
    IRMapping mapping;
    k.func.walk([&](ProgramIdOp op) {
      mapping.map(op.getResult(), op.getDim() == 0   ? pid0
                                  : op.getDim() == 1 ? pid1
                                                     : i32(0));
    });
    return mapping;
  }
  /// The K loop's trip count for the current program (i32).
  Value kTiles(IRMapping &mapping);
  /// One program of this CTA: its coordinates, the old body's program ids
  /// mapped to them, and the k-tiles this CTA multiplies, kTiles of them from
  /// kFirst (all of the program's from 0, but for a split program).
  struct Program {
    Value pid0, pid1, kFirst, kTiles;
    IRMapping mapping;
    /// The tile's columns this CTA computes: `columns` from `colOffset` (i32),
    /// all BN from 0 but for half a program (Geometry::halvesTail).
    int64_t columns = 0;
    Value colOffset;
  };
  /// The program of grouped order `tile`, with its k-tiles (all of them).
  Program programAt(Value tile);
  /// The loop over this CTA's whole programs that producer and consumers
  /// share, carrying the stage and its parity from 0, with the insertion
  /// point at the start of its body, where `p` is the loop's program.
  scf::ForOp beginProgramLoop(Program &p);
  /// With a split: `scf.if` this CTA's cluster has a split program (cluster
  /// c < tail runs program whole + c), with the insertion point at the start
  /// of its then block, where `p` is that program with this rank's share of
  /// its k-tiles.
  scf::IfOp beginSplitProgram(Program &p);
  /// With halves (Geometry::halvesTail): `scf.if` this CTA has half a
  /// program (CTA c < 2 tail runs half c mod 2 of program whole + c / 2),
  /// with the insertion point at the start of its then block, where `p` is
  /// that half.
  scf::IfOp beginHalfProgram(Program &p);
  /// The producer's and the consumers' code: in the loop over programs, a
  /// loop over their k-tiles, carrying the stage and its parity.
  void buildProducer();
  void buildConsumer(Value warpgroup);
  /// The producer's loads of `p`'s k-tiles from ring state (stage, parity);
  /// returns the loop over them (results: the next stage and parity).
  scf::ForOp produceProgram(const Program &p, Value stage, Value parity);
  /// Advances (stage, parity) by one stage.
  std::pair<Value, Value> advance(Value stage, Value parity);
  /// Advances (stage, parity) by `n` stages (i32, n >= 0): past the k-tiles
  /// of a program the other consumer multiplies (ping-pong).
  std::pair<Value, Value> advanceBy(Value stage, Value parity, Value n);
  /// Ping-pong's hand-over of the products: named barrier kOrderBarrier + c
  /// is where consumer c waits for the other's products of the program
  /// before its own (`wait`, bar.sync), and where the other arrives once it
  /// has multiplied them (bar.arrive), 256 threads each time.
  void orderBarrier(Value consumer, bool wait);
  /// The index among this CTA's programs of the whole program at loop
  /// induction variable `tile`: the epilogue tiles' barriers complete once
  /// per whole program (a split program reads its tiles from global memory).
  Value wholeIndex(Value tile);
  /// Consumer `c`'s epilogue-tile barriers (EpilogueTile) and buffer of tile
  /// `t`.
  Value epilogueFull(Value c) {
    return add(barriers, addConst(mulConst(c, 8), 16 * g.stages));
  }
  Value epilogueEmpty(Value c) {
    return add(barriers, addConst(mulConst(c, 8), 16 * g.stages + 8 * g.consumers));
  }
  Value epilogueBuffer(Value c, size_t t);
  /// The producer's TMA loads of program `p`'s epilogue tiles, its `index`-th
  /// (after each consumer released the buffer of the program before).
  void loadEpilogueTiles(const Program &p, Value index);
  /// Waits for consumer `consumer`'s epilogue tiles of its `index`-th program.
  void waitEpilogueTiles(Value consumer, Value index);
  /// After the epilogue: the warpgroup has read its tiles; the buffer is the
  /// producer's again.
  void releaseEpilogueTiles(Value consumer);
  /// `body(c)` where `consumer` (i32) is c, for each consumer c: a named
  /// barrier's number must be an immediate (one in a register lived through
  /// the K loop).
  void forConsumer(Value consumer, llvm::function_ref<void(int64_t)> body);
  /// Named barrier 1 + `consumer` of the consumer warpgroup's threads.
  void warpgroupBarrier(Value consumer);
  /// `body` in the consumer warpgroup's first thread (consumerLeader) only.
  void ifConsumerLeader(llvm::function_ref<void()> body);

  /// The epilogue of `accs`, the consumer's accumulator of each of its
  /// blocks of 64 rows (Geometry::rowBlocks). `sharedTiles`: the epilogue's
  /// tiles (EpilogueTile) are in shared memory, else read from global memory.
  void buildEpilogue(ArrayRef<Value> accs, Value consumer, const Program &p,
                     IRMapping &mapping, bool sharedTiles = true);
  /// The consumer's first row of the tile (of its columns when transposed):
  /// 64 consumer, or 0 where it multiplies all of them (ping-pong).
  Value firstRowOf(Value consumer) {
    return g.pingPong ? i32(0) : mulConst(consumer, 64);
  }
  /// The stores of a transposed product's epilogue: the accumulator's rows
  /// `nRows` are the tile's columns and its columns `mCols` the tile's rows;
  /// each element is stored alone (a thread's columns are 8 apart).
  void buildTransposedStores(EpilogueValues &values, ArrayRef<Value> nRows,
                             ArrayRef<Value> mCols, Value row0, Value col0);
  /// The epilogue's stores through shared memory: each pair of adjacent
  /// values of `store` at (rows[rs], cols[cs]) written to this consumer's
  /// staging boxes (a block of them per 64 rows from `firstRow`), then TMA
  /// stores of the boxes by the warpgroup's first thread, which return
  /// before the boxes are read.
  void buildStagedStores(EpilogueValues &values, Value store,
                         ArrayRef<Value> rows, ArrayRef<Value> cols,
                         Value consumer, Value firstRow, Value row0,
                         Value col0, int64_t columns);
  /// `acc` + `part`, register by register (structs of f32 of one type).
  Value addAccumulators(Value acc, Value part);
  /// A split program's accumulators summed over the cluster's CTAs into
  /// rank 0's (ClusterSum.h): every consumer is done with the stages, ranks
  /// 1 and up write theirs over the stages, rank 0 adds them. Returns the
  /// sum in rank 0 and `acc` in the others.
  Value sumSplit(Value acc);
  /// For a transposed product: this thread's shared-memory offsets, within a
  /// stage's B tile, of its four B^T fragment elements of the first K step
  /// (registers a0..a3); K step kk is kk * 1024 bytes further.
  SmallVector<Value, 4> transposedFragmentOffsets(Value consumer);

  MatmulKernel k;
  Geometry g;
  int64_t groupM;
  OpBuilder b;
  Location loc;
  Value tid, cta, ctas, smem, barriers, tilesM, tilesN, programs;
  /// The programs run whole: the first `whole` in grouped order, each by one
  /// CTA (all of them without a split).
  Value whole;
  /// With a split: this CTA's rank in its cluster, the cluster's index, the
  /// clusters of the launch, and the programs split over a cluster's CTAs
  /// (the last `tail`, at most one per cluster).
  Value rank, cluster, clusters, tail;
  Value mapA, mapB, mapOut;
  /// With halves and a K-major B: B's map with boxes of BN / 2 rows.
  Value mapBHalf;
  /// In a consumer: whether this thread is its warpgroup's first, which
  /// issues the TMA stores and the arrivals of the epilogue tiles' release.
  Value consumerLeader;
  /// The epilogue's tiles that TMA loads, and their tensor maps.
  SmallVector<EpilogueTile> tiles;
  SmallVector<Value> tileMaps;
};

Value MatmulLowering::dimOf(Value memref, int64_t d) {
  Value dim = memref::DimOp::create(b, loc, memref, d);
  return arith::IndexCastOp::create(b, loc, b.getI32Type(), dim);
}

Value MatmulLowering::materialize(Value v, IRMapping &mapping) {
  return materializeScalar(b, k.func, v, mapping);
}

void MatmulLowering::addTensorMapArguments() {
  MLIRContext *ctx = b.getContext();
  Type ptr = LLVM::LLVMPointerType::get(ctx);
  NamedAttrList attrs;
  attrs.set(LLVM::LLVMDialect::getByValAttrName(),
            TypeAttr::get(LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 128)));
  attrs.set(LLVM::LLVMDialect::getAlignAttrName(), b.getI64IntegerAttr(64));
  DictionaryAttr dict = attrs.getDictionary(ctx);
  func::FuncOp f = k.func;
  unsigned n = f.getNumArguments();
  (void)f.insertArgument(n, ptr, dict, loc);
  (void)f.insertArgument(n + 1, ptr, dict, loc);
  mapA = f.getArgument(n);
  mapB = f.getArgument(n + 1);
  SmallVector<Attribute> maps{
      b.getDenseI64ArrayAttr({k.argA, g.boxElements(), g.bm, kSwizzleBytes}),
      b.getDenseI64ArrayAttr({k.argB, g.boxElements(), g.bKMajor ? g.bn : g.bk,
                              kSwizzleBytes})};
  if (g.tmaStore()) {
    (void)f.insertArgument(n + 2, ptr, dict, loc);
    mapOut = f.getArgument(n + 2);
    maps.push_back(b.getDenseI64ArrayAttr(
        {k.argOut, g.outBoxElements(), 64, kSwizzleBytes}));
  }
  // Each epilogue tile in boxes of 64 rows of the tile's BN columns,
  // unswizzled (a thread reads its elements at row * BN + column).
  for (const EpilogueTile &t : tiles) {
    unsigned at = f.getNumArguments();
    (void)f.insertArgument(at, ptr, dict, loc);
    tileMaps.push_back(f.getArgument(at));
    maps.push_back(b.getDenseI64ArrayAttr({t.arg, g.bn, 64, 0}));
  }
  // Half a program's B boxes: BK/64 of BN / 2 rows where B is K-major (a
  // row-major B's boxes are 64 columns wide: half a program loads half of
  // them through mapB).
  if (g.halvesTail && g.bKMajor) {
    unsigned at = f.getNumArguments();
    (void)f.insertArgument(at, ptr, dict, loc);
    mapBHalf = f.getArgument(at);
    maps.push_back(b.getDenseI64ArrayAttr({k.argB, g.boxElements(), g.bn / 2, kSwizzleBytes}));
  }
  f->setAttr(TileDialect::getTensorMapsAttrName(), b.getArrayAttr(maps));
}

Value MatmulLowering::sharedBase() {
  // Dynamic shared memory: an external array of no elements whose size the
  // launch gives (tile.dynamic_shared_bytes).
  auto module = k.func->getParentOfType<ModuleOp>();
  OpBuilder mb(module.getContext());
  auto type = LLVM::LLVMArrayType::get(mb.getI8Type(), 0);
  auto global = LLVM::GlobalOp::create(
      mb, loc, type, /*isConstant=*/false, LLVM::Linkage::External,
      ("__tile_matmul_shared_" + k.func.getSymName()).str(), Attribute(),
      /*alignment=*/1024, /*addrSpace=*/3);
  SymbolTable(module).insert(global, Block::iterator(k.func));
  Value addr = LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), global.getSymName());
  Value base = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), addr);
  // Aligned to 1024 bytes whatever the declaration's alignment became.
  return arith::AndIOp::create(b, loc, addConst(base, 1023), i32(-1024));
}

std::pair<Value, Value> MatmulLowering::programOf(Value tile) {
  // Groups of groupM rows of programs sweep the columns together: the
  // programs of a group share its B columns in L2.
  Value perGroup = mulConst(tilesN, groupM);
  Value group = arith::DivUIOp::create(b, loc, tile, perGroup);
  Value firstRow = mulConst(group, groupM);
  Value rows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, tilesM, firstRow), i32(groupM));
  Value inGroup = arith::RemUIOp::create(b, loc, tile, perGroup);
  Value pid0 = add(firstRow, arith::RemUIOp::create(b, loc, inGroup, rows));
  Value pid1 = arith::DivUIOp::create(b, loc, inGroup, rows);
  return {pid0, pid1};
}

Value MatmulLowering::kTiles(IRMapping &mapping) {
  Value ub = materialize(k.loop.getUpperBound(), mapping);
  Value n = arith::IndexCastOp::create(b, loc, b.getI32Type(), ub);
  // A negative trip count runs no iteration, as scf.for does.
  return arith::MaxSIOp::create(b, loc, n, i32(0));
}

MatmulLowering::Program MatmulLowering::programAt(Value tile) {
  Program p;
  std::tie(p.pid0, p.pid1) = programOf(tile);
  p.mapping = programMapping(p.pid0, p.pid1);
  p.kTiles = kTiles(p.mapping);
  p.kFirst = i32(0);
  p.columns = g.bn;
  p.colOffset = i32(0);
  return p;
}

scf::ForOp MatmulLowering::beginProgramLoop(Program &p) {
  auto loop = scf::ForOp::create(b, loc, cta, whole, ctas, ValueRange{i32(0), i32(0)});
  b.setInsertionPointToStart(loop.getBody());
  p = programAt(loop.getInductionVar());
  return loop;
}

scf::IfOp MatmulLowering::beginSplitProgram(Program &p) {
  auto some = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ult, cluster, tail),
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(some.thenBlock());
  p = programAt(add(whole, cluster));
  std::tie(p.kFirst, p.kTiles) = splitShare(b, loc, p.kTiles, rank, g.splitK);
  return some;
}

scf::IfOp MatmulLowering::beginHalfProgram(Program &p) {
  auto some = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ult, cta, mulConst(tail, 2)),
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(some.thenBlock());
  p = programAt(add(whole, arith::ShRUIOp::create(b, loc, cta, i32(1))));
  p.columns = g.bn / 2;
  p.colOffset = mulConst(arith::AndIOp::create(b, loc, cta, i32(1)), g.bn / 2);
  return some;
}

std::pair<Value, Value> MatmulLowering::advance(Value stage, Value parity) {
  Value next = addConst(stage, 1);
  Value wrap = cmp(arith::CmpIPredicate::eq, next, i32(g.stages));
  Value stage2 = arith::SelectOp::create(b, loc, wrap, i32(0), next);
  Value parity2 = arith::SelectOp::create(
      b, loc, wrap, arith::XOrIOp::create(b, loc, parity, i32(1)), parity);
  return {stage2, parity2};
}

std::pair<Value, Value> MatmulLowering::advanceBy(Value stage, Value parity, Value n) {
  // Position stage + n of the ring: (stage + n) mod stages, the parity
  // flipped once per wrap.
  Value at = add(stage, n);
  Value wraps = arith::DivUIOp::create(b, loc, at, i32(g.stages));
  Value stage2 = arith::SubIOp::create(b, loc, at, mulConst(wraps, g.stages));
  Value parity2 = arith::XOrIOp::create(b, loc, parity,
                                        arith::AndIOp::create(b, loc, wraps, i32(1)));
  return {stage2, parity2};
}

void MatmulLowering::orderBarrier(Value consumer, bool wait) {
  // Consumer c waits at kOrderBarrier + c, and arrives where the other waits.
  HopperPtx ptx(b, loc);
  forConsumer(consumer, [&](int64_t c) {
    if (wait)
      ptx.namedBarrier(kOrderBarrier + c, 2 * kWarpgroup);
    else
      ptx.namedBarrierArrive(kOrderBarrier + 1 - c, 2 * kWarpgroup);
  });
}

Value MatmulLowering::wholeIndex(Value tile) {
  return arith::DivUIOp::create(b, loc, arith::SubIOp::create(b, loc, tile, cta), ctas);
}

Value MatmulLowering::epilogueBuffer(Value c, size_t t) {
  int64_t before = 0;
  for (size_t i = 0; i < t; ++i)
    before += tiles[i].consumerBytes(g.bn);
  return add(addConst(smem, g.epilogueOffset() + before), mulConst(c, g.epilogueTileBytes));
}

void MatmulLowering::loadEpilogueTiles(const Program &p, Value index) {
  HopperPtx ptx(b, loc);
  Value parity = arith::AndIOp::create(b, loc, index, i32(1));
  Value free = arith::XOrIOp::create(b, loc, parity, i32(1));
  Value column = mulConst(p.pid1, g.bn);
  for (int64_t c = 0; c < g.consumers; ++c) {
    Value consumer = i32(c);
    ptx.mbarrierWait(epilogueEmpty(consumer), free);
    Value full = epilogueFull(consumer);
    ptx.mbarrierArriveExpectTx(full, g.epilogueTileBytes);
    Value row = addConst(mulConst(p.pid0, g.bm), 64 * c);
    for (size_t t = 0; t < tiles.size(); ++t)
      ptx.tmaLoad2d(epilogueBuffer(consumer, t), tileMaps[t], full, column, row);
  }
}

void MatmulLowering::waitEpilogueTiles(Value consumer, Value index) {
  HopperPtx(b, loc).mbarrierWait(epilogueFull(consumer),
                                 arith::AndIOp::create(b, loc, index, i32(1)));
}

void MatmulLowering::forConsumer(Value consumer, llvm::function_ref<void(int64_t)> body) {
  for (int64_t c = 0; c < g.consumers; ++c) {
    auto mine = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, consumer, i32(c)),
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(mine.thenBlock());
    body(c);
  }
}

void MatmulLowering::warpgroupBarrier(Value consumer) {
  // 0 is the CTA's.
  HopperPtx ptx(b, loc);
  forConsumer(consumer, [&](int64_t c) { ptx.namedBarrier(1 + c, kWarpgroup); });
}

void MatmulLowering::ifConsumerLeader(llvm::function_ref<void()> body) {
  auto op = scf::IfOp::create(b, loc, consumerLeader, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(op.thenBlock());
  body();
}

void MatmulLowering::releaseEpilogueTiles(Value consumer) {
  HopperPtx ptx(b, loc);
  warpgroupBarrier(consumer);
  ifConsumerLeader([&] {
    // The reads (generic proxy) before the next TMA writes (async proxy).
    ptx.fenceProxyAsyncShared();
    ptx.mbarrierArrive(epilogueEmpty(consumer));
  });
}

scf::ForOp MatmulLowering::produceProgram(const Program &p, Value stage0, Value parity0) {
  HopperPtx ptx(b, loc);
  OpBuilder::InsertionGuard guard(b);
  auto ks = scf::ForOp::create(b, loc, i32(0), p.kTiles, i32(1), ValueRange{stage0, parity0});
  b.setInsertionPointToStart(ks.getBody());
  Value kt = ks.getInductionVar();
  Value stage = ks.getRegionIterArgs()[0], parity = ks.getRegionIterArgs()[1];
  ptx.mbarrierWait(emptyBarrier(stage),
                   arith::XOrIOp::create(b, loc, parity, i32(1)));
  Value full = fullBarrier(stage);
  ptx.mbarrierArriveExpectTx(full, g.aBytes() + g.bBytes(p.columns));
  Value a = add(smem, mulConst(stage, g.stageBytes()));
  Value bb = addConst(a, g.aBytes());
  Value kElement = mulConst(add(p.kFirst, kt), g.bk);
  Value row = mulConst(p.pid0, g.bm);
  for (int64_t box = 0; box < g.bk / g.boxElements(); ++box)
    ptx.tmaLoad2d(addConst(a, box * g.aBoxBytes()), mapA, full,
                  addConst(kElement, box * g.boxElements()), row);
  Value column = add(mulConst(p.pid1, g.bn), p.colOffset);
  if (g.bKMajor) {
    // B's map is over the [N, K] matrix: k is the inner coordinate.
    Value map = p.columns == g.bn ? mapB : mapBHalf;
    for (int64_t box = 0; box < g.bk / g.boxElements(); ++box)
      ptx.tmaLoad2d(addConst(bb, box * g.bBoxBytes()), map, full,
                    addConst(kElement, box * g.boxElements()), column);
  } else {
    for (int64_t box = 0; box < p.columns / g.boxElements(); ++box)
      ptx.tmaLoad2d(addConst(bb, box * g.bBoxBytes()), mapB, full,
                    addConst(column, box * g.boxElements()), kElement);
  }
  auto [s2, p2] = advance(stage, parity);
  scf::YieldOp::create(b, loc, ValueRange{s2, p2});
  return ks;
}

void MatmulLowering::buildProducer() {
  HopperPtx ptx(b, loc);
  ptx.setMaxRegisters(kProducerRegisters, /*increase=*/false);
  // The first thread loads; the ring's stage and parity after the whole
  // programs are its (0 in the others, which never use them).
  Value loads = cmp(arith::CmpIPredicate::eq, tid, i32(0));
  Type i32Type = b.getI32Type();
  auto first = scf::IfOp::create(b, loc, TypeRange{i32Type, i32Type}, loads,
                                 /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(first.thenBlock());
    Program p;
    scf::ForOp loop = beginProgramLoop(p);
    scf::ForOp ks = produceProgram(p, loop.getRegionIterArgs()[0], loop.getRegionIterArgs()[1]);
    // The epilogue's tiles once the program's k-tiles are issued: they land
    // while the consumers multiply the last stages.
    if (!tiles.empty())
      loadEpilogueTiles(p, wholeIndex(loop.getInductionVar()));
    scf::YieldOp::create(b, loc, ks.getResults());
    b.setInsertionPointAfter(loop);
    scf::YieldOp::create(b, loc, loop.getResults());
    b.setInsertionPointToStart(first.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{i32(0), i32(0)});
  }
  if (g.halvesTail) {
    // This CTA's half program, the ring going on.
    OpBuilder::InsertionGuard guard(b);
    Program h;
    beginHalfProgram(h);
    auto mine = scf::IfOp::create(b, loc, loads, /*withElseRegion=*/false);
    b.setInsertionPointToStart(mine.thenBlock());
    produceProgram(h, first.getResult(0), first.getResult(1));
    return;
  }
  if (g.splitK == 1)
    return;
  // The cluster's split program: the first thread loads this rank's share of
  // its k-tiles, the ring going on; the producer's threads take part in the
  // two cluster barriers of the consumers' sum (sumSplit).
  OpBuilder::InsertionGuard guard(b);
  Program q;
  beginSplitProgram(q);
  auto mine = scf::IfOp::create(b, loc, loads, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inIf(b);
    b.setInsertionPointToStart(mine.thenBlock());
    produceProgram(q, first.getResult(0), first.getResult(1));
  }
  ptx.clusterBarrier();
  ptx.clusterBarrier();
}

void MatmulLowering::buildConsumer(Value warpgroup) {
  HopperPtx ptx(b, loc);
  ptx.setMaxRegisters(kConsumerRegisters, /*increase=*/true);
  Value consumer = addConst(warpgroup, -1);
  Value lane = arith::RemUIOp::create(b, loc, tid, i32(kWarpgroup));
  consumerLeader = cmp(arith::CmpIPredicate::eq, lane, i32(0));
  // The accumulator of a program of `columns` columns (BN, or BN / 2 for
  // half a program; BM's when transposed), one per block of 64 rows.
  auto accumulatorType = [&](int64_t columns) {
    SmallVector<Type> fields(g.transposed ? g.accumulatorRegisters() : columns / 2,
                             b.getF32Type());
    return LLVM::LLVMStructType::getLiteral(b.getContext(), fields);
  };
  const int64_t blocks = g.rowBlocks();
  // The A rows of this consumer within each A box (all BM rows when
  // transposed: A is then wgmma's B operand; block m's 64 rows from 64 m
  // in ping-pong).
  Value aRows = mulConst(consumer, g.transposed || g.pingPong ? 0 : 64 * kSwizzleBytes);
  SmallVector<Value, 4> fragment;
  if (g.transposed)
    fragment = transposedFragmentOffsets(consumer);

  // Ping-pong keeps one k-tile's products in flight while it issues the
  // next (wgmma.wait_group 1, then the stage before is released): its
  // products run on one warpgroup at a time, where draining the tensor
  // cores at every k-tile would leave them idle between k-tiles. The loop
  // then also carries the stage to release.
  const bool inFlight = g.pingPong;
  // The loop over program `p`'s k-tiles from ring state (stage, parity), its
  // results the next stage and parity and the accumulator of each block.
  auto multiply = [&](const Program &p, Value stage0, Value parity0) {
    OpBuilder::InsertionGuard inner(b);
    Type accType = accumulatorType(p.columns);
    Value kTiles = p.kTiles;
    // The accumulators start as zeros, or with one k-tile in flight
    // undefined (the first products' scale-d 0 ignores them): ptxas
    // serializes wgmma when other instructions write their registers, such
    // as the zeros' moves, inside a pipeline that spans the loop's
    // iterations.
    Value init = inFlight ? LLVM::UndefOp::create(b, loc, accType).getResult()
                          : LLVM::ZeroOp::create(b, loc, accType).getResult();
    SmallVector<Value> inits{stage0, parity0};
    inits.append(blocks, init);
    if (inFlight)
      inits.push_back(stage0);
    auto ks = scf::ForOp::create(b, loc, i32(0), kTiles, i32(1), inits);
    b.setInsertionPointToStart(ks.getBody());
    Value kt = ks.getInductionVar();
    Value stage = ks.getRegionIterArgs()[0], parity = ks.getRegionIterArgs()[1];
    SmallVector<Value> accs(ks.getRegionIterArgs().slice(2, blocks));
    ptx.mbarrierWait(fullBarrier(stage), parity);
    Value a = add(smem, mulConst(stage, g.stageBytes()));
    Value bb = addConst(a, g.aBytes());
    Value aMine = add(a, aRows);
    Value notFirst = arith::ExtUIOp::create(
        b, loc, b.getI32Type(), cmp(arith::CmpIPredicate::ne, kt, i32(0)));
    // A transposed product's B^T fragments of the whole k-tile go to
    // registers first: the fence orders those writes before the wgmmas.
    SmallVector<SmallVector<Value, 4>> bT;
    if (g.transposed) {
      Type ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
      bT.resize(g.kSteps());
      for (int64_t kk = 0; kk < g.kSteps(); ++kk)
        for (Value offset : fragment) {
          Value at = LLVM::IntToPtrOp::create(
              b, loc, ptrType, addConst(add(bb, offset), kk * 1024));
          bT[kk].push_back(LLVM::LoadOp::create(b, loc, b.getI32Type(), at));
        }
    }
    // 8-bit floats: wgmma keeps only 13 bits of its sum (truncated), so each
    // k-tile's products go to a partial started at zero (its values undefined:
    // scale-d 0 ignores them) that is added in f32 after the wait, as cuBLAS
    // does without fast accumulation: the error stays a few 2^-13 of one
    // k-tile's products instead of growing with K. The partial needs
    // registers of its own (isHopperTile: BN <= 128).
    const bool promote = k.float8();
    SmallVector<Value> sums;
    for (Value acc : accs)
      sums.push_back(promote ? LLVM::UndefOp::create(b, loc, accType).getResult() : acc);
    ptx.wgmmaFence();
    for (int64_t kk = 0; kk < g.kSteps(); ++kk) {
      // scale-d 0 on the first product of the program (of the k-tile when
      // promoting): the sum starts at 0.
      Value scaleD = kk == 0 ? (promote ? i32(0) : notFirst) : i32(1);
      // K-major B is addressed as A is; MN-major B steps 16 rows of 128 B.
      Value db;
      if (!g.transposed)
        db = g.bKMajor
                 ? ptx.matrixDescriptor(addConst(bb, (kk / 4) * g.bBoxBytes() + (kk % 4) * 32), 16, 1024)
                 : ptx.matrixDescriptor(addConst(bb, kk * 2048), g.bBoxBytes(), 1024);
      for (int64_t m = 0; m < blocks; ++m) {
        int64_t aOffset = (kk / 4) * g.aBoxBytes() + (kk % 4) * 32 + m * 64 * kSwizzleBytes;
        Value da = ptx.matrixDescriptor(addConst(aMine, aOffset), 16, 1024);
        if (g.transposed) {
          // C^T += B^T A^T: A's K-major tile is wgmma's B operand.
          sums[m] = ptx.wgmmaTf32RegisterA(sums[m], bT[kk], da, scaleD, g.wgmmaN());
          continue;
        }
        sums[m] = ptx.wgmma(sums[m], da, db, scaleD, p.columns, k.inputType,
                            /*transposeB=*/!g.bKMajor, k.inputTypeB);
      }
    }
    ptx.wgmmaCommitGroup();
    ptx.wgmmaWaitGroup(inFlight ? 1 : 0);
    for (int64_t m = 0; m < blocks; ++m)
      accs[m] = promote ? addAccumulators(accs[m], sums[m]) : sums[m];
    // The stage whose products are done: this one, or with one k-tile in
    // flight the one before (none before the first).
    Value done = inFlight ? ks.getRegionIterArgs().back() : stage;
    Value releases = inFlight ? arith::AndIOp::create(b, loc, consumerLeader,
                                                      cmp(arith::CmpIPredicate::ne, kt, i32(0)))
                              : consumerLeader;
    auto release = scf::IfOp::create(b, loc, releases, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(release.thenBlock());
      ptx.mbarrierArrive(emptyBarrier(done));
    }
    auto [s2, p2] = advance(stage, parity);
    SmallVector<Value> yields{s2, p2};
    yields.append(accs);
    if (inFlight)
      yields.push_back(stage);
    scf::YieldOp::create(b, loc, yields);
    if (inFlight) {
      // The last k-tile's products, and its stage released.
      // (The wait on every path: ptxas serializes wgmma where it must
      // insert a wait of its own on a path that may diverge.)
      b.setInsertionPointAfter(ks);
      ptx.wgmmaWaitGroup(0);
      Value any = cmp(arith::CmpIPredicate::sgt, kTiles, i32(0));
      auto last = scf::IfOp::create(b, loc, arith::AndIOp::create(b, loc, consumerLeader, any),
                                    /*withElseRegion=*/false);
      b.setInsertionPointToStart(last.thenBlock());
      ptx.mbarrierArrive(emptyBarrier(ks.getResults().back()));
    }
    return ks;
  };
  // The accumulators after the loop; with one k-tile in flight, zeros where
  // there was no k-tile (K = 0), selected after the wait.
  auto accumulators = [&](scf::ForOp ks) {
    SmallVector<Value> accs(ks.getResults().slice(2, blocks));
    if (inFlight) {
      Value any = cmp(arith::CmpIPredicate::sgt, ks.getUpperBound(), i32(0));
      Value zero = LLVM::ZeroOp::create(b, loc, accs.front().getType());
      for (Value &acc : accs)
        acc = arith::SelectOp::create(b, loc, any, acc, zero);
    }
    return accs;
  };

  OpBuilder::InsertionGuard guard(b);
  Program p;
  scf::ForOp loop = beginProgramLoop(p);
  Value stage = loop.getRegionIterArgs()[0], parity = loop.getRegionIterArgs()[1];
  if (g.pingPong) {
    // Program j of this CTA is consumer j mod 2's; the other steps over its
    // k-tiles. The products go in program order: the consumer of program
    // j > 0 waits until program j - 1's are done, so every stage it waits
    // for has had its earlier phases, and hands over once its own are.
    Value tile = loop.getInductionVar();
    Value j = wholeIndex(tile);
    Value mine = cmp(arith::CmpIPredicate::eq, arith::AndIOp::create(b, loc, j, i32(1)), consumer);
    Type i32Type = b.getI32Type();
    auto turn = scf::IfOp::create(b, loc, TypeRange{i32Type, i32Type}, mine,
                                  /*withElseRegion=*/true);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(turn.thenBlock());
      auto after = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ne, j, i32(0)),
                                     /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inAfter(b);
        b.setInsertionPointToStart(after.thenBlock());
        orderBarrier(consumer, /*wait=*/true);
      }
      scf::ForOp ks = multiply(p, stage, parity);
      auto next = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ult, add(tile, ctas), whole),
                                    /*withElseRegion=*/false);
      {
        OpBuilder::InsertionGuard inNext(b);
        b.setInsertionPointToStart(next.thenBlock());
        orderBarrier(consumer, /*wait=*/false);
      }
      buildEpilogue(accumulators(ks), consumer, p, p.mapping, /*sharedTiles=*/false);
      scf::YieldOp::create(b, loc, ValueRange{ks.getResult(0), ks.getResult(1)});
      b.setInsertionPointToStart(turn.elseBlock());
      auto [s2, p2] = advanceBy(stage, parity, p.kTiles);
      scf::YieldOp::create(b, loc, ValueRange{s2, p2});
    }
    scf::YieldOp::create(b, loc, turn.getResults());
  } else {
    scf::ForOp ks = multiply(p, stage, parity);
    if (!tiles.empty())
      waitEpilogueTiles(consumer, wholeIndex(loop.getInductionVar()));
    buildEpilogue(accumulators(ks), consumer, p, p.mapping);
    if (!tiles.empty())
      releaseEpilogueTiles(consumer);
    scf::YieldOp::create(b, loc, ValueRange{ks.getResult(0), ks.getResult(1)});
  }
  b.setInsertionPointAfter(loop);
  if (g.halvesTail) {
    // Half a program, its epilogue's tiles of other arguments read from
    // global memory (the producer loads them for whole programs only).
    Program h;
    scf::IfOp some = beginHalfProgram(h);
    scf::ForOp half = multiply(h, loop.getResult(0), loop.getResult(1));
    buildEpilogue(accumulators(half), consumer, h, h.mapping, /*sharedTiles=*/false);
    b.setInsertionPointAfter(some);
  }
  if (g.splitK > 1) {
    Program q;
    scf::IfOp some = beginSplitProgram(q);
    scf::ForOp split = multiply(q, loop.getResult(0), loop.getResult(1));
    Value sum = sumSplit(split.getResult(2));
    auto lead = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, rank, i32(0)),
                                  /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(lead.thenBlock());
      // Its epilogue reads other arguments' tiles from global memory: the
      // shared reads beside rank 0's loads of the partial sums made ptxas
      // spill at S = 4 and 8.
      buildEpilogue({sum}, consumer, q, q.mapping, /*sharedTiles=*/false);
    }
    b.setInsertionPointAfter(some);
  }
  if (g.tmaStore()) {
    // The CTA's shared memory must outlive the last stores' reads of it.
    auto last = scf::IfOp::create(b, loc, consumerLeader, /*withElseRegion=*/false);
    b.setInsertionPointToStart(last.thenBlock());
    ptx.bulkWaitGroup(0, /*readOnly=*/false);
  }
}

Value MatmulLowering::addAccumulators(Value acc, Value part) {
  const int64_t regs = cast<LLVM::LLVMStructType>(acc.getType()).getBody().size();
  for (int64_t r = 0; r < regs; ++r) {
    Value sum = arith::AddFOp::create(
        b, loc, LLVM::ExtractValueOp::create(b, loc, acc, r),
        LLVM::ExtractValueOp::create(b, loc, part, r));
    acc = LLVM::InsertValueOp::create(b, loc, acc, sum, r);
  }
  return acc;
}

Value MatmulLowering::sumSplit(Value acc) {
  HopperPtx ptx(b, loc);
  const int64_t regs = g.accumulatorRegisters();
  const int64_t threads = g.consumers * kWarpgroup;
  // Register e of consumer thread t (t counted over the consumers) at slot
  // e * threads + t: a warp's stores and loads are consecutive words.
  Value t = addConst(tid, -kWarpgroup);
  auto slot = [&](int64_t e) { return mulConst(addConst(t, e * threads), 4); };
  SmallVector<Value> own;
  for (int64_t r = 0; r < regs; ++r)
    own.push_back(LLVM::ExtractValueOp::create(b, loc, acc, r));
  // Every consumer has multiplied its last stage before any partial
  // overwrites it: named barrier 1 + consumers, of the consumers' threads
  // (0 is the CTA's, 1 + c consumer c's in buildStagedStores).
  ptx.namedBarrier(1 + g.consumers, threads);
  Type ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  SmallVector<Value> sum = sumOverCluster(
      b, loc, rank, g.splitK, own,
      [&] {
        for (int64_t e = 0; e < regs; ++e) {
          Value at = LLVM::IntToPtrOp::create(b, loc, ptrType, add(smem, slot(e)));
          LLVM::StoreOp::create(b, loc, own[e], at);
        }
      },
      [&](Value peer, SmallVectorImpl<Value> &sum) {
        // One mapped address per peer, the registers' slots as immediate
        // offsets from it (an address register per load spilled).
        Value base = ptx.mapShared(add(smem, slot(0)), peer);
        for (int64_t e = 0; e < regs; ++e)
          sum[e] = arith::AddFOp::create(b, loc, sum[e],
                                         ptx.loadClusterSharedF32(base, e * threads * 4));
      });
  Value out = LLVM::UndefOp::create(b, loc, acc.getType());
  for (int64_t r = 0; r < regs; ++r)
    out = LLVM::InsertValueOp::create(b, loc, out, sum[r], r);
  return out;
}

SmallVector<Value, 4>
MatmulLowering::transposedFragmentOffsets(Value consumer) {
  // Register i of K step 0 holds B^T (n, k) = B (k, n) at n = 64 consumer +
  // 16 warp + g + 8 h, k = t + 4 q (lane = 4 g + t, h = i mod 2, q = i / 2).
  // B's boxes hold 32 columns each: n is element g mod 4 of 16-byte chunk
  // 4 (warp mod 2) + 2 h + g / 4 of row k of box 2 consumer + warp / 2, and
  // the 128-byte swizzle XORs the chunk with k mod 8 = t + 4 q. The three
  // terms of the chunk have disjoint bits, as t and 4 q have, so the swizzled
  // chunk is (4 (warp mod 2) + g / 4) ^ t, a lane's, XOR 2 h + 4 q, a
  // register's.
  Value lane = arith::RemUIOp::create(b, loc, tid, i32(kWarpgroup));
  Value warp = arith::DivUIOp::create(b, loc, lane, i32(32));
  Value l = arith::RemUIOp::create(b, loc, lane, i32(32));
  Value grp = arith::DivUIOp::create(b, loc, l, i32(4));
  Value t = arith::RemUIOp::create(b, loc, l, i32(4));
  Value box = add(mulConst(consumer, 2), arith::DivUIOp::create(b, loc, warp, i32(2)));
  Value chunk = arith::XOrIOp::create(
      b, loc,
      add(mulConst(arith::RemUIOp::create(b, loc, warp, i32(2)), 4),
          arith::DivUIOp::create(b, loc, grp, i32(4))),
      t);
  Value base = add(add(mulConst(box, g.bBoxBytes()), mulConst(t, kSwizzleBytes)),
                   mulConst(arith::RemUIOp::create(b, loc, grp, i32(4)), 4));
  SmallVector<Value, 4> offsets;
  for (int64_t i = 0; i < 4; ++i) {
    const int64_t h = i % 2, q = i / 2;
    Value c = arith::XOrIOp::create(b, loc, chunk, i32(2 * h + 4 * q));
    offsets.push_back(add(addConst(base, q * 4 * kSwizzleBytes), mulConst(c, 16)));
  }
  return offsets;
}

void MatmulLowering::buildEpilogue(ArrayRef<Value> accs, Value consumer, const Program &p,
                                   IRMapping &mapping, bool sharedTiles) {
  // This thread's accumulator rows (two per block of 64) and columns
  // (wgmmaN / 4) of its wgmma tiles: the tile's rows and columns, or its
  // columns and rows when transposed; half a program's columns from its
  // offset in the tile.
  Value lane = arith::RemUIOp::create(b, loc, tid, i32(kWarpgroup));
  Value warp = arith::DivUIOp::create(b, loc, lane, i32(32));
  Value l = arith::RemUIOp::create(b, loc, lane, i32(32));
  Value firstRow = firstRowOf(consumer);
  Value rowBase = add(add(firstRow, mulConst(warp, 16)),
                      arith::DivUIOp::create(b, loc, l, i32(4)));
  Value colBase = add(mulConst(arith::RemUIOp::create(b, loc, l, i32(4)), 2), p.colOffset);
  const int64_t regs = cast<LLVM::LLVMStructType>(accs.front().getType()).getBody().size();
  SmallVector<Value> rows;
  for (int64_t m = 0; m < static_cast<int64_t>(accs.size()); ++m) {
    rows.push_back(addConst(rowBase, 64 * m));
    rows.push_back(addConst(rowBase, 64 * m + 8));
  }
  SmallVector<Value> cols;
  for (int64_t c = 0; c < regs / 2; ++c)
    cols.push_back(addConst(colBase, 8 * (c / 2) + c % 2));
  DenseMap<Value, int64_t> rowOf, colOf;
  for (auto [i, v] : llvm::enumerate(rows))
    rowOf[v] = static_cast<int64_t>(i);
  for (auto [i, v] : llvm::enumerate(cols))
    colOf[v] = static_cast<int64_t>(i);
  // The accumulator's element at tile coordinates (row, col): its register
  // of accumulator row rs and column cs (of block rs / 2's accumulator),
  // which are the tile's column and row in a transposed product.
  EpilogueValues values(
      b, loc, k, [&](Value v) { return materialize(v, mapping); },
      [&](Value row, Value col) -> Value {
        if (g.transposed)
          std::swap(row, col);
        const int64_t rs = rowOf.lookup(row), cs = colOf.lookup(col);
        const int64_t r = 4 * (cs / 2) + 2 * (rs % 2) + cs % 2;
        return LLVM::ExtractValueOp::create(b, loc, accs[rs / 2], r);
      });
  // The epilogue's tiles in this consumer's shared memory (cooperative
  // only): row r of the tile (64 consumer + its row in the buffer), column c
  // at (r' BN + c) e.
  if (sharedTiles && !tiles.empty()) {
    Type ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
    SmallVector<Value> buffers;
    for (size_t t = 0; t < tiles.size(); ++t)
      buffers.push_back(epilogueBuffer(consumer, t));
    values.sharedTile = [&, buffers, firstRow, ptrType](LoadOp load, ArrayRef<Value> coords) -> Value {
      for (auto [t, tile] : llvm::enumerate(tiles)) {
        if (tile.load != load)
          continue;
        Value local = arith::SubIOp::create(b, loc, coords[0], firstRow);
        Value element = add(mulConst(local, g.bn), coords[1]);
        Value at = add(buffers[t], mulConst(element, tile.elementBytes));
        return LLVM::LoadOp::create(b, loc, load.getType().getElementType(),
                                    LLVM::IntToPtrOp::create(b, loc, ptrType, at));
      }
      return Value();
    };
  }
  Value row0 = mulConst(p.pid0, g.bm), col0 = mulConst(p.pid1, g.bn);
  if (g.transposed) {
    buildTransposedStores(values, rows, cols, row0, col0);
    return;
  }
  Value out = k.func.getArgument(k.argOut);
  Value height = dimOf(out, 0), width = dimOf(out, 1);
  if (g.tmaStore()) {
    buildStagedStores(values, k.store.getValue(), rows, cols, consumer, firstRow, row0,
                      add(col0, p.colOffset), p.columns);
    return;
  }
  // Pairs of columns as one store where the rows are contiguous and aligned.
  const bool pairs = storesColumnPairs(k);
  // Each pair of values is computed outside the bounds tests (the epilogue's
  // loads read an in-bounds element either way), so that a value both rows
  // use, such as a bias element, is computed once, and stored right after,
  // so that few results are live at a time.
  storeFromRegisters(b, loc, values, k.store.getValue(), out, rows, cols, row0,
                     col0, height, width, pairs);
}

void MatmulLowering::buildStagedStores(EpilogueValues &values, Value store,
                                       ArrayRef<Value> rows,
                                       ArrayRef<Value> cols, Value consumer,
                                       Value firstRow, Value row0, Value col0,
                                       int64_t columns) {
  HopperPtx ptx(b, loc);
  Value lane = arith::RemUIOp::create(b, loc, tid, i32(kWarpgroup));
  Value staging = add(addConst(smem, g.stagingOffset()),
                      mulConst(consumer, g.consumerStagingBytes()));
  // The previous program's stores have read the buffer.
  ifConsumerLeader([&] { ptx.bulkWaitGroup(0, /*readOnly=*/true); });
  warpgroupBarrier(consumer);
  // Row r of the consumer's rows is row r mod 64 of a box of block r / 64;
  // row r of a box is at r * 128 bytes, its 16-byte chunk c at (c ^ (r mod
  // 8)) * 16 (the 128-byte swizzle of the output's tensor map). Column pair
  // cs of the thread is column 2 (lane mod 4) + 8 (cs / 2) of the tile: box
  // 8 (cs / 2) / outBoxElements, byte (8 (cs / 2) mod outBoxElements) e +
  // 2 (lane mod 4) e of its row (e bytes an element). The first term is a
  // whole number of chunks and the second less than 8 e bytes, so the chunk
  // is a constant XOR a lane's part, and the swizzle XORs the lane's part
  // with its row once.
  Type elt = cast<MemRefType>(k.func.getArgument(k.argOut).getType()).getElementType();
  auto pairType = VectorType::get({2}, elt);
  Type ptrType = LLVM::LLVMPointerType::get(b.getContext(), 3);
  const int64_t e = g.outElementBytes;
  Value laneByte = mulConst(arith::RemUIOp::create(b, loc, lane, i32(4)), 2 * e);
  Value within = arith::AndIOp::create(b, loc, laneByte, i32(15));
  Value laneChunk = arith::ShRUIOp::create(b, loc, laneByte, i32(4));
  // The rows are two per block of 64 (buildEpilogue), rows[2 m + h] =
  // rows[0] + 64 m + 8 h with rows[0] - firstRow below 64: each row's place is
  // the first's and a constant, which ptxas folds into the stores'
  // addresses, and all share the first's swizzle (a row's mod 8).
  Value local = arith::SubIOp::create(b, loc, rows.front(), firstRow);
  Value rowBase = add(add(staging, mulConst(local, kSwizzleBytes)), within);
  Value laneX = arith::XOrIOp::create(b, loc, laneChunk,
                                      arith::AndIOp::create(b, loc, local, i32(7)));
  SmallVector<Value, 4> rowBases;
  for (size_t rs = 0; rs < rows.size(); ++rs)
    rowBases.push_back(addConst(rowBase, static_cast<int64_t>(rs / 2) * g.blockStagingBytes() +
                                             static_cast<int64_t>(rs % 2) * 8 * kSwizzleBytes));
  // Columns outer, rows inner: a value both rows use (a bias element) is
  // live for one column pair only.
  const size_t batch = EpilogueValues::preloadColumns(cols.size());
  for (size_t cs = 0; cs + 1 < cols.size(); cs += 2) {
    if (cs % batch == 0)
      values.preload(store, rows,
                     ArrayRef(cols).slice(cs, std::min(batch, cols.size() - cs)));
    const int64_t first = 8 * static_cast<int64_t>(cs / 2);
    const int64_t box = first / g.outBoxElements();
    const int64_t chunk = (first % g.outBoxElements()) * e / 16;
    for (auto [rs, row] : llvm::enumerate(rows)) {
      Value v0 = values.at(store, {row, cols[cs]});
      Value v1 = values.at(store, {row, cols[cs + 1]});
      Value swizzled = arith::XOrIOp::create(b, loc, laneX, i32(chunk));
      Value at = add(addConst(rowBases[rs], box * g.outBoxBytes()),
                     arith::ShLIOp::create(b, loc, swizzled, i32(4)));
      Value pair = vector::FromElementsOp::create(b, loc, pairType, ValueRange{v0, v1});
      LLVM::StoreOp::create(b, loc, pair, LLVM::IntToPtrOp::create(b, loc, ptrType, at),
                            /*alignment=*/2 * e);
    }
  }
  // The writes, made visible to the TMA unit, and all the warpgroup's done.
  ptx.fenceProxyAsyncShared();
  warpgroupBarrier(consumer);
  ifConsumerLeader([&] {
    for (int64_t m = 0; m < g.rowBlocks(); ++m) {
      Value row = addConst(add(row0, firstRow), 64 * m);
      for (int64_t box = 0; box < columns / g.outBoxElements(); ++box)
        ptx.tmaStore2d(mapOut,
                       addConst(staging, m * g.blockStagingBytes() + box * g.outBoxBytes()),
                       addConst(col0, box * g.outBoxElements()), row);
    }
    ptx.bulkCommitGroup();
  });
}

void MatmulLowering::buildTransposedStores(EpilogueValues &values,
                                           ArrayRef<Value> nRows,
                                           ArrayRef<Value> mCols, Value row0,
                                           Value col0) {
  Value out = k.func.getArgument(k.argOut);
  Value height = dimOf(out, 0), width = dimOf(out, 1);
  for (Value m : mCols) {
    Value row = add(row0, m);
    Value rowIn = cmp(arith::CmpIPredicate::ult, row, height);
    Value rowIndex = index(row);
    for (Value n : nRows) {
      Value v = values.at(k.store.getValue(), {m, n});
      storeElement(b, loc, out, rowIn, rowIndex, add(col0, n), width, v);
    }
  }
}

void MatmulLowering::run() {
  func::FuncOp f = k.func;
  Block &body = f.getBody().front();
  SmallVector<Operation *> old;
  for (Operation &op : body.without_terminator())
    old.push_back(&op);
  addTensorMapArguments();
  b.setInsertionPointToStart(&body);

  Type i32Type = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(
      b, loc, i32Type,
      LLVM::ConstantRangeAttr::get(b.getContext(), 32, 0, g.threads()));
  cta = NVVM::BlockIdXOp::create(b, loc, i32Type);
  ctas = NVVM::GridDimXOp::create(b, loc, i32Type);
  if (g.splitK > 1) {
    // Clusters of S CTAs along x: the rank is ctaid.x mod S.
    const int64_t log2S = llvm::Log2_64(g.splitK);
    rank = arith::AndIOp::create(b, loc, cta, i32(g.splitK - 1));
    cluster = arith::ShRUIOp::create(b, loc, cta, i32(log2S));
    clusters = arith::ShRUIOp::create(b, loc, ctas, i32(log2S));
  }
  smem = sharedBase();
  barriers = addConst(smem, g.barriersOffset());
  Value out = f.getArgument(k.argOut);
  auto ceilDiv = [&](Value x, int64_t d) {
    return arith::DivUIOp::create(b, loc, addConst(x, d - 1), i32(d));
  };
  tilesM = ceilDiv(dimOf(out, 0), g.bm);
  tilesN = ceilDiv(dimOf(out, 1), g.bn);
  programs = mul(tilesM, tilesN);
  whole = programs;
  // The persistent CTAs run the programs whole in rounds of `ctas`; the last
  // round's, where it would leave SMs idle, run after that loop instead:
  //   - with a split, where the clusters can take them one each, each over
  //     the CTAs of a cluster, so that the round takes about 1/S of a
  //     program's time. (Clusters taking two or three split programs in turn
  //     measured slower than whole programs on the H100: each pays the ring's
  //     refill and the reduction.) The launch starts S CTAs per program where
  //     programs are fewer than the clusters the GPU holds: then all are split;
  //   - without one, where they are no more than half the CTAs, each as two
  //     halves on two CTAs: the round takes a half to three quarters of a
  //     program's time (a half loads all of A's k-tiles for half of B's).
  //     (Fewer programs than SMs run one per CTA, a round of their own:
  //     nothing to halve.)
  if (g.splitK > 1 || g.halvesTail) {
    Value last = arith::RemUIOp::create(b, loc, programs, ctas);
    Value fits = g.splitK > 1 ? cmp(arith::CmpIPredicate::ule, last, clusters)
                              : cmp(arith::CmpIPredicate::ule, mulConst(last, 2), ctas);
    tail = arith::SelectOp::create(b, loc, fits, last, i32(0));
    whole = arith::SubIOp::create(b, loc, programs, tail);
  }

  // Thread 0 initializes the barriers: full expects the producer's arrival
  // (and the stage's bytes), empty one arrival per consumer that multiplies
  // the stage (one in ping-pong).
  HopperPtx ptx(b, loc);
  auto init = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, tid, i32(0)),
                                /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(init.thenBlock());
    for (int64_t s = 0; s < g.stages; ++s) {
      ptx.mbarrierInit(fullBarrier(i32(s)), 1);
      ptx.mbarrierInit(emptyBarrier(i32(s)), g.pingPong ? 1 : g.consumers);
    }
    // A consumer's epilogue tiles: the producer's arrival (and their bytes),
    // and the consumer's leader's once its warpgroup has read them.
    if (!tiles.empty())
      for (int64_t c = 0; c < g.consumers; ++c) {
        ptx.mbarrierInit(epilogueFull(i32(c)), 1);
        ptx.mbarrierInit(epilogueEmpty(i32(c)), 1);
      }
    ptx.fenceMbarrierInit();
  }
  NVVM::Barrier0Op::create(b, loc);

  Value warpgroup = arith::DivUIOp::create(b, loc, tid, i32(kWarpgroup));
  auto role = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, warpgroup, i32(0)),
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(role.thenBlock());
    buildProducer();
    b.setInsertionPointToStart(role.elseBlock());
    buildConsumer(warpgroup);
  }

  for (Operation *op : llvm::reverse(old))
    op->erase();
  f->setAttr(TileDialect::getPersistentAttrName(), b.getUnitAttr());
  f->setAttr(TileDialect::getBlockSizeAttrName(), b.getI32IntegerAttr(g.threads()));
  f->setAttr(TileDialect::getDynamicSharedBytesAttrName(),
             b.getI32IntegerAttr(g.sharedBytes()));
  if (g.splitK > 1) {
    f->setAttr(TileDialect::getSplitKAttrName(), b.getI32IntegerAttr(g.splitK));
    f->setAttr(TileDialect::getCtasPerProgramAttrName(), b.getI32IntegerAttr(g.splitK));
  }
}

/// Whether the kernel's product is computed transposed: f32 inputs run as
/// tf32, which wgmma reads from shared memory K-major only, so a row-major B
/// becomes the register operand of C^T = B^T A^T.
bool transposedProduct(const MatmulKernel &k) {
  return k.inputType.isF32() && !k.bKMajor;
}

/// The bytes of an element of the kernel's output where the epilogue stages
/// the tile in shared memory and TMA stores it: an output of unit inner
/// stride, 16-byte aligned rows and start, and an epilogue that loads
/// nothing, or runs beside the other consumer's products (ping-pong), or
/// holds at most 64 accumulators a thread; 0 otherwise. ptxas moves an
/// epilogue's loads above shared-memory stores, which cannot alias them: the
/// cooperative bias + GELU epilogue of a 128 x 256 tile (128 accumulators a
/// thread) then spilled. Staging is preferred wherever it fits because
/// stores from registers test every element's bounds (TMA clips the staged
/// tile instead), branches that keep ptxas from interleaving the elements'
/// arithmetic (docs/performance.md, session 55).
int64_t tmaOutputBytes(MatmulKernel k, const Geometry &g) {
  bool loads = false;
  k.func.walk([&](LoadOp load) {
    loads |= load != k.loadA && load != k.loadB;
  });
  if (loads && !g.pingPong && g.consumerAccumulators() > 64)
    return 0;
  auto type = cast<MemRefType>(k.func.getArgument(k.argOut).getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  auto align = k.func.getArgAttrOfType<IntegerAttr>(
      k.argOut, TileDialect::getAlignAttrName());
  Type elt = type.getElementType();
  if (type.getRank() != 2 || failed(type.getStridesAndOffset(strides, offset)) ||
      strides[1] != 1 || !align || align.getInt() < 16 ||
      !(elt.isBF16() || elt.isF16() || elt.isF32()))
    return 0;
  return elt.getIntOrFloatBitWidth() / 8;
}

/// The epilogue's loads that TMA can bring into shared memory while the
/// consumers multiply (EpilogueTile): after the K loop, of the output's tile
/// shape at the program's own tile (indices program_id 0 and 1), from an
/// argument with 16-byte aligned contiguous rows, of 16-bit or 32-bit floats.
/// A load's padding needs no care: the elements TMA fills with zeros outside
/// the bounds are those of output elements that are not stored.
SmallVector<EpilogueTile> epilogueTiles(MatmulKernel k) {
  SmallVector<EpilogueTile> tiles;
  k.func.walk([&](LoadOp load) {
    if (load == k.loadA || load == k.loadB || load->getParentOp() != k.func.getOperation())
      return;
    auto type = cast<RankedTensorType>(load.getType());
    auto arg = dyn_cast<BlockArgument>(load.getSource());
    Type elt = type.getElementType();
    auto programId = [&](Value v, int64_t dim) {
      auto pid = v.getDefiningOp<ProgramIdOp>();
      return pid && pid.getDim() == dim;
    };
    if (type.getRank() != 2 || type.getDimSize(0) != k.bm || type.getDimSize(1) != k.bn ||
        !arg || arg.getOwner() != &k.func.getBody().front() ||
        !isAligned(k.func, arg.getArgNumber(), 1, 16) ||
        !(elt.isBF16() || elt.isF16() || elt.isF32()) || load.getIndices().size() != 2 ||
        !programId(load.getIndices()[0], 0) || !programId(load.getIndices()[1], 1))
      return;
    tiles.push_back({load, arg.getArgNumber(), elt.getIntOrFloatBitWidth() / 8});
  });
  return tiles;
}

/// The tile shapes this lowering takes: BM a multiple of the consumers' 64
/// rows (two at most), BK a multiple of the swizzle's 64-element box, BN what
/// one wgmma covers; transposed, BN the consumers' 64 columns (two at most)
/// and BM what one wgmma covers.
bool isHopperTile(const MatmulKernel &k, std::string &why) {
  if (k.deviceCalls) {
    // Linked device code makes the kernel relocatable, and ptxas ignores
    // setmaxnreg in relocatable code (every thread would keep the entry's
    // registers): such kernels take the mma.sync lowering.
    why = "the epilogue calls device functions";
    return false;
  }
  // BK: 128 or 256 bytes of a row (one or two 128-byte swizzle boxes).
  const int64_t bkBytes = k.bk * k.elementBytes();
  if (k.float8() && !k.bKMajor) {
    why = "8-bit float operands with a row-major B: wgmma reads them K-major "
          "only";
    return false;
  }
  if (k.float8() && k.bn > 128) {
    // Each k-tile's partial sum (buildConsumer) needs registers of
    // its own beside the accumulator: 128 columns leave 64 + 64 per thread,
    // 256 would spill.
    why = "8-bit float operands in BN 256: the partial sums and the "
          "accumulator exceed the consumers' registers";
    return false;
  }
  if (transposedProduct(k)) {
    if ((k.bn == 64 || k.bn == 128) && (bkBytes == 128 || bkBytes == 256) &&
        (k.bm == 64 || k.bm == 128 || k.bm == 256))
      return true;
    why = "f32 with a row-major B (computed transposed): the tile is not "
          "BN 64/128, BM 64/128/256, BK 32/64";
    return false;
  }
  if ((k.bm == 64 || k.bm == 128) && (bkBytes == 128 || bkBytes == 256) &&
      (k.bn == 64 || k.bn == 128 || k.bn == 256))
    return true;
  why = "the tile is not BM 64/128, BN 64/128/256 (64/128 for 8-bit floats), "
        "BK 64/128 (32/64 for f32, 128/256 for 8-bit floats)";
  return false;
}

struct ConvertTileMatmulToNVVMPass
    : mlir::tessera::impl::ConvertTileMatmulToNVVMBase<ConvertTileMatmulToNVVMPass> {
  using Base::Base;

  void runOnOperation() override {
    if (splitK != 1 && splitK != 2 && splitK != 4 && splitK != 8) {
      getOperation().emitError() << "convert-tile-matmul-to-nvvm: split-k is "
                                 << static_cast<int64_t>(splitK) << ": expected 1, 2, 4 or 8";
      return signalPassFailure();
    }
    if (arch != "sm_90a")
      return;
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](func::FuncOp f) { kernels.push_back(f); });
    for (func::FuncOp f : kernels) {
      std::string why;
      FailureOr<MatmulKernel> k = matchMatmulKernel(f, why);
      if (failed(k) || !isHopperTile(*k, why)) {
        LLVM_DEBUG(llvm::dbgs() << f.getSymName() << ": not lowered: " << why << "\n");
        continue;
      }
      const bool transposed = transposedProduct(*k);
      // Ping-pong: each consumer holds a whole program's accumulators, at
      // most 128 registers a thread (BM x BN <= 128 x 128); not with 8-bit
      // floats (each k-tile's partial needs as many again), a split or a
      // transposed product.
      Geometry g{k->bm,         k->bn,
                 k->bk,         0,
                 (transposed ? k->bn : k->bm) / 64,
                 k->bKMajor,    k->elementBytes(),
                 transposed,    0};
      if (pingPong && splitK == 1 && !transposed && !k->float8() && k->bm * k->bn <= 128 * 128) {
        g.pingPong = true;
        g.consumers = 2;
      }
      g.outElementBytes = transposed ? 0 : tmaOutputBytes(*k, g);
      const int64_t requested = stages > 0 ? stages : kMaxStages;
      auto fit = [&] {
        g.stages = requested;
        while (g.stages > 2 && g.sharedBytes() > maxSharedBytes)
          --g.stages;
      };
      fit();
      // Staging the output where it leaves fewer than 3 stages (f32 outputs
      // of 256 columns) costs the K loop more than the epilogue saves.
      if (g.tmaStore() && (g.sharedBytes() > maxSharedBytes ||
                           g.stages < std::min<int64_t>(3, requested))) {
        g.outElementBytes = 0;
        fit();
      }
      if (g.sharedBytes() > maxSharedBytes)
        continue;
      // The epilogue's tiles through TMA, where they leave 5 stages or cost
      // none: on the H100 the prefill's GEMMs with bf16 tiles at 128 x 128
      // (6 stages to 5) and 64 x 128 (6 to 6) gained up to 11%, and f32 tiles at
      // 128 x 128 (6 to 4) and bf16 ones at 128 x 256 (4 to 3) lost 1-9%
      // (docs/performance.md, session 51).
      SmallVector<EpilogueTile> tiles;
      if (!transposed && !g.pingPong) {
        tiles = epilogueTiles(*k);
        const Geometry before = g;
        for (const EpilogueTile &t : tiles)
          g.epilogueTileBytes += t.consumerBytes(g.bn);
        if (!tiles.empty()) {
          fit();
          if (g.sharedBytes() > maxSharedBytes || g.stages < std::min<int64_t>(kMinStagesWithEpilogueTiles, before.stages)) {
            g = before;
            tiles.clear();
          }
        }
      }
      if (splitK > 1 && g.partialBytes() <= g.stages * g.stageBytes())
        g.splitK = splitK;
      // Halves of BN / 2 columns: whole 64-column boxes of a row-major B,
      // and a wgmma of 64 columns or more.
      g.halvesTail = halveTail && g.splitK == 1 && !transposed && !g.pingPong && g.bn >= 128;
      MatmulLowering(*k, g, groupM, std::move(tiles)).run();
    }
  }
};

} // namespace
