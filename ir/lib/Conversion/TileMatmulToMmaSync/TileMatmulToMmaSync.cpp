//===- TileMatmulToMmaSync.cpp - matmul tile kernels to mma.sync code -----===//
//
// Implements `convert-tile-matmul-to-mma-sync` (Conversion/Passes.td). A
// kernel that matchMatmulKernel accepts, in a tile shape planned below, gets
// a new body, built in front of the old one, which is then erased. One CTA
// runs one program (ctaid.x, .y, .z are program ids 0, 1, 2, as for every
// kernel convert-tile-to-loops lowers; with `group-rows` the CTAs walk the
// programs in groups of rows so that those resident at once share tiles in
// L2):
//
//   - shared memory: `stages` stages of [A: BM rows x BK][B: BK rows x BN,
//     or BN rows x BK when B is K-major], each a grid of 16-byte chunks laid
//     out by WarpMma::swizzledChunk (an XOR swizzle rather than padding: no
//     bytes lost, and the same formula serves the copies and the ldmatrix
//     reads at every row width);
//   - every thread copies its share of a k-tile's chunks with 16-byte
//     `cp.async` (a chunk past the tensor's rows or K reads nothing or its
//     first bytes only; the rest is zero-filled), one commit group per
//     k-tile; S - 1 k-tiles are in flight before the loop, and iteration kt
//     waits for k-tile kt (`wait_group S-2`), synchronizes the CTA (its
//     copies visible to all warps, and every warp done with the stage the
//     next copies overwrite), loads the first k-step's fragments, issues the
//     copies of k-tile kt + S - 1 (empty ones past the last k-tile: no
//     branch, so that ptxas interleaves their arithmetic with the mma.sync),
//     then multiplies stage kt mod S. A thread's global addresses are
//     computed once and advanced per k-tile; fragment addresses are a few
//     lane bases plus immediates (swizzledOffset);
//   - 4 or 8 warps (`warps`, else one per 4096 or 2048 elements of the tile,
//     planGeometry) in a
//     warpsM x warpsN grid, each owning a (BM / warpsM) x
//     (BN / warpsN) warp tile of f32 accumulators in registers (loop-carried
//     scalars); per k-step of 16 it loads A fragments with `ldmatrix.x4` and
//     B fragments with `ldmatrix.x4.trans` (row-major B) or `ldmatrix.x4`
//     (K-major B), and issues one `mma.sync` m16n8k16 per 16 x 8 fragment;
//     f32 inputs take tf32's m16n8k8 per k-step of 8: A and the K-major B
//     through the same untransposed `ldmatrix` (a 16-byte row is four f32),
//     a row-major B through 32-bit shared loads (ldmatrix transposes 16-bit
//     elements only), every element rounded to tf32 before the mma; 8-bit
//     float inputs (sm_89 and newer, K-major B only: ldmatrix cannot
//     transpose bytes) take m16n8k32 per k-step of 32, whose fragments are
//     those of m16n8k16 in bytes, so the same ldmatrix loads serve;
//   - the epilogue on the accumulator registers (MatmulEpilogue.h): each op
//     after the loop evaluated per element, stores of column pairs with a
//     bounds test (ragged M and N);
//   - with `split-k` S (2, 4, 8; compute capability 9.0 and newer), the S
//     CTAs of a cluster run one program: program id 0 is ctaid.x / S, and
//     rank r = ctaid.x mod S multiplies the r-th contiguous S-th of the
//     k-tiles. After the loop ranks 1..S-1 store their accumulators in their
//     own shared memory (the stages' bytes, free by then), a cluster barrier,
//     rank 0 adds them through distributed shared memory (mapa,
//     ld.shared::cluster), a second cluster barrier (the peers' shared memory
//     lives until rank 0 has read it), and rank 0 alone runs the epilogue.
//     Products too narrow to fill the GPU (M = 16: a decoder's projections
//     for a few tokens, N / BN programs) then stream their weight from S
//     times as many SMs.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/TileMatmulToMmaSync/TileMatmulToMmaSync.h"

#include "WarpMma.h"
#include "../TileMatmulToNVVM/MatmulEpilogue.h"
#include "../TileMatmulToNVVM/MatmulKernel.h"
#include "../Utils/ClusterSum.h"
#include "../Utils/HopperPtx.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <tuple>

#define DEBUG_TYPE "convert-tile-matmul-to-mma-sync"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTTILEMATMULTOMMASYNC
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kChunkBytes = 16;  // one cp.async, one ldmatrix row
constexpr int64_t kMaxWarps = 8;
constexpr int64_t kMaxAccumulators = 128;  // f32 registers per thread
constexpr int64_t kDefaultStages = 3;

/// One kernel's CTA: tile, warp grid and shared memory (bytes).
struct Geometry {
  int64_t bm, bn, bk, stages, warpsM, warpsN;
  bool bKMajor;
  /// 2 (bf16, f16), 4 (f32, multiplied as tf32) or 1 (8-bit floats).
  int64_t elementBytes;
  /// The CTAs (of one cluster) that share each program's k-tiles; 1: none.
  int64_t splitK = 1;
  /// Rows of programs the CTAs walk together (launch order to program ids);
  /// 0: the launch's order.
  int64_t groupRows = 0;
  int64_t threads() const { return warpsM * warpsN * kWarp; }
  int64_t warpRows() const { return bm / warpsM; }
  int64_t warpCols() const { return bn / warpsN; }
  int64_t fragmentsM() const { return warpRows() / 16; }
  int64_t fragmentsN() const { return warpCols() / 8; }
  int64_t accumulators() const { return fragmentsM() * fragmentsN() * 4; }
  int64_t chunkElements() const { return kChunkBytes / elementBytes; }
  int64_t aBytes() const { return bm * bk * elementBytes; }
  int64_t stageBytes() const { return aBytes() + bk * bn * elementBytes; }
  int64_t stagesBytes() const { return stages * stageBytes(); }
  /// Every thread's accumulators, one f32 slot each (a split's partials).
  int64_t partialBytes() const { return accumulators() * threads() * 4; }
  int64_t sharedBytes() const {
    return splitK > 1 ? std::max(stagesBytes(), partialBytes()) : stagesBytes();
  }
};

/// The CTA for `k`'s tile, or failure with the reason in `why`. Warps:
/// `warps` (4 or 8) where the tile takes them, else one per 4096 elements of
/// the tile (a 64 x 64 warp tile, 128 accumulators per thread) for 16-bit
/// inputs with BK up to 64, one per 2048 (64 x 32) for the others (f32 and
/// 8-bit inputs, BK 128: unmeasured, or near ptxas' 255 registers), at least
/// 4 and at most 8, fewer where the tile has fewer 16 x 16 blocks; the warp
/// grid is the one whose warp tile is squarest (fewest ldmatrix per mma).
/// On an H100, 128 x 128 bf16 and f16 products on 4 warps ran 2-3% faster
/// than on 8 at BK 32 in 7 of 8, and 9-48% faster at BK 64
/// (docs/performance.md, session 58). Stages:
/// `stages`, else 3, less while they exceed `maxShared`, at least 2. 8-bit
/// floats need compute capability 8.9 (`cc`) and a K-major B. `splitK` CTAs
/// share a program's k-tiles from compute capability 9.0 (clusters) where
/// their partials fit `maxShared`; elsewhere the hint is ignored.
/// `groupRows`: the programs' grouped order.
FailureOr<Geometry> planGeometry(const MatmulKernel &k, int64_t cc,
                                 int64_t stages, int64_t splitK,
                                 int64_t groupRows, int64_t warps,
                                 int64_t maxShared, std::string &why) {
  auto pow2In = [](int64_t v, int64_t lo, int64_t hi) {
    return v >= lo && v <= hi && llvm::isPowerOf2_64(static_cast<uint64_t>(v));
  };
  if (k.float8() && (cc < 89 || !k.bKMajor)) {
    why = "8-bit float operands need sm_89 or newer and a K-major B";
    return failure();
  }
  const int64_t elementBytes = k.elementBytes();
  // BK: 32 to 256 bytes of a row (16..128 bf16 or f16, 8..64 f32, 32..256 f8).
  if (!pow2In(k.bm, 16, 256) || !pow2In(k.bn, 16, 256) ||
      !pow2In(k.bk * elementBytes, 32, 256)) {
    why = "the tile is not BM and BN 16..256, BK 16..128 (8..64 for f32, "
          "32..256 for 8-bit floats), powers of two";
    return failure();
  }
  // The squarest warp grid of `count` warps, or none (warpsM 0).
  auto grid = [&](int64_t count) {
    Geometry g{k.bm, k.bn, k.bk, 0, 0, 0, k.bKMajor, elementBytes};
    for (int64_t wm = 1; wm <= count; wm *= 2) {
      const int64_t wn = count / wm;
      if (k.bm / wm < 16 || k.bn / wn < 16)
        continue;
      if (g.warpsM == 0 || std::abs(k.bm / wm - k.bn / wn) <=
                               std::abs(g.warpRows() - g.warpCols())) {
        g.warpsM = wm;
        g.warpsN = wn;
      }
    }
    return g;
  };
  Geometry g;
  if (warps > 0)
    g = grid(warps);
  if (warps == 0 || g.warpsM == 0 || g.accumulators() > kMaxAccumulators) {
    const bool wide = elementBytes == 2 && k.bk <= 64;
    int64_t chosen = std::clamp<int64_t>(k.bm * k.bn / (wide ? 4096 : 2048), 4, kMaxWarps);
    while (chosen > (k.bm / 16) * (k.bn / 16))
      chosen /= 2;
    g = grid(chosen);
  }
  if (g.accumulators() > kMaxAccumulators) {
    why = "the tile needs more than 128 accumulator registers per thread "
          "(BM x BN above 32768)";
    return failure();
  }
  g.stages = stages > 0 ? stages : kDefaultStages;
  while (g.stages > 2 && g.stagesBytes() > maxShared)
    --g.stages;
  if (g.stagesBytes() > maxShared) {
    why = "two stages of the A and B tiles exceed max-shared-bytes";
    return failure();
  }
  if (cc >= 90 && splitK > 1 && g.partialBytes() <= maxShared)
    g.splitK = splitK;
  g.groupRows = groupRows;
  return g;
}

/// One of a thread's 16-byte copies of an operand's tile, in k-tile 0: its
/// shared-memory offset in a stage (i32 bytes, the operand's offset
/// included) and the global address of its first element (ptr<1>, which may
/// lie past the matrix). Its bounds: with K along the operand's rows, the
/// rows left from its row to the matrix's end (`rowsLeft`, i32, negative
/// past it); with K along the columns, whether its row is inside (`rowIn`,
/// i1). With `id`, the chunk exists only where id < the tile's chunks (the
/// last round of a tile of fewer chunks than a multiple of the threads).
struct ChunkCopy {
  Value shared, global, rowsLeft, rowIn, id;
};

/// A and B as their copies see them: a matrix of `rows` x `cols` elements
/// (i32 bounds), rows `ld` elements apart (i64), contiguous columns, starting
/// at `base`; its tile in shared memory is `tileRows` rows of `chunksPerRow`
/// 16-byte chunks at `sharedOffset` bytes into each stage. K runs along its
/// rows (a row-major B) or its columns (A, a K-major B); a k-tile moves its
/// tile `kStepBytes` (i64) in global memory. `copies`: this thread's chunks,
/// which share their column: `colsLeft` (i32) columns from it to the
/// matrix's end, negative past it, and with K along the rows the bytes of a
/// chunk there (`colBytes`, i32, 0 to 16).
struct Operand {
  Value base, ld, rows, cols;
  int64_t tileRows, chunksPerRow, sharedOffset;
  bool kAlongRows = false;
  Value kStepBytes, colsLeft, colBytes;
  SmallVector<ChunkCopy> copies;
};

/// Builds the new body of one kernel.
class MmaSyncLowering {
public:
  MmaSyncLowering(MatmulKernel k, const Geometry &g)
      : k(k), g(g), b(k.func.getContext()), loc(k.func.getLoc()), ops(b, loc) {}

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
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value toI32(Value index) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  Value toI64(Value v) {
    return v.getType().isIndex()
               ? arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult()
               : arith::ExtUIOp::create(b, loc, b.getI64Type(), v).getResult();
  }
  Value index(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  /// The operand's matrix: the memref argument `arg` read with rows along
  /// dimension `rowDim` (1 for the K-major B: its columns are contiguous).
  Operand operand(unsigned arg, int64_t rowDim, int64_t tileRows,
                  int64_t tileCols, int64_t sharedOffset);
  /// Plans this thread's copies of the operand's tile whose first element
  /// in k-tile 0 is (row0, col0): op.copies.
  void planCopies(Operand &op, Value row0, Value col0);
  /// Issues this thread's copies of k-tile `kt` of the operand into the stage
  /// at `stage` (ptr<3>), empty ones where `valid` (i1) is false.
  void copyTile(const Operand &op, Value stage, Value kt, Value valid);
  /// The copies of k-tile `kt` into stage `stage` (i32 index), empty where
  /// `valid` (i1) is false: k-tiles past the last one (in the prologue and
  /// the loop) are copies that read nothing, not branches around copies.
  void copyKTile(Value kt, Value stage, Value valid);
  /// The byte offset (i32) in the operand's tile of the chunk at row
  /// laneRow + rowConst and chunk column laneChunk + chunkConst, laid out by
  /// swizzledChunk: a lane base shared by every (rowConst, chunkConst) of one
  /// residue (rows modulo the swizzle's period, chunks modulo 8), plus a
  /// constant, so that a stage's fragments take a few base registers (lane
  /// values, which LLVM hoists out of the loop) and immediate offsets. A base
  /// is built at the first use of its residue.
  Value swizzledOffset(const Operand &op, Value laneRow, int64_t rowConst,
                       Value laneChunk, int64_t chunkConst);
  /// The products of one stage, added to `acc` (returned); `afterFirstLoads`
  /// is called after the fragment loads of the first k-step, before its
  /// products (the next k-tile's copies go there, beside the tensor-core work
  /// in one basic block).
  SmallVector<Value> multiplyStage(Value stage, SmallVector<Value> acc,
                                   function_ref<void()> afterFirstLoads = {});
  /// For f32 inputs and a row-major B in shared memory at `bTile`: a function
  /// (k0, j) that loads this lane's element (k0 + t, n g) of the warp's
  /// 8-column fragment j, k0 a multiple of 4.
  std::function<Value(int64_t, int64_t)> rowMajorBLoads(Value bTile);
  void buildEpilogue(ArrayRef<Value> acc, IRMapping &mapping);

  /// A split's sum: ranks 1..S-1 give their accumulators `acc` to rank 0,
  /// which gets the sum (the others get `acc` back).
  SmallVector<Value> sumSplit(ArrayRef<Value> acc);
  /// The program ids of the CTA whose launch-order ids are (x, y), the grid
  /// walked in groups of g.groupRows rows of programs.
  std::pair<Value, Value> groupedIds(Value x, Value y);

  MatmulKernel k;
  Geometry g;
  OpBuilder b;
  Location loc;
  WarpMma ops;
  Value tid, lane, warpRow, warpCol, smem, pid0, pid1;
  /// swizzledOffset's bases by (operand, lane row, lane chunk, residues).
  std::map<std::tuple<const Operand *, void *, void *, int64_t, int64_t>, Value> bases;
  /// With a split: this CTA's rank in its cluster and its first k-tile.
  Value rank, kFirst;
  Operand a, bOp;
};

Operand MmaSyncLowering::operand(unsigned arg, int64_t rowDim, int64_t tileRows,
                                 int64_t tileCols, int64_t sharedOffset) {
  // The matcher's 16-byte alignment includes the view's offset.
  auto [global, meta] = ops.viewBase(k.func.getArgument(arg), g.elementBytes);
  Operand op;
  op.base = global;
  op.ld = toI64(meta.getStrides()[rowDim]);
  op.rows = toI32(meta.getSizes()[rowDim]);
  op.cols = toI32(meta.getSizes()[1 - rowDim]);
  op.tileRows = tileRows;
  op.chunksPerRow = tileCols / g.chunkElements();
  op.sharedOffset = sharedOffset;
  return op;
}

void MmaSyncLowering::planCopies(Operand &op, Value row0, Value col0) {
  const int64_t chunks = op.tileRows * op.chunksPerRow;
  const int64_t perRow = llvm::Log2_64(op.chunksPerRow);
  // Chunk id = tid + first: consecutive threads read consecutive 16 bytes.
  // Threads (128 or more) are a multiple of the chunks of a row (64 at
  // most), so a thread's chunks share their column and are threads / cpr
  // rows apart.
  Value r = arith::ShRUIOp::create(b, loc, tid, i32(perRow));
  Value c = arith::AndIOp::create(b, loc, tid, i32(op.chunksPerRow - 1));
  Value row = add(row0, r);
  Value col = add(col0, mulConst(c, g.chunkElements()));
  op.colsLeft = arith::SubIOp::create(b, loc, op.cols, col);
  if (op.kAlongRows)
    op.colBytes = mulConst(ops.chunkElementsLeft(op.colsLeft, g.chunkElements()), g.elementBytes);
  Value rowBytes = arith::MulIOp::create(
      b, loc, op.ld, arith::ConstantIntOp::create(b, loc, g.elementBytes, 64));
  Value first = ops.offset(
      op.base, arith::MulIOp::create(
                   b, loc,
                   arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, toI64(row), op.ld),
                                         toI64(col)),
                   arith::ConstantIntOp::create(b, loc, g.elementBytes, 64)));
  const int64_t rowsPerRound = g.threads() / op.chunksPerRow;
  for (int64_t n = 0; n * g.threads() < chunks; ++n) {
    ChunkCopy copy;
    Value rowN = addConst(row, n * rowsPerRound);
    if (op.kAlongRows)
      copy.rowsLeft = arith::SubIOp::create(b, loc, op.rows, rowN);
    else
      copy.rowIn = cmp(arith::CmpIPredicate::ult, rowN, op.rows);
    copy.shared = add(i32(op.sharedOffset), swizzledOffset(op, r, n * rowsPerRound, c, 0));
    copy.global = ops.offset(
        first, arith::MulIOp::create(
                   b, loc, rowBytes, arith::ConstantIntOp::create(b, loc, n * rowsPerRound, 64)));
    if ((n + 1) * g.threads() > chunks)
      copy.id = addConst(tid, n * g.threads());
    op.copies.push_back(copy);
  }
}

void MmaSyncLowering::copyTile(const Operand &op, Value stage, Value kt,
                               Value valid) {
  // A chunk's source bytes: those inside the matrix (none past its rows or
  // columns, fewer in a ragged last column chunk), none for an invalid
  // k-tile. The bounds along K are per k-tile and shared by the thread's
  // chunks where K runs along the columns; the rest is per chunk and
  // loop-invariant. An empty chunk's address is not read (cp.async's source
  // size 0), wherever it points.
  Value k = mulConst(kt, g.bk);
  Value step = arith::MulIOp::create(b, loc, toI64(kt), op.kStepBytes);
  Value zero = i32(0);
  Value kBytes = op.colBytes;
  if (!op.kAlongRows) {
    Value left = arith::SubIOp::create(b, loc, op.colsLeft, k);
    kBytes = mulConst(ops.chunkElementsLeft(left, g.chunkElements()), g.elementBytes);
  }
  kBytes = select(valid, kBytes, zero);
  for (const ChunkCopy &copy : op.copies) {
    std::optional<scf::IfOp> some;
    if (copy.id) {
      some = scf::IfOp::create(
          b, loc, cmp(arith::CmpIPredicate::ult, copy.id, i32(op.tileRows * op.chunksPerRow)),
          /*withElseRegion=*/false);
      b.setInsertionPointToStart(some->thenBlock());
    }
    Value inside = op.kAlongRows ? cmp(arith::CmpIPredicate::slt, k, copy.rowsLeft) : copy.rowIn;
    ops.copy16(ops.offset(stage, copy.shared), ops.offset(copy.global, step),
               select(inside, kBytes, zero));
    if (some)
      b.setInsertionPointAfter(*some);
  }
}

void MmaSyncLowering::copyKTile(Value kt, Value stage, Value valid) {
  Value stageBase = ops.offset(smem, mulConst(stage, g.stageBytes()));
  copyTile(a, stageBase, kt, valid);
  copyTile(bOp, stageBase, kt, valid);
}

Value MmaSyncLowering::swizzledOffset(const Operand &op, Value laneRow,
                                      int64_t rowConst, Value laneChunk,
                                      int64_t chunkConst) {
  // swizzledChunk XORs the linear chunk index L = row * cpr + chunk with a
  // key of three bits taken from row (cpr >= 8: row mod 8) or from L / 8
  // (cpr < 8: row / (8 / cpr) mod 8). Adding a multiple of the key's period
  // in rows (8, or 64 / cpr) adds to L a multiple of 8 and leaves the key:
  // the offset moves by that constant. Adding 8 q chunks (cpr >= 8) does the
  // same. So only the residues need their own base; the callers' positions
  // lie in the tile, so a residue's position does too.
  const int64_t cpr = op.chunksPerRow;
  const int64_t period = cpr >= 8 ? 8 : 64 / cpr;
  const int64_t rowResidue = rowConst % period, chunkResidue = chunkConst % 8;
  const int64_t rest =
      ((rowConst - rowResidue) * cpr + (chunkConst - chunkResidue)) * kChunkBytes;
  Value &base = bases[{&op, laneRow.getAsOpaquePointer(), laneChunk.getAsOpaquePointer(),
                       rowResidue, chunkResidue}];
  if (!base)
    base = ops.swizzledChunk(addConst(laneRow, rowResidue), addConst(laneChunk, chunkResidue), cpr);
  return addConst(base, rest);
}

std::function<Value(int64_t, int64_t)>
MmaSyncLowering::rowMajorBLoads(Value bTile) {
  Value group = arith::ShRUIOp::create(b, loc, lane, i32(2));
  Value quad = arith::AndIOp::create(b, loc, lane, i32(3));
  const int64_t cpr = bOp.chunksPerRow;
  auto load = [this](Value at) {
    return LLVM::LoadOp::create(b, loc, b.getF32Type(), at).getResult();
  };
  // Element (k, n), n = warpCol + g + 8 j, is at byte 4 (n mod 4) of chunk
  // n / 4 of row k, stored at swizzledChunk(k, n / 4).
  Value within = mulConst(arith::AndIOp::create(b, loc, group, i32(3)), 4);
  if (cpr < 8)
    return [=, this](int64_t k0, int64_t j) {
      Value n = add(warpCol, addConst(group, 8 * j));
      Value chunk = arith::ShRUIOp::create(b, loc, n, i32(2));
      Value at = add(ops.swizzledChunk(addConst(quad, k0), chunk, cpr), within);
      return load(ops.offset(bTile, at));
    };
  // With 8 chunks a row or more the swizzle XORs chunk n / 4 with k mod 8.
  // n / 4 = P | 2 j with P = warpCol / 4 + g / 4 (the warp tile's
  // power-of-two width keeps their bits apart), and k mod 8 = t + k0 mod 8
  // (t < 4, k0 a multiple of 4: an OR too). The chunk's low three bits are
  // then (P xor t) xor c with c = (2 j xor k0) mod 8, one of four constants,
  // and the rest of the address is a constant offset from one lane base: four
  // lane addresses serve every element of the stage instead of one per
  // element (which held 255 registers at 128 x 128 x 64 and spilled).
  Value p = add(arith::ShRUIOp::create(b, loc, warpCol, i32(2)),
                arith::ShRUIOp::create(b, loc, group, i32(2)));
  Value pKey = arith::XOrIOp::create(b, loc, p, quad);
  Value laneBase = add(
      mulConst(add(mulConst(quad, cpr), arith::AndIOp::create(b, loc, p, i32(~7))), kChunkBytes),
      within);
  std::array<Value, 4> variants;
  for (int64_t c = 0; c < 8; c += 2) {
    Value low = arith::AndIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, pKey, i32(c)), i32(7));
    variants[c / 2] = ops.offset(bTile, add(laneBase, mulConst(low, kChunkBytes)));
  }
  return [=, this](int64_t k0, int64_t j) {
    const int64_t c = ((2 * j) ^ k0) & 7;
    const int64_t rest = (k0 * cpr + ((2 * j) & ~int64_t{7})) * kChunkBytes;
    return load(ops.offset(variants[c / 2], i32(rest)));
  };
}

SmallVector<Value> MmaSyncLowering::multiplyStage(Value stage,
                                                  SmallVector<Value> acc,
                                                  function_ref<void()> afterFirstLoads) {
  Value stageBase = ops.offset(smem, mulConst(stage, g.stageBytes()));
  Value aTile = ops.offset(stageBase, i32(a.sharedOffset));
  Value bTile = ops.offset(stageBase, i32(bOp.sharedOffset));
  // Lane l addresses row l mod 16 of a 16-row block, chunk l / 16 (A, and
  // row-major B read transposed); for K-major B, row 8 (l / 16) + l mod 8,
  // chunk (l / 8) mod 2: the four matrices in fragment order. A k-step
  // (16 bf16 or f16, 8 f32, 32 f8) is two chunks of a row.
  Value row16 = arith::AndIOp::create(b, loc, lane, i32(15));
  Value half = arith::ShRUIOp::create(b, loc, lane, i32(4));
  Value row8 = add(mulConst(half, 8), arith::AndIOp::create(b, loc, lane, i32(7)));
  Value quarter = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, lane, i32(3)), i32(1));
  const int64_t fm = g.fragmentsM(), fn = g.fragmentsN();
  const bool tf32 = k.inputType.isF32();
  auto rounded = [&](auto fragment) {
    if (tf32)
      for (Value &v : fragment)
        v = ops.toTf32(v);
    return fragment;
  };
  // tf32 with a row-major B: ldmatrix transposes 16-bit elements only, so
  // this lane reads its (k t, n g) and (k t + 4, n g) of each 8-column
  // fragment one f32 at a time (t = lane mod 4, g = lane / 4).
  std::function<Value(int64_t, int64_t)> rowMajorB;
  if (tf32 && !g.bKMajor)
    rowMajorB = rowMajorBLoads(bTile);
  const int64_t step = WarpMma::kStep(k.inputType);
  Value aRow = add(warpRow, row16);
  Value bRow = add(warpCol, row8);  // K-major B
  Value bChunk = add(arith::ShRUIOp::create(b, loc, warpCol, i32(3)), half);  // row-major B
  for (int64_t kk = 0; kk < g.bk / step; ++kk) {
    SmallVector<std::array<Value, 4>> aFrag;
    for (int64_t i = 0; i < fm; ++i)
      aFrag.push_back(rounded(ops.loadMatrices(
          ops.offset(aTile, swizzledOffset(a, aRow, 16 * i, half, 2 * kk)),
          /*transpose=*/false)));
    SmallVector<std::array<Value, 2>> bFrag;
    if (tf32 && !g.bKMajor) {
      for (int64_t j = 0; j < fn; ++j)
        bFrag.push_back(rounded(std::array<Value, 2>{
            rowMajorB(8 * kk, j), rowMajorB(8 * kk + 4, j)}));
    } else {
      for (int64_t j = 0; j < fn; j += 2) {
        Value address = g.bKMajor ? swizzledOffset(bOp, bRow, 8 * j, quarter, 2 * kk)
                                  : swizzledOffset(bOp, row16, 16 * kk, bChunk, j);
        std::array<Value, 4> m = rounded(
            ops.loadMatrices(ops.offset(bTile, address), /*transpose=*/!g.bKMajor));
        bFrag.push_back({m[0], m[1]});
        bFrag.push_back({m[2], m[3]});
      }
    }
    if (kk == 0 && afterFirstLoads)
      afterFirstLoads();
    for (int64_t i = 0; i < fm; ++i)
      for (int64_t j = 0; j < fn; ++j) {
        const int64_t at = (i * fn + j) * 4;
        std::array<Value, 4> d =
            ops.mma(aFrag[i], bFrag[j], ArrayRef<Value>(acc).slice(at, 4), k.inputType,
                    k.inputTypeB);
        for (int64_t e = 0; e < 4; ++e)
          acc[at + e] = d[e];
      }
  }
  return acc;
}

void MmaSyncLowering::buildEpilogue(ArrayRef<Value> acc, IRMapping &mapping) {
  // This thread's rows (2 per fragment row) and columns (2 per fragment
  // column) of the tile: group g = lane / 4 and t = lane mod 4.
  Value group = arith::ShRUIOp::create(b, loc, lane, i32(2));
  Value pair = mulConst(arith::AndIOp::create(b, loc, lane, i32(3)), 2);
  const int64_t fm = g.fragmentsM(), fn = g.fragmentsN();
  SmallVector<Value> rows, cols;
  DenseMap<Value, int64_t> rowOf, colOf;
  for (int64_t r = 0; r < 2 * fm; ++r) {  // fragment r / 2, upper or lower 8
    rows.push_back(add(warpRow, addConst(group, 16 * (r / 2) + 8 * (r % 2))));
    rowOf[rows.back()] = r;
  }
  for (int64_t c = 0; c < 2 * fn; ++c) {  // fragment c / 2, element c mod 2
    cols.push_back(add(warpCol, addConst(pair, 8 * (c / 2) + c % 2)));
    colOf[cols.back()] = c;
  }
  Value out = k.func.getArgument(k.argOut);
  Value height = toI32(memref::DimOp::create(b, loc, out, 0));
  Value width = toI32(memref::DimOp::create(b, loc, out, 1));
  EpilogueValues values(
      b, loc, k, [&](Value v) { return materializeScalar(b, k.func, v, mapping); },
      [&](Value row, Value col) -> Value {
        const int64_t r = rowOf.lookup(row), c = colOf.lookup(col);
        return acc[((r / 2) * fn + c / 2) * 4 + 2 * (r % 2) + c % 2];
      });
  Value row0 = mulConst(pid0, g.bm), col0 = mulConst(pid1, g.bn);
  // Beside more than 64 accumulators a thread (warp tiles of 64 x 64), a
  // batch of 64 loaded elements made ptxas spill (a tile loaded and divided
  // by, 128 x 128 on 4 warps): 32 there.
  storeFromRegisters(b, loc, values, k.store.getValue(), out, rows, cols, row0,
                     col0, height, width, storesColumnPairs(k),
                     g.accumulators() > 64 ? 32 : 0);
}

SmallVector<Value> MmaSyncLowering::sumSplit(ArrayRef<Value> acc) {
  // Thread t's accumulator e sits at slot e * threads + t: a warp's stores
  // and loads are consecutive words.
  auto slot = [&](int64_t e) { return mulConst(addConst(tid, e * g.threads()), 4); };
  // Every warp is done with the stages that the partials overwrite.
  NVVM::Barrier0Op::create(b, loc);
  // Ranks 1 and up leave their accumulators in their shared memory; rank 0
  // adds the others', in rank order (ClusterSum.h).
  return sumOverCluster(
      b, loc, rank, g.splitK, acc,
      [&] {
        for (size_t e = 0; e < acc.size(); ++e)
          LLVM::StoreOp::create(b, loc, acc[e], ops.offset(smem, slot(e)));
      },
      [&](Value peer, SmallVectorImpl<Value> &sum) {
        Value base = LLVM::PtrToIntOp::create(b, loc, b.getI32Type(), smem);
        for (size_t e = 0; e < sum.size(); ++e)
          sum[e] = arith::AddFOp::create(
              b, loc, sum[e],
              HopperPtx(b, loc).loadClusterSharedF32(add(base, slot(e)), peer));
      });
}

std::pair<Value, Value> MmaSyncLowering::groupedIds(Value x, Value y) {
  // The hardware starts CTAs in launch order, x fastest: programs (x, y) in
  // that order walk all rows of a column of tiles, then the next column, so
  // the CTAs resident at once read every row of A. In groups of G rows, a
  // group's programs walk its G rows column by column: the CTAs resident at
  // once read G rows of A and some columns of B, which then meet in L2. The
  // map is a bijection of the grid (the last group has rows % G rows, or G);
  // a grid of one column is left as it is. The linear id is unsigned i32: a
  // grid of 2^32 CTAs or more is not a GEMM this lowering sees.
  Type i32Type = b.getI32Type();
  Value rowsTotal = NVVM::GridDimXOp::create(b, loc, i32Type);
  if (g.splitK > 1)
    rowsTotal = arith::ShRUIOp::create(b, loc, rowsTotal, i32(llvm::Log2_64(g.splitK)));
  Value cols = NVVM::GridDimYOp::create(b, loc, i32Type);
  Value linear = add(x, mul(y, rowsTotal));
  Value perGroup = mulConst(cols, g.groupRows);
  Value group = arith::DivUIOp::create(b, loc, linear, perGroup);
  Value first = mulConst(group, g.groupRows);
  Value rows = arith::MinUIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rowsTotal, first), i32(g.groupRows));
  Value within = arith::SubIOp::create(b, loc, linear, mul(group, perGroup));
  return {add(first, arith::RemUIOp::create(b, loc, within, rows)),
          arith::DivUIOp::create(b, loc, within, rows)};
}

void MmaSyncLowering::run() {
  func::FuncOp f = k.func;
  Block &body = f.getBody().front();
  SmallVector<Operation *> old;
  for (Operation &op : body.without_terminator())
    old.push_back(&op);
  b.setInsertionPointToStart(&body);

  Type i32Type = b.getI32Type();
  tid = NVVM::ThreadIdXOp::create(
      b, loc, i32Type, LLVM::ConstantRangeAttr::get(b.getContext(), 32, 0, g.threads()));
  lane = arith::AndIOp::create(b, loc, tid, i32(kWarp - 1));
  Value warp = arith::ShRUIOp::create(b, loc, tid, i32(5));
  warpRow = mulConst(arith::DivUIOp::create(b, loc, warp, i32(g.warpsN)), g.warpRows());
  warpCol = mulConst(arith::RemUIOp::create(b, loc, warp, i32(g.warpsN)), g.warpCols());
  // Program ids are the CTA's ids, as convert-tile-to-loops maps them.
  // With a split, program id 0 is ctaid.x / S and the rank ctaid.x mod S.
  IRMapping mapping;
  Value ids[3] = {NVVM::BlockIdXOp::create(b, loc, i32Type),
                  NVVM::BlockIdYOp::create(b, loc, i32Type),
                  NVVM::BlockIdZOp::create(b, loc, i32Type)};
  if (g.splitK > 1) {
    rank = arith::AndIOp::create(b, loc, ids[0], i32(g.splitK - 1));
    ids[0] = arith::ShRUIOp::create(b, loc, ids[0], i32(llvm::Log2_64(g.splitK)));
  }
  if (g.groupRows > 0)
    std::tie(ids[0], ids[1]) = groupedIds(ids[0], ids[1]);
  f.walk([&](ProgramIdOp op) { mapping.map(op.getResult(), ids[op.getDim()]); });
  pid0 = ids[0];
  pid1 = ids[1];
  smem = ops.dynamicSharedBase(k.func, "__tile_mma_sync_shared_");
  a = operand(k.argA, 0, g.bm, g.bk, 0);
  bOp = g.bKMajor ? operand(k.argB, 1, g.bn, g.bk, g.aBytes())
                  : operand(k.argB, 0, g.bk, g.bn, g.aBytes());
  Value ub = materializeScalar(b, f, k.loop.getUpperBound(), mapping);
  // A negative trip count runs no iteration, as scf.for does.
  Value kTiles = arith::MaxSIOp::create(b, loc, toI32(ub), i32(0));
  if (g.splitK > 1)
    std::tie(kFirst, kTiles) = splitShare(b, loc, kTiles, rank, g.splitK);
  // K along A's columns, along a K-major B's columns, a row-major B's rows.
  Value k0 = kFirst ? mulConst(kFirst, g.bk) : i32(0);
  Value tileBytes = arith::ConstantIntOp::create(b, loc, g.bk * g.elementBytes, 64);
  a.kStepBytes = tileBytes;
  planCopies(a, mulConst(pid0, g.bm), k0);
  if (g.bKMajor) {
    bOp.kStepBytes = tileBytes;
    planCopies(bOp, mulConst(pid1, g.bn), k0);
  } else {
    bOp.kAlongRows = true;
    bOp.kStepBytes = arith::MulIOp::create(
        b, loc, bOp.ld, arith::ConstantIntOp::create(b, loc, g.bk * g.elementBytes, 64));
    planCopies(bOp, k0, mulConst(pid1, g.bn));
  }

  // Prologue: k-tiles 0 .. S-2 in flight, one group each (empty past the end,
  // as the loop's, so that the groups count k-tiles).
  for (int64_t s = 0; s + 1 < g.stages; ++s) {
    copyKTile(i32(s), i32(s), cmp(arith::CmpIPredicate::slt, i32(s), kTiles));
    ops.commitGroup();
  }
  SmallVector<Value> init{i32(0)};
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  init.append(g.accumulators(), zero);
  auto loop = scf::ForOp::create(b, loc, i32(0), kTiles, i32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value kt = loop.getInductionVar();
    Value stage = loop.getRegionIterArgs()[0];
    ops.waitGroup(g.stages - 2);
    NVVM::Barrier0Op::create(b, loc);
    // Stage (kt + S - 1) mod S = (kt - 1) mod S: the one every warp finished
    // multiplying before the barrier. Its copies are issued after the first
    // k-step's fragment loads, in the products' basic block (no branch: past
    // the last k-tile they read nothing and fill a stage no one reads), so
    // that ptxas interleaves their address math with the mma.sync.
    Value next = addConst(kt, g.stages - 1);
    Value nextStage = select(cmp(arith::CmpIPredicate::eq, stage, i32(0)),
                             i32(g.stages - 1), addConst(stage, -1));
    SmallVector<Value> acc(loop.getRegionIterArgs().drop_front());
    acc = multiplyStage(stage, std::move(acc), [&] {
      copyKTile(next, nextStage, cmp(arith::CmpIPredicate::slt, next, kTiles));
      ops.commitGroup();
    });
    Value following = addConst(stage, 1);
    SmallVector<Value> yields{select(cmp(arith::CmpIPredicate::eq, following, i32(g.stages)),
                                     i32(0), following)};
    yields.append(acc);
    scf::YieldOp::create(b, loc, yields);
  }
  // The groups left are empty; waiting for them leaves no copy in flight at
  // the kernel's end.
  ops.waitGroup(0);
  SmallVector<Value> acc(loop.getResults().drop_front());
  if (g.splitK > 1) {
    acc = sumSplit(acc);
    auto lead = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::eq, rank, i32(0)),
                                  /*withElseRegion=*/false);
    b.setInsertionPointToStart(lead.thenBlock());
    buildEpilogue(acc, mapping);
    b.setInsertionPointAfter(lead);
  } else {
    buildEpilogue(acc, mapping);
  }

  for (Operation *op : llvm::reverse(old))
    op->erase();
  f->setAttr(TileDialect::getMmaSyncAttrName(), b.getUnitAttr());
  f->setAttr(TileDialect::getBlockSizeAttrName(), b.getI32IntegerAttr(g.threads()));
  f->setAttr(TileDialect::getDynamicSharedBytesAttrName(),
             b.getI32IntegerAttr(g.sharedBytes()));
  if (g.splitK > 1) {
    f->setAttr(TileDialect::getSplitKAttrName(), b.getI32IntegerAttr(g.splitK));
    f->setAttr(TileDialect::getCtasPerProgramAttrName(), b.getI32IntegerAttr(g.splitK));
  }
}

struct ConvertTileMatmulToMmaSyncPass
    : mlir::tessera::impl::ConvertTileMatmulToMmaSyncBase<ConvertTileMatmulToMmaSyncPass> {
  using Base::Base;

  void runOnOperation() override {
    if (splitK != 1 && splitK != 2 && splitK != 4 && splitK != 8) {
      getOperation().emitError() << "convert-tile-matmul-to-mma-sync: split-k is "
                                 << static_cast<int64_t>(splitK) << ": expected 1, 2, 4 or 8";
      return signalPassFailure();
    }
    if (groupRows < 0 || groupRows > 64) {
      getOperation().emitError() << "convert-tile-matmul-to-mma-sync: group-rows is "
                                 << static_cast<int64_t>(groupRows) << ": expected 0 to 64";
      return signalPassFailure();
    }
    if (warps != 0 && warps != 4 && warps != 8) {
      getOperation().emitError() << "convert-tile-matmul-to-mma-sync: warps is "
                                 << static_cast<int64_t>(warps) << ": expected 0, 4 or 8";
      return signalPassFailure();
    }
    if (WarpMma::computeCapability(arch) < 80)
      return;
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](func::FuncOp f) { kernels.push_back(f); });
    for (func::FuncOp f : kernels) {
      std::string why;
      FailureOr<MatmulKernel> k = matchMatmulKernel(f, why);
      FailureOr<Geometry> g = failure();
      if (succeeded(k))
        g = planGeometry(*k, WarpMma::computeCapability(arch), stages, splitK, groupRows, warps,
                         maxSharedBytes, why);
      if (failed(g)) {
        LLVM_DEBUG(llvm::dbgs() << f.getSymName() << ": not lowered: " << why << "\n");
        continue;
      }
      MmaSyncLowering(*k, *g).run();
    }
  }
};

} // namespace
