//===- TileAttentionToMmaSync.cpp - attention kernels to mma.sync code ----===//
//
// Implements `convert-tile-attention-to-mma-sync` (Conversion/Passes.td). A
// kernel that matchAttentionKernel accepts, in a tile shape planned below,
// gets a new body, built in front of the old one, which is then erased. One
// CTA runs one program, the programs in the order of decreasing program id 0
// (the query tile: in a causal kernel the last walk the most key tiles), every
// program id 1 of one program id 0 before the next:
//
//   - BQ / 16 warps, warp w owning query rows 16 w .. 16 w + 15 of every
//     [BQ, *] tile: thread (lane l) holds rows 16 w + l / 4 and that + 8, and
//     of each 8 columns the two at 2 (l mod 4): the accumulator layout of
//     mma.sync m16n8k16, in which the scores arrive, the softmax runs and the
//     output accumulates, all in registers;
//   - shared memory: the Q tile, then S stages (2, or the `stages` option)
//     of [K tile][V tile], each tile rows of 16-byte chunks laid out by
//     WarpMma::swizzledChunk, filled by 16-byte cp.async copies (a chunk past
//     the tensor's bounds reads nothing or its first bytes and is
//     zero-filled, as the load's padding);
//   - before the loop: Q's copies and those of K and V tiles 0 .. S-2, a
//     group per tile; iteration t waits for tile t's group, synchronizes the
//     CTA (its copies visible, and every warp done with the stage of tile
//     t - 1), issues tile t + S - 1's copies into that stage, then computes:
//     Q's fragments (ldmatrix.x4, loaded once) times K's (ldmatrix.x4: K's
//     rows are the product's columns, K-major), the loop body's other tensor
//     ops evaluated
//     per element at the thread's coordinates (a row reduction combines the
//     thread's elements of the row, then the quad's four threads by two xor
//     shuffles), the 16-bit operand of the second product packed from those
//     elements into A fragments (the accumulator layout of 16 x 16 is the A
//     fragment's), and V's fragments by ldmatrix.x4.trans;
//   - after the loop the stored tile evaluated per element and stored as
//     column pairs with a bounds test.
//
//===----------------------------------------------------------------------===//

#include "tessera/Conversion/TileAttentionToMmaSync/TileAttentionToMmaSync.h"

#include "AttentionKernel.h"
#include "../TileMatmulToMmaSync/WarpMma.h"
#include "../TileMatmulToNVVM/MatmulEpilogue.h"

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
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#define DEBUG_TYPE "convert-tile-attention-to-mma-sync"

namespace mlir::tessera {
#define GEN_PASS_DEF_CONVERTTILEATTENTIONTOMMASYNC
#include "tessera/Conversion/Passes.h.inc"
} // namespace mlir::tessera

using namespace mlir;
using namespace mlir::tessera::tile;

namespace {

constexpr int64_t kWarp = 32;
constexpr int64_t kChunkElements = 8; // of bf16 or f16
constexpr int64_t kDefaultStages = 2;

/// One kernel's CTA and shared memory (bytes).
struct Geometry {
  int64_t bq, bkv, d, stages;
  int64_t warps() const { return bq / 16; }
  int64_t threads() const { return warps() * kWarp; }
  int64_t chunksPerRow() const { return d / kChunkElements; }
  int64_t qBytes() const { return bq * d * 2; }
  int64_t kvBytes() const { return bkv * d * 2; }
  int64_t stageBytes() const { return 2 * kvBytes(); }
  int64_t sharedBytes() const { return qBytes() + stages * stageBytes(); }
};

/// The CTA for `k`'s tiles, or failure with the reason in `why`. Stages of
/// K and V: `stages`, else 2, fewer while they exceed `maxShared`, at least 2.
FailureOr<Geometry> planGeometry(const AttentionKernel &k, int64_t stages,
                                 int64_t maxShared, std::string &why) {
  auto pow2In = [](int64_t v, int64_t lo, int64_t hi) {
    return v >= lo && v <= hi && llvm::isPowerOf2_64(static_cast<uint64_t>(v));
  };
  // Registers per thread: D / 2 accumulators, BKV / 2 scores, D / 4 words of
  // Q's fragments.
  if (!pow2In(k.bq, 16, 128) || !pow2In(k.bkv, 16, 128) || !pow2In(k.d, 16, 128)) {
    why = "the tiles are not BQ, BKV and D powers of two from 16 to 128";
    return failure();
  }
  Geometry g{k.bq, k.bkv, k.d, stages > 1 ? stages : kDefaultStages};
  while (g.stages > 2 && g.sharedBytes() > maxShared)
    --g.stages;
  if (g.sharedBytes() > maxShared) {
    why = "the Q tile and two stages of K and V exceed max-shared-bytes";
    return failure();
  }
  return g;
}

/// A tile load as its copies see it: the memref's strides and base address,
/// and the tile's rows.
struct Operand {
  mutable LoadOp load;        // its accessors are not const
  Value base;                 // ptr<1> of element 0 of the view
  SmallVector<Value> strides; // i64, per dimension
  int64_t tileRows;
};

/// A value the lowering holds in registers: per row (width 1: one value per
/// thread row h) or per accumulator element (width N: element (h, c) of the
/// thread's N / 4 columns at 4 (c / 2) + 2 h + c mod 2, the mma fragment
/// order).
struct Held {
  int64_t width;
  SmallVector<Value> values;
};

class AttentionLowering;

/// The tensors of the old body at a thread's coordinates (i32 values: a row
/// of `rows`, a column of `columns(N)`, or the zero of a unit dimension),
/// evaluated at the builder's insertion point and memoized: one instance per
/// region (prologue, loop body, epilogue).
class Values {
public:
  Values(AttentionLowering &l, IRMapping &mapping,
         const DenseMap<Value, Held> &held)
      : l(l), mapping(mapping), held(held) {}

  Value at(Value tensor, ArrayRef<Value> coords);

private:
  Value compute(Value tensor, ArrayRef<Value> coords);
  Value loadAt(LoadOp load, ArrayRef<Value> coords);
  Value reduceAt(ReduceOp reduce, Value row);

  AttentionLowering &l;
  IRMapping &mapping;
  const DenseMap<Value, Held> &held;
  std::map<std::vector<void *>, Value> memo;
};

/// Builds the new body of one kernel.
class AttentionLowering {
public:
  AttentionLowering(AttentionKernel k, const Geometry &g)
      : k(k), g(g), b(k.func.getContext()), loc(k.func.getLoc()), ops(b, loc) {}

  void run();

private:
  friend class Values;

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
  Value toI32(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), v);
  }
  Value toI64(Value v) {
    return v.getType().isIndex()
               ? arith::IndexCastOp::create(b, loc, b.getI64Type(), v).getResult()
               : arith::ExtSIOp::create(b, loc, b.getI64Type(), v).getResult();
  }
  Value toIndex(Value v) {
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), v);
  }

  Operand operand(LoadOp load, int64_t tileRows);
  /// This thread's copies of `op`'s tile, its indices materialized with
  /// `mapping`, into the shared memory at `tile` (ptr<3>).
  void copyTile(const Operand &op, Value tile, IRMapping &mapping);
  /// The columns of a [*, N] tile this thread holds (N / 4 of them).
  ArrayRef<Value> columns(int64_t n);
  /// The thread's elements of `v` at every (row, column) of width `n`, in
  /// the fragment order of Held.
  SmallVector<Value> fragments(Values &values, Value v, int64_t n);
  /// The product of the Q fragments and the K tile at `kTile`: BKV / 2
  /// scores in fragment order.
  SmallVector<Value> scores(Value kTile);
  /// `acc` plus the product of the packed A fragments `p` and the V tile at
  /// `vTile`.
  SmallVector<Value> outputs(ArrayRef<std::array<Value, 4>> p, Value vTile,
                             SmallVector<Value> acc);
  /// Two 16-bit values packed into an i32 word, `lo` in the low half.
  Value pack(Value lo, Value hi);
  /// The address of the K tile (`offset` 0) or the V tile in `stage`.
  Value stageTile(Value stage, int64_t offset);
  /// This thread's copies of the K and V tiles, their indices materialized
  /// with `mapping`, into `stage`.
  void copyKeysValues(Value stage, IRMapping &mapping);
  /// True (i1) where the leading (unit) dimensions of a tile at `origin` lie
  /// inside `dims`; null for a 2-d tile.
  Value leadingInBounds(ArrayRef<Value> origin, ArrayRef<Value> dims);
  /// The old loop's carried tiles `tiles` (iter_args or results) held in the
  /// new loop's registers `regs`, in order, of the given widths.
  DenseMap<Value, Held> heldTiles(ValueRange tiles, ValueRange regs,
                                  ArrayRef<int64_t> widths);
  Value shuffleXor(Value v, int64_t offset);

  AttentionKernel k;
  Geometry g;
  OpBuilder b;
  Location loc;
  WarpMma ops;
  Value tid, lane, warp, group, pair, smem, zero;
  SmallVector<Value, 2> rows;
  std::map<int64_t, SmallVector<Value>> columnsByWidth;
  SmallVector<std::array<Value, 4>> qFragments;
  Operand keys, values; // the K and V loads
};

Value Values::at(Value tensor, ArrayRef<Value> coords) {
  std::vector<void *> key = elementKey(tensor, coords);
  auto it = memo.find(key);
  if (it != memo.end())
    return it->second;
  Value v = compute(tensor, coords);
  memo.emplace(std::move(key), v);
  return v;
}

Value Values::compute(Value tensor, ArrayRef<Value> coords) {
  OpBuilder &b = l.b;
  Location loc = l.loc;
  if (auto it = held.find(tensor); it != held.end()) {
    const Held &h = it->second;
    const int64_t row = coords[0] == l.rows[0] ? 0 : 1;
    assert(coords[0] == l.rows[row] && "a held value read at another row");
    if (h.width == 1)
      return h.values[row];
    ArrayRef<Value> cols = l.columns(h.width);
    const int64_t c = std::find(cols.begin(), cols.end(), coords[1]) - cols.begin();
    assert(c < static_cast<int64_t>(cols.size()) && "a held value read at another column");
    return h.values[4 * (c / 2) + 2 * row + c % 2];
  }
  Operation *op = tensor.getDefiningOp();
  if (auto cst = dyn_cast<arith::ConstantOp>(op))
    return arith::ConstantOp::create(
        b, loc,
        cast<TypedAttr>(cast<DenseElementsAttr>(cst.getValue()).getSplatValue<Attribute>()));
  if (auto splat = dyn_cast<SplatOp>(op))
    return materializeScalar(b, l.k.func, splat.getInput(), mapping);
  if (auto iota = dyn_cast<IotaOp>(op)) {
    Type elt = iota.getType().getElementType();
    if (elt.isInteger(32))
      return coords[0];
    if (elt.isIndex())
      return l.toIndex(coords[0]);
    return elt.getIntOrFloatBitWidth() > 32
               ? arith::ExtSIOp::create(b, loc, elt, coords[0]).getResult()
               : arith::TruncIOp::create(b, loc, elt, coords[0]).getResult();
  }
  if (auto f = forwardedElement(op, coords, l.zero))
    return at(f->first, f->second);
  if (auto load = dyn_cast<LoadOp>(op))
    return loadAt(load, coords);
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return reduceAt(reduce, coords[0]);
  return scalarElementwise(b, op, [&](OpBuilder &, Value operand) {
           return at(operand, coords);
         }).front();
}

Value Values::loadAt(LoadOp load, ArrayRef<Value> coords) {
  SmallVector<Value> indices;
  for (Value index : load.getIndices())
    indices.push_back(materializeScalar(l.b, l.k.func, index, mapping));
  return loadElement(l.b, l.loc, load, indices, coords);
}

Value Values::reduceAt(ReduceOp reduce, Value row) {
  OpBuilder &b = l.b;
  Location loc = l.loc;
  auto combine = [&](Value x, Value y) {
    return mlir::tessera::tile::combine(b, loc, reduce.getKind(), x, y);
  };
  const int64_t n = reduce.getInput().getType().getDimSize(1);
  Value acc;
  for (Value col : l.columns(n)) {
    Value x = at(reduce.getInput(), {row, col});
    acc = acc ? combine(acc, x) : x;
  }
  // The row's other elements are held by the three other threads of the
  // quad (lanes 4 (l / 4) .. 4 (l / 4) + 3).
  for (int64_t offset : {1, 2})
    acc = combine(acc, l.shuffleXor(acc, offset));
  return acc;
}

Value AttentionLowering::shuffleXor(Value v, int64_t offset) {
  Value mask = i32(-1), clamp = i32(kWarp - 1);
  return NVVM::ShflOp::create(b, loc, v.getType(), mask, v, i32(offset), clamp,
                              NVVM::ShflKind::bfly, UnitAttr());
}

ArrayRef<Value> AttentionLowering::columns(int64_t n) {
  SmallVector<Value> &cols = columnsByWidth[n];
  assert(!cols.empty() && "columns of a width not made in the prologue");
  return cols;
}

Operand AttentionLowering::operand(LoadOp load, int64_t tileRows) {
  // The matcher's 16-byte alignment includes the view's offset.
  auto [base, meta] = ops.viewBase(load.getSource(), /*elementBytes=*/2);
  Operand op;
  op.load = load;
  op.base = base;
  for (Value s : meta.getStrides())
    op.strides.push_back(toI64(s));
  op.tileRows = tileRows;
  return op;
}

void AttentionLowering::copyTile(const Operand &op, Value tile,
                                 IRMapping &mapping) {
  auto type = cast<RankedTensorType>(op.load.getType());
  const int64_t rank = type.getRank();
  SmallVector<Value> indices, dims;
  for (Value index : op.load.getIndices())
    indices.push_back(materializeScalar(b, k.func, index, mapping));
  SmallVector<Value> origin =
      tileOrigin(b, loc, op.load.getSource(), indices, type.getShape(), dims);
  // The leading (unit) dimensions: one element each, inside or not.
  Value lead = arith::ConstantIntOp::create(b, loc, 0, 64);
  for (int64_t d = 0; d + 2 < rank; ++d)
    lead = arith::AddIOp::create(
        b, loc, lead, arith::MulIOp::create(b, loc, toI64(origin[d]), op.strides[d]));
  Value leadIn = leadingInBounds(origin, dims);
  Value row0 = toI32(origin[rank - 2]), col0 = toI32(origin[rank - 1]);
  Value rowsIn = toI32(dims[rank - 2]), colsIn = toI32(dims[rank - 1]);
  Value ld = op.strides[rank - 2];
  const int64_t cpr = g.chunksPerRow();
  const int64_t chunks = op.tileRows * cpr;
  const int64_t perRow = llvm::Log2_64(cpr);
  for (int64_t first = 0; first < chunks; first += g.threads()) {
    // Chunk `id` of the tile: consecutive threads read consecutive 16 bytes.
    Value id = addConst(tid, first);
    std::optional<scf::IfOp> some;
    if (first + g.threads() > chunks) {
      some = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::ult, id, i32(chunks)),
                               /*withElseRegion=*/false);
      b.setInsertionPointToStart(some->thenBlock());
    }
    Value r = arith::ShRUIOp::create(b, loc, id, i32(perRow));
    Value c = arith::AndIOp::create(b, loc, id, i32(cpr - 1));
    Value row = add(row0, r);
    Value col = add(col0, mulConst(c, kChunkElements));
    // Elements of the chunk within the tensor: none past its rows, columns
    // or leading dimensions, fewer in a ragged last chunk.
    Value rowIn = cmp(arith::CmpIPredicate::ult, row, rowsIn);
    if (leadIn)
      rowIn = arith::AndIOp::create(b, loc, rowIn, leadIn);
    Value at = arith::AddIOp::create(
        b, loc, lead,
        arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, toI64(row), ld),
                              toI64(col)));
    Value dst = ops.offset(tile, ops.swizzledChunk(r, c, cpr));
    ops.copyChunk(dst, op.base, at, arith::SubIOp::create(b, loc, colsIn, col), rowIn,
                  kChunkElements, /*elementBytes=*/2);
    if (some)
      b.setInsertionPointAfter(*some);
  }
}

Value AttentionLowering::leadingInBounds(ArrayRef<Value> origin,
                                        ArrayRef<Value> dims) {
  Value inside;
  for (size_t d = 0; d + 2 < origin.size(); ++d) {
    Value in = cmp(arith::CmpIPredicate::ult, origin[d], dims[d]);
    inside = inside ? arith::AndIOp::create(b, loc, inside, in) : in;
  }
  return inside;
}

void AttentionLowering::copyKeysValues(Value stage, IRMapping &mapping) {
  copyTile(keys, stageTile(stage, 0), mapping);
  copyTile(values, stageTile(stage, g.kvBytes()), mapping);
}

DenseMap<Value, Held> AttentionLowering::heldTiles(ValueRange tiles, ValueRange regs,
                                                   ArrayRef<int64_t> widths) {
  DenseMap<Value, Held> held;
  size_t at = 0;
  for (auto [i, tile] : llvm::enumerate(tiles)) {
    const int64_t n = widths[i] == 1 ? 2 : widths[i] / 2;
    held[tile] = Held{widths[i], SmallVector<Value>(regs.slice(at, n))};
    at += n;
  }
  return held;
}

Value AttentionLowering::stageTile(Value stage, int64_t offset) {
  return ops.offset(smem, addConst(mulConst(stage, g.stageBytes()), g.qBytes() + offset));
}

SmallVector<Value> AttentionLowering::fragments(Values &values, Value v,
                                                int64_t n) {
  ArrayRef<Value> cols = columns(n);
  SmallVector<Value> out(n / 2);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t c = 0; c < static_cast<int64_t>(cols.size()); ++c)
      out[4 * (c / 2) + 2 * h + c % 2] = values.at(v, {rows[h], cols[c]});
  return out;
}

SmallVector<Value> AttentionLowering::scores(Value kTile) {
  // Lane l addresses row 8 (l / 16) + l mod 8 of a 16-row block of K, chunk
  // (l / 8) mod 2: the four matrices are the B fragments of columns 8 j ..
  // 8 j + 15 of the product, k-step halves in order.
  Value row8 = add(mulConst(arith::ShRUIOp::create(b, loc, lane, i32(4)), 8),
                   arith::AndIOp::create(b, loc, lane, i32(7)));
  Value quarter = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, lane, i32(3)), i32(1));
  Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  SmallVector<Value> acc(g.bkv / 2, zeroF);
  for (int64_t kk = 0; kk < g.d / 16; ++kk)
    for (int64_t j = 0; j < g.bkv / 8; j += 2) {
      Value address = ops.swizzledChunk(addConst(row8, 8 * j), addConst(quarter, 2 * kk),
                                        g.chunksPerRow());
      std::array<Value, 4> m = ops.loadMatrices(ops.offset(kTile, address), /*transpose=*/false);
      for (int64_t f = 0; f < 2; ++f) {
        std::array<Value, 4> d =
            ops.mma(qFragments[kk], {m[2 * f], m[2 * f + 1]},
                    ArrayRef<Value>(acc).slice(4 * (j + f), 4), k.inputType);
        for (int64_t e = 0; e < 4; ++e)
          acc[4 * (j + f) + e] = d[e];
      }
    }
  return acc;
}

SmallVector<Value> AttentionLowering::outputs(ArrayRef<std::array<Value, 4>> p,
                                              Value vTile, SmallVector<Value> acc) {
  // Lane l addresses row l mod 16 of a 16-row block of V, chunk l / 16 of a
  // pair of 8-column chunks, read transposed: the B fragments of two 8-column
  // fragments of the product.
  Value row16 = arith::AndIOp::create(b, loc, lane, i32(15));
  Value half = arith::ShRUIOp::create(b, loc, lane, i32(4));
  for (int64_t kk = 0; kk < g.bkv / 16; ++kk)
    for (int64_t j = 0; j < g.d / 8; j += 2) {
      Value address = ops.swizzledChunk(addConst(row16, 16 * kk), addConst(half, j),
                                        g.chunksPerRow());
      std::array<Value, 4> m = ops.loadMatrices(ops.offset(vTile, address), /*transpose=*/true);
      for (int64_t f = 0; f < 2; ++f) {
        std::array<Value, 4> d =
            ops.mma(p[kk], {m[2 * f], m[2 * f + 1]},
                    ArrayRef<Value>(acc).slice(4 * (j + f), 4), k.inputType);
        for (int64_t e = 0; e < 4; ++e)
          acc[4 * (j + f) + e] = d[e];
      }
    }
  return acc;
}

Value AttentionLowering::pack(Value lo, Value hi) {
  Type i16 = b.getI16Type(), i32Type = b.getI32Type();
  auto word = [&](Value v) {
    return arith::ExtUIOp::create(b, loc, i32Type, arith::BitcastOp::create(b, loc, i16, v));
  };
  return arith::OrIOp::create(b, loc, word(lo),
                              arith::ShLIOp::create(b, loc, word(hi), i32(16)));
}

void AttentionLowering::run() {
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
  warp = arith::ShRUIOp::create(b, loc, tid, i32(5));
  group = arith::ShRUIOp::create(b, loc, lane, i32(2));
  pair = mulConst(arith::AndIOp::create(b, loc, lane, i32(3)), 2);
  zero = i32(0);
  Value row = add(mulConst(warp, 16), group);
  rows = {row, addConst(row, 8)};
  for (int64_t n : {g.bkv, g.d}) {
    SmallVector<Value> &cols = columnsByWidth[n];
    if (!cols.empty())
      continue;
    for (int64_t c = 0; c < n / 4; ++c)
      cols.push_back(addConst(pair, 8 * (c / 2) + c % 2));
  }
  // One CTA per program, the grid the programs': the launch is that of any
  // kernel. The CTAs start in order of their linear id x + X y, and the
  // programs of the last query tiles walk the most key tiles in a causal
  // kernel, so CTA (x, y) runs program (X - 1 - L / Y, L mod Y) with L = x + X y:
  // the last query tile of every head first, then the one before it. A
  // permutation of the programs; the longest start first and the short ones
  // fill the last wave.
  IRMapping mapping;
  Value sizes[3] = {NVVM::GridDimXOp::create(b, loc, i32Type),
                    NVVM::GridDimYOp::create(b, loc, i32Type),
                    NVVM::GridDimZOp::create(b, loc, i32Type)};
  Value linear = add(NVVM::BlockIdXOp::create(b, loc, i32Type),
                     mul(sizes[0], NVVM::BlockIdYOp::create(b, loc, i32Type)));
  Value ids[3] = {
      arith::SubIOp::create(b, loc, addConst(sizes[0], -1),
                            arith::DivUIOp::create(b, loc, linear, sizes[1])),
      arith::RemUIOp::create(b, loc, linear, sizes[1]),
      NVVM::BlockIdZOp::create(b, loc, i32Type)};
  f.walk([&](ProgramIdOp op) { mapping.map(op.getResult(), ids[op.getDim()]); });
  f.walk([&](NumProgramsOp op) { mapping.map(op.getResult(), sizes[op.getDim()]); });
  smem = ops.dynamicSharedBase(k.func, "__tile_attention_shared_");
  Operand q = operand(k.loadQ, g.bq);
  keys = operand(k.loadK, g.bkv);
  values = operand(k.loadV, g.bkv);
  Value iv = k.loop.getInductionVar();
  Value ub = materializeScalar(b, f, k.loop.getUpperBound(), mapping);
  // A negative trip count runs no iteration, as scf.for does.
  Value tiles = arith::MaxSIOp::create(b, loc, toI32(ub), i32(0));

  // Q and K and V tiles 0 .. S-2 in flight, a group per tile (Q's with tile
  // 0; empty past the end, so that the groups count tiles).
  copyTile(q, smem, mapping);
  for (int64_t s = 0; s + 1 < g.stages; ++s) {
    auto some = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::sgt, tiles, i32(s)),
                                  /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(some.thenBlock());
      IRMapping first = mapping;
      first.map(iv, arith::ConstantIndexOp::create(b, loc, s).getResult());
      copyKeysValues(i32(s), first);
    }
    ops.commitGroup();
  }

  // The carried tiles' first values, at the thread's coordinates.
  SmallVector<Value> init;
  SmallVector<int64_t> widths;
  {
    DenseMap<Value, Held> none;
    Values prologue(*this, mapping, none);
    for (auto [i, v] : llvm::enumerate(k.loop.getInitArgs())) {
      const int64_t width = i == k.accumulator ? g.d : 1;
      widths.push_back(width);
      if (width == 1) {
        init.push_back(prologue.at(v, {rows[0], zero}));
        init.push_back(prologue.at(v, {rows[1], zero}));
      } else {
        llvm::append_range(init, fragments(prologue, v, width));
      }
    }
  }
  // Q's fragments, loaded once: lane l addresses row l mod 16 of the warp's
  // rows, chunk l / 16 of each k-step's two.
  ops.waitGroup(g.stages - 2);
  NVVM::Barrier0Op::create(b, loc);
  {
    Value qRow = add(mulConst(warp, 16), arith::AndIOp::create(b, loc, lane, i32(15)));
    Value half = arith::ShRUIOp::create(b, loc, lane, i32(4));
    for (int64_t kk = 0; kk < g.d / 16; ++kk)
      qFragments.push_back(ops.loadMatrices(
          ops.offset(smem, ops.swizzledChunk(qRow, addConst(half, 2 * kk), g.chunksPerRow())),
          /*transpose=*/false));
  }

  init.insert(init.begin(), i32(0)); // the stage of tile t
  auto loop = scf::ForOp::create(b, loc, i32(0), tiles, i32(1), init);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value t = loop.getInductionVar();
    Value stage = loop.getRegionIterArgs()[0];
    // Tile t's copies landed (at most S-2 later groups in flight), and every
    // warp is done with stage (t + S - 1) mod S = (t - 1) mod S, which the
    // next copies overwrite.
    ops.waitGroup(g.stages - 2);
    NVVM::Barrier0Op::create(b, loc);
    Value next = addConst(t, g.stages - 1);
    {
      auto some = scf::IfOp::create(b, loc, cmp(arith::CmpIPredicate::slt, next, tiles),
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard inIf(b);
      b.setInsertionPointToStart(some.thenBlock());
      IRMapping following = mapping;
      following.map(iv, toIndex(next));
      Value nextStage = select(cmp(arith::CmpIPredicate::eq, stage, i32(0)),
                               i32(g.stages - 1), addConst(stage, -1));
      copyKeysValues(nextStage, following);
    }
    ops.commitGroup();

    // The old body's values: the carried tiles and the scores held.
    DenseMap<Value, Held> held = heldTiles(k.loop.getRegionIterArgs(),
                                           loop.getRegionIterArgs().drop_front(), widths);
    held[k.scores.getResult()] = Held{g.bkv, scores(stageTile(stage, 0))};
    IRMapping inLoop = mapping;
    inLoop.map(iv, toIndex(t));
    Values body(*this, inLoop, held);
    // The second product's A: the 16-bit P at the thread's coordinates,
    // packed as A fragments (rows h = 0, 1 of k-halves 0, 1 of each 16).
    ArrayRef<Value> pCols = columns(g.bkv);
    SmallVector<std::array<Value, 4>> p;
    for (int64_t kk = 0; kk < g.bkv / 16; ++kk) {
      std::array<Value, 4> words;
      for (int64_t half = 0; half < 2; ++half)
        for (int64_t h = 0; h < 2; ++h) {
          const int64_t c = 4 * kk + 2 * half;
          words[2 * half + h] = pack(body.at(k.values.getA(), {rows[h], pCols[c]}),
                                     body.at(k.values.getA(), {rows[h], pCols[c + 1]}));
        }
      p.push_back(words);
    }
    SmallVector<Value> acc = fragments(body, k.values.getAcc(), g.d);
    acc = outputs(p, stageTile(stage, g.kvBytes()), std::move(acc));
    auto yield = cast<scf::YieldOp>(k.loop.getBody()->getTerminator());
    Value following = addConst(stage, 1);
    SmallVector<Value> yields{select(cmp(arith::CmpIPredicate::eq, following, i32(g.stages)),
                                     i32(0), following)};
    for (auto [i, v] : llvm::enumerate(yield.getOperands())) {
      if (i == k.accumulator) {
        llvm::append_range(yields, acc);
      } else {
        yields.push_back(body.at(v, {rows[0], zero}));
        yields.push_back(body.at(v, {rows[1], zero}));
      }
    }
    scf::YieldOp::create(b, loc, yields);
  }
  // The groups left are empty; waiting for them leaves no copy in flight.
  ops.waitGroup(0);

  // The epilogue: the stored tile at the thread's coordinates.
  DenseMap<Value, Held> held =
      heldTiles(k.loop.getResults(), loop.getResults().drop_front(), widths);
  Values epilogue(*this, mapping, held);
  Value out = k.store.getDest();
  auto storedType = cast<RankedTensorType>(k.store.getValue().getType());
  const int64_t rank = storedType.getRank();
  SmallVector<Value> indices, dims;
  for (Value index : k.store.getIndices())
    indices.push_back(materializeScalar(b, f, index, mapping));
  SmallVector<Value> origin = tileOrigin(b, loc, out, indices, storedType.getShape(), dims);
  // The leading (unit) dimensions: one index each, inside the output or not.
  SmallVector<Value> outer(origin.begin(), origin.end() - 2);
  Value outerIn = leadingInBounds(origin, dims);
  Value height = toI32(dims[rank - 2]), width = toI32(dims[rank - 1]);
  Value row0 = toI32(origin[rank - 2]), col0 = toI32(origin[rank - 1]);
  auto outType = cast<MemRefType>(out.getType());
  const int64_t eltBytes = outType.getElementType().getIntOrFloatBitWidth() / 8;
  SmallVector<int64_t> strides;
  int64_t offset;
  auto align = f.getArgAttrOfType<IntegerAttr>(cast<BlockArgument>(out).getArgNumber(),
                                               TileDialect::getAlignAttrName());
  const bool pairs = succeeded(outType.getStridesAndOffset(strides, offset)) &&
                     strides.back() == 1 && align && align.getInt() >= 2 * eltBytes;
  ArrayRef<Value> cols = columns(g.d);
  // The stored tile's coordinates: zeros, then the row and the column.
  auto coords = [&](Value r, Value c) {
    SmallVector<Value> at(rank - 2, zero);
    at.push_back(r);
    at.push_back(c);
    return at;
  };
  for (int64_t h = 0; h < 2; ++h) {
    Value r = add(row0, rows[h]);
    Value rowIn = cmp(arith::CmpIPredicate::ult, r, height);
    if (outerIn)
      rowIn = arith::AndIOp::create(b, loc, rowIn, outerIn);
    Value rowIndex = toIndex(r);
    for (int64_t c = 0; c < static_cast<int64_t>(cols.size()); c += 2) {
      Value v0 = epilogue.at(k.store.getValue(), coords(rows[h], cols[c]));
      Value v1 = epilogue.at(k.store.getValue(), coords(rows[h], cols[c + 1]));
      storeColumnPair(b, loc, out, rowIn, rowIndex, add(col0, cols[c]), width, v0, v1, pairs,
                      outer);
    }
  }

  for (Operation *op : llvm::reverse(old))
    op->erase();
  f->setAttr(TileDialect::getMmaSyncAttrName(), b.getUnitAttr());
  f->setAttr(TileDialect::getBlockSizeAttrName(), b.getI32IntegerAttr(g.threads()));
  f->setAttr(TileDialect::getDynamicSharedBytesAttrName(),
             b.getI32IntegerAttr(g.sharedBytes()));
}

struct ConvertTileAttentionToMmaSyncPass
    : mlir::tessera::impl::ConvertTileAttentionToMmaSyncBase<
          ConvertTileAttentionToMmaSyncPass> {
  using Base::Base;

  void runOnOperation() override {
    if (WarpMma::computeCapability(arch) < 80)
      return;
    SmallVector<func::FuncOp> kernels;
    getOperation().walk([&](func::FuncOp f) { kernels.push_back(f); });
    for (func::FuncOp f : kernels) {
      std::string why;
      FailureOr<AttentionKernel> k = matchAttentionKernel(f, why);
      FailureOr<Geometry> g = failure();
      if (succeeded(k))
        g = planGeometry(*k, stages, maxSharedBytes, why);
      if (failed(g)) {
        LLVM_DEBUG(llvm::dbgs() << f.getSymName() << ": not lowered: " << why << "\n");
        continue;
      }
      AttentionLowering(*k, *g).run();
    }
  }
};

} // namespace
