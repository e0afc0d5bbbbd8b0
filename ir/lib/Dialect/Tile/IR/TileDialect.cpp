//===- TileDialect.cpp - tessera tile dialect -----------------------------===//
//
// Dialect registration, enum definitions, the verifiers of the tile ops and
// the padding of tile.load (its custom syntax and its value).
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Utils/KernelUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <string>

using namespace mlir;
using namespace mlir::tessera::tile;

#include "tessera/Dialect/Tile/IR/TileDialect.cpp.inc"
#include "tessera/Dialect/Tile/IR/TileEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// tile.load padding
//===----------------------------------------------------------------------===//

FailureOr<TypedAttr> mlir::tessera::tile::getPaddingValue(Type elt,
                                                          FloatAttr padding) {
  Builder b(elt.getContext());
  if (!padding)
    return TypedAttr(b.getZeroAttr(elt));
  double v = padding.getValueAsDouble();
  if (auto ft = dyn_cast<FloatType>(elt)) {
    const llvm::fltSemantics &sem = ft.getFloatSemantics();
    if (std::isnan(v))
      return TypedAttr(b.getFloatAttr(ft, APFloat::getQNaN(sem)));
    if (std::isinf(v) && !APFloat::semanticsHasInf(sem))
      return failure(); // f8E4M3FN has no infinities
    APFloat value(v);
    bool lostInfo = false;
    APFloat::opStatus status =
        value.convert(sem, APFloat::rmNearestTiesToEven, &lostInfo);
    if (!std::isinf(v) && (status & APFloat::opOverflow))
      return failure();
    return TypedAttr(b.getFloatAttr(ft, value));
  }
  auto it = dyn_cast<IntegerType>(elt);
  if (!it || !std::isfinite(v) || v != std::trunc(v))
    return failure();
  unsigned width = it.getWidth();
  if (width == 1) {
    if (v != 0 && v != 1)
      return failure();
    return TypedAttr(b.getIntegerAttr(it, APInt(1, v != 0)));
  }
  double bound = std::ldexp(1.0, static_cast<int>(std::min(width, 64u)) - 1);
  if (v < -bound || v >= bound)
    return failure();
  return TypedAttr(b.getIntegerAttr(
      it, APInt(width, static_cast<int64_t>(v), /*isSigned=*/true)));
}

/// The padding value as written after `padding =`: `inf`, `-inf`, `nan`, an
/// integer for integer element types, else the shortest decimal that reads
/// back as the same double, with a `.0` where MLIR's float literals need one.
static std::string formatPadding(double v, Type elt) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v < 0 ? "-inf" : "inf";
  if (isa<IntegerType>(elt) && v == std::trunc(v) && std::abs(v) < 0x1p63)
    return std::to_string(static_cast<int64_t>(v));
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
  std::string text(buffer, ec == std::errc() ? end : buffer);
  if (text.find('.') == std::string::npos) {
    size_t e = text.find('e');
    text.insert(e == std::string::npos ? text.size() : e, ".0");
  }
  return text;
}

/// `padding = VALUE`, or nothing (zero padding).
static ParseResult parsePadding(OpAsmParser &parser, FloatAttr &padding) {
  if (failed(parser.parseOptionalKeyword("padding")))
    return success();
  if (parser.parseEqual())
    return failure();
  bool negative = succeeded(parser.parseOptionalMinus());
  double value = 0;
  if (succeeded(parser.parseOptionalKeyword("inf"))) {
    value = std::numeric_limits<double>::infinity();
  } else if (succeeded(parser.parseOptionalKeyword("nan"))) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else {
    int64_t integer = 0;
    OptionalParseResult parsed = parser.parseOptionalInteger(integer);
    if (parsed.has_value()) {
      if (failed(*parsed))
        return failure();
      value = static_cast<double>(integer);
    } else if (parser.parseFloat(value)) {
      return failure();
    }
  }
  padding = parser.getBuilder().getF64FloatAttr(negative ? -value : value);
  return success();
}

static void printPadding(OpAsmPrinter &printer, LoadOp op, FloatAttr padding) {
  if (padding)
    printer << " padding = "
            << formatPadding(padding.getValueAsDouble(),
                             op.getType().getElementType());
}

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"
      >();
}

// The values of the dialect's attributes (TileDialect.td): what each one
// holds, checked wherever it appears, so that a pass never reads a malformed
// one; a `tile.*` name the dialect does not declare is an error.
LogicalResult TileDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  const StringRef name = attr.getName().getValue();
  const Attribute value = attr.getValue();
  auto fail = [&](StringRef what) {
    return op->emitOpError() << "attribute '" << name << "' must be " << what
                             << ", got " << value;
  };
  auto integer = [&](unsigned width, int64_t lo, int64_t hi, bool pow2,
                     StringRef what) -> LogicalResult {
    auto i = dyn_cast<IntegerAttr>(value);
    if (!i || !i.getType().isSignlessInteger(width) || i.getInt() < lo ||
        i.getInt() > hi ||
        (pow2 && !llvm::isPowerOf2_64(static_cast<uint64_t>(i.getInt()))))
      return fail(what);
    return success();
  };
  if (name == getKernelAttrName() || name == getVersionedAttrName() ||
      name == getWholeTilesAttrName() || name == getExchangeFreeAttrName() ||
      name == getReductionAttrName() || name == getExpInRangeAttrName() ||
      name == getExpRangeTestedAttrName() || name == getRewidenedAttrName() ||
      name == getUnrolledStreamsAttrName() ||
      name == getInteriorAttrName() || name == getVersionsAttrName() ||
      name == getRewidenAttrName() || name == getPersistentAttrName() ||
      name == getMmaSyncAttrName())
    return isa<UnitAttr>(value) ? success() : fail("a unit attribute");
  if (name == getBlockSizeAttrName()) {
    auto i = dyn_cast<IntegerAttr>(value);
    if (!i || !i.getType().isSignlessInteger(32) || i.getInt() < 1 ||
        i.getInt() > 1024 ||
        (!llvm::isPowerOf2_64(static_cast<uint64_t>(i.getInt())) &&
         i.getInt() % 128 != 0))
      return fail("an i32 up to 1024, a power of two or whole warpgroups "
                  "(a multiple of 128)");
    return success();
  }
  if (name == getTensorMapsAttrName()) {
    auto maps = dyn_cast<ArrayAttr>(value);
    auto valid = [](Attribute a) {
      auto m = dyn_cast<DenseI64ArrayAttr>(a);
      if (!m || m.size() != 4)
        return false;
      ArrayRef<int64_t> v = m.asArrayRef();
      return v[0] >= 0 && v[1] >= 1 && v[1] <= 256 && v[2] >= 1 &&
             v[2] <= 256 &&
             (v[3] == 0 || v[3] == 32 || v[3] == 64 || v[3] == 128);
    };
    if (!maps || maps.empty() || !llvm::all_of(maps, valid))
      return fail("a non-empty array of array<i64: param, box_inner (1-256), "
                  "box_outer (1-256), swizzle_bytes (0, 32, 64 or 128)>");
    return success();
  }
  if (name == getCtasPerProgramAttrName() ||
      name == getProgramsPerCtaAttrName())
    return integer(32, 1, 1 << 20, true, "an i32 power of two");
  if (name == getSplitKAttrName())
    return integer(32, 2, 8, true, "an i32 power of two from 2 to 8");
  if (name == getDynamicSharedBytesAttrName())
    return integer(32, 1, std::numeric_limits<int32_t>::max(), false,
                   "a positive i32");
  if (name == getWorkspaceBytesAttrName())
    return integer(64, 0, std::numeric_limits<int64_t>::max(), false,
                   "a non-negative i64");
  if (name == getGridAttrName()) {
    auto grid = dyn_cast<DenseI64ArrayAttr>(value);
    if (!grid || grid.size() != 3 ||
        llvm::any_of(grid.asArrayRef(), [](int64_t d) {
          return d < 1 || d > std::numeric_limits<int32_t>::max();
        }))
      return fail("three positive i32-sized program counts");
    return success();
  }
  return op->emitOpError() << "unknown attribute '" << name
                           << "' of the tile dialect";
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  const StringRef name = attr.getName().getValue();
  if (name == getSettledAttrName()) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitOpError() << "argument " << argIndex << ": attribute '"
                               << name << "' must be a unit attribute";
    return success();
  }
  if (name != getAlignAttrName())
    return op->emitOpError() << "unknown argument attribute '" << name
                             << "' of the tile dialect";
  auto align = dyn_cast<IntegerAttr>(attr.getValue());
  if (!align || !align.getType().isSignlessInteger(64) || align.getInt() < 1 ||
      !llvm::isPowerOf2_64(static_cast<uint64_t>(align.getInt())))
    return op->emitOpError() << "argument " << argIndex << ": attribute '"
                             << name << "' must be an i64 power of two, got "
                             << attr.getValue();
  return success();
}

void mlir::tessera::tile::registerTileDialect(DialectRegistry &registry) {
  registry.insert<TileDialect>();
}

bool mlir::tessera::tile::isFloat8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

bool mlir::tessera::tile::isTileShape(ShapedType type) {
  if (!type.hasStaticShape())
    return false;
  return llvm::all_of(type.getShape(), [](int64_t d) {
    return d > 0 && llvm::isPowerOf2_64(static_cast<uint64_t>(d));
  });
}

//===----------------------------------------------------------------------===//
// Verifier helpers
//===----------------------------------------------------------------------===//

/// Checks that `type` is a valid tile: static power-of-two dimensions.
static LogicalResult verifyTile(Operation *op, RankedTensorType type,
                                StringRef what) {
  if (!isTileShape(type))
    return op->emitOpError() << what << " " << type
                             << " must have static power-of-two dimensions";
  return success();
}

/// Shared rules of tile.load and tile.store.
static LogicalResult verifyGlobalAccess(Operation *op, MemRefType memref,
                                        RankedTensorType tile,
                                        size_t numIndices) {
  int64_t rank = memref.getRank();
  if (rank < 1 || rank > 4)
    return op->emitOpError()
           << "global tensor must have rank 1 to 4, got " << rank;
  if (static_cast<int64_t>(numIndices) != rank)
    return op->emitOpError()
           << "expected " << rank
           << " tile indices (one per memref dimension), got " << numIndices;
  if (tile.getRank() != rank)
    return op->emitOpError() << "tile rank " << tile.getRank()
                             << " does not match memref rank " << rank;
  if (tile.getElementType() != memref.getElementType())
    return op->emitOpError()
           << "tile element type " << tile.getElementType()
           << " does not match memref element type " << memref.getElementType();
  return verifyTile(op, tile, "tile");
}

//===----------------------------------------------------------------------===//
// Op verifiers
//===----------------------------------------------------------------------===//

LogicalResult LoadOp::verify() {
  if (failed(verifyGlobalAccess(*this, getSource().getType(), getType(),
                                getIndices().size())))
    return failure();
  Type elt = getType().getElementType();
  if (FloatAttr padding = getPaddingAttr();
      padding && failed(getPaddingValue(elt, padding)))
    return emitOpError() << "padding "
                         << formatPadding(padding.getValueAsDouble(), elt)
                         << " is not a value of the element type " << elt
                         << " (integer types take integers within their "
                            "range, float types inf, -inf (where the type "
                            "has them), nan or a value within their range)";
  return success();
}

LogicalResult StoreOp::verify() {
  return verifyGlobalAccess(*this, getDest().getType(), getValue().getType(),
                            getIndices().size());
}

LogicalResult SplatOp::verify() {
  if (getInput().getType() != getType().getElementType())
    return emitOpError() << "scalar type " << getInput().getType()
                         << " does not match tile element type "
                         << getType().getElementType();
  return verifyTile(*this, getType(), "result");
}

LogicalResult BroadcastOp::verify() {
  RankedTensorType src = getInput().getType(), dst = getType();
  if (failed(verifyTile(*this, src, "operand")) ||
      failed(verifyTile(*this, dst, "result")))
    return failure();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("operand and result element types differ");
  if (src.getRank() != dst.getRank())
    return emitOpError() << "operand rank " << src.getRank()
                         << " differs from result rank " << dst.getRank()
                         << " (broadcasting never adds dimensions)";
  for (auto [d, pair] :
       llvm::enumerate(llvm::zip(src.getShape(), dst.getShape()))) {
    auto [s, r] = pair;
    if (s != r && s != 1)
      return emitOpError() << "operand dimension " << d << " (" << s
                           << ") must be 1 or equal the result dimension (" << r
                           << ")";
  }
  return success();
}

LogicalResult ReshapeOp::verify() {
  RankedTensorType src = getInput().getType(), dst = getType();
  if (failed(verifyTile(*this, src, "operand")) ||
      failed(verifyTile(*this, dst, "result")))
    return failure();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("operand and result element types differ");
  if (src.getNumElements() != dst.getNumElements())
    return emitOpError() << "operand has " << src.getNumElements()
                         << " elements but result has " << dst.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType src = getInput().getType(), dst = getType();
  if (failed(verifyTile(*this, src, "operand")) ||
      failed(verifyTile(*this, dst, "result")))
    return failure();
  if (src.getRank() != 2 || dst.getRank() != 2)
    return emitOpError("operand and result must have rank 2");
  if (src.getElementType() != dst.getElementType())
    return emitOpError("operand and result element types differ");
  if (src.getDimSize(0) != dst.getDimSize(1) ||
      src.getDimSize(1) != dst.getDimSize(0))
    return emitOpError() << "result type " << dst << " is not the transpose of "
                         << src;
  return success();
}

LogicalResult ReduceOp::verify() {
  RankedTensorType src = getInput().getType(), dst = getType();
  if (failed(verifyTile(*this, src, "operand")) ||
      failed(verifyTile(*this, dst, "result")))
    return failure();
  int64_t axis = getAxis();
  if (axis >= src.getRank())
    return emitOpError() << "axis " << axis << " out of range for rank "
                         << src.getRank();
  if (src.getElementType() != dst.getElementType())
    return emitOpError("operand and result element types differ");
  SmallVector<int64_t> expected(src.getShape());
  expected[axis] = 1;
  if (dst.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "result shape must equal the operand shape with "
                            "dimension "
                         << axis << " set to 1";
  return success();
}

LogicalResult IotaOp::verify() {
  return verifyTile(*this, getType(), "result");
}

LogicalResult DeviceCallOp::verify() {
  RankedTensorType result = getResult().getType();
  if (failed(verifyTile(*this, result, "result")))
    return failure();
  if (getArgs().empty())
    return emitOpError("needs at least one argument");
  auto callable = [](Type t) { return t.isF32() || t.isInteger(32); };
  if (!callable(result.getElementType()))
    return emitOpError("result elements must be f32 or i32, got ")
           << result.getElementType();
  for (auto [i, arg] : llvm::enumerate(getArgs())) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (type.getShape() != result.getShape())
      return emitOpError("argument ")
             << i << " has shape " << type << " but the result is " << result;
    if (!callable(type.getElementType()))
      return emitOpError("argument ")
             << i << " elements must be f32 or i32, got "
             << type.getElementType();
  }
  return success();
}

LogicalResult MmaOp::verify() {
  RankedTensorType a = getA().getType(), b = getB().getType(),
                   acc = getAcc().getType();
  for (auto [t, name] :
       {std::pair{a, "lhs"}, {b, "rhs"}, {acc, "accumulator"}}) {
    if (failed(verifyTile(*this, t, name)))
      return failure();
    if (t.getRank() != 2)
      return emitOpError() << name << " must have rank 2";
  }
  Type elt = a.getElementType();
  if (!isa<Float16Type, BFloat16Type, Float32Type, Float8E4M3FNType,
           Float8E5M2Type>(elt))
    return emitOpError() << "operand element type must be f16, bf16, f32, "
                            "f8E4M3FN or f8E5M2, got "
                         << elt;
  // The two 8-bit float formats may meet (the tensor cores multiply
  // e4m3 x e5m2 as they do e4m3 x e4m3); other types must agree.
  if (b.getElementType() != elt && !(isFloat8(elt) && isFloat8(b.getElementType())))
    return emitOpError("lhs and rhs element types differ");
  if (!acc.getElementType().isF32())
    return emitOpError("accumulator element type must be f32");
  if (getType() != acc)
    return emitOpError("result type must equal the accumulator type");
  if (a.getDimSize(1) != b.getDimSize(0))
    return emitOpError() << "K mismatch: lhs is " << a.getDimSize(0) << "x"
                         << a.getDimSize(1) << " but rhs is " << b.getDimSize(0)
                         << "x" << b.getDimSize(1);
  if (a.getDimSize(0) != acc.getDimSize(0))
    return emitOpError() << "M mismatch: lhs has " << a.getDimSize(0)
                         << " rows but accumulator has " << acc.getDimSize(0);
  if (b.getDimSize(1) != acc.getDimSize(1))
    return emitOpError() << "N mismatch: rhs has " << b.getDimSize(1)
                         << " columns but accumulator has "
                         << acc.getDimSize(1);
  return success();
}

//===----------------------------------------------------------------------===//
// Streamed loads
//===----------------------------------------------------------------------===//

/// The stream ops exist only inside tile kernels: their meaning (a program's
/// copies and groups) needs a program.
static LogicalResult verifyInKernel(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  if (!fn || !fn->hasAttr(TileDialect::getKernelAttrName()))
    return op->emitOpError("must be inside a tile kernel (a func.func marked '")
           << TileDialect::getKernelAttrName() << "')";
  return success();
}

/// The tile type of a slot of `ring` (its dimensions after the first).
static RankedTensorType slotType(MemRefType ring) {
  return RankedTensorType::get(ring.getShape().drop_front(),
                               ring.getElementType());
}

/// Shared rules of the ops that take a ring.
static LogicalResult verifyRing(Operation *op, MemRefType ring) {
  if (ring.getRank() < 2 || ring.getShape().front() < 2 ||
      !ring.getLayout().isIdentity())
    return op->emitOpError()
           << "ring " << ring
           << " must be a static memref of at least 2 slots (its first "
              "dimension) of a tile, with the identity layout";
  if (!ring.getElementType().isIntOrFloat() ||
      ring.getElementTypeBitWidth() % 8 != 0)
    return op->emitOpError() << "ring element type " << ring.getElementType()
                             << " must be a whole number of bytes";
  return verifyTile(op, slotType(ring), "ring slot");
}

LogicalResult StreamBufferOp::verify() {
  if (failed(verifyInKernel(*this)))
    return failure();
  return verifyRing(*this, getRing().getType());
}

/// The bulk ring `ring` comes from (null if not a tile.stream_buffer).
static StreamBufferOp ringBuffer(Value ring) {
  return ring.getDefiningOp<StreamBufferOp>();
}

LogicalResult StreamCopyOp::verify() {
  if (failed(verifyInKernel(*this)) ||
      failed(verifyRing(*this, getRing().getType())))
    return failure();
  StreamBufferOp buffer = ringBuffer(getRing());
  if (buffer && buffer.getBulk() != static_cast<bool>(getRound()))
    return emitOpError() << (buffer.getBulk()
                                 ? "into a bulk ring needs a round"
                                 : "takes a round only into a bulk ring");
  return verifyGlobalAccess(*this, getSource().getType(),
                            slotType(getRing().getType()),
                            getIndices().size());
}

LogicalResult StreamCommitOp::verify() { return verifyInKernel(*this); }

LogicalResult StreamWaitOp::verify() { return verifyInKernel(*this); }

LogicalResult StreamTakeOp::verify() {
  if (failed(verifyInKernel(*this)) ||
      failed(verifyRing(*this, getRing().getType())))
    return failure();
  if (getType() != slotType(getRing().getType()))
    return emitOpError() << "result type " << getType()
                         << " must be the ring's slot type "
                         << slotType(getRing().getType());
  return success();
}

/// Verifies `op` on a bulk ring (tile.stream_ready, tile.stream_release).
static LogicalResult verifyBulkRingUse(Operation *op, Value ring) {
  if (failed(verifyInKernel(op)) ||
      failed(verifyRing(op, cast<MemRefType>(ring.getType()))))
    return failure();
  StreamBufferOp buffer = ringBuffer(ring);
  if (!buffer || !buffer.getBulk())
    return op->emitOpError() << "needs a bulk tile.stream_buffer";
  return success();
}

LogicalResult GridDependencyWaitOp::verify() {
  if (failed(verifyInKernel(*this)))
    return failure();
  auto fn = (*this)->getParentOfType<func::FuncOp>();
  if ((*this)->getBlock() != &fn.getBody().front())
    return emitOpError() << "must be in the kernel's entry block";
  // What runs before the wait may read only tensors no running kernel
  // writes: loads and copies of settled arguments.
  for (Operation &op : *(*this)->getBlock()) {
    if (&op == getOperation())
      break;
    WalkResult r = op.walk([&](Operation *inner) {
      Value source;
      if (auto load = dyn_cast<LoadOp>(inner))
        source = load.getSource();
      else if (auto copy = dyn_cast<StreamCopyOp>(inner))
        source = copy.getSource();
      if (source && !readsSettledArgument(fn, source)) {
        inner->emitOpError() << "reads a tensor before the grid dependency "
                                "wait that is not a kernel argument marked '"
                             << TileDialect::getSettledAttrName() << "'";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return emitOpError() << "follows a read of a tensor that a kernel "
                              "still running may write";
  }
  return success();
}

/// The CTAs that share each program's K loop in the kernel around `op`
/// (its `tile.split_k`), or 0 if it has none.
static int64_t splitCtas(Operation *op) {
  auto fn = op->getParentOfType<func::FuncOp>();
  auto s = fn ? fn->getAttrOfType<IntegerAttr>(TileDialect::getSplitKAttrName())
              : IntegerAttr();
  return s ? s.getInt() : 0;
}

LogicalResult SplitRankOp::verify() {
  if (failed(verifyInKernel(*this)))
    return failure();
  if (splitCtas(*this) == 0)
    return emitOpError() << "must be in a kernel marked '"
                         << TileDialect::getSplitKAttrName() << "'";
  return success();
}

LogicalResult SplitSumOp::verify() {
  if (failed(verifyInKernel(*this)))
    return failure();
  if (splitCtas(*this) == 0)
    return emitOpError() << "must be in a kernel marked '"
                         << TileDialect::getSplitKAttrName() << "'";
  for (Operation *p = (*this)->getParentOp(); !isa<func::FuncOp>(p);
       p = p->getParentOp())
    if (p->getName().getStringRef() != "scf.if")
      return emitOpError() << "must not be inside '" << p->getName()
                           << "': every CTA of a program reaches it once";
  if (getInputs().empty() || getInputs().getTypes() != getResults().getTypes())
    return emitOpError() << "needs at least one input, and results of the "
                            "inputs' types";
  for (Type t : getInputs().getTypes()) {
    auto type = cast<RankedTensorType>(t);
    if (!type.getElementType().isF32())
      return emitOpError() << "input element type " << type.getElementType()
                           << " must be f32";
    if (failed(verifyTile(*this, type, "input")))
      return failure();
  }
  return success();
}

LogicalResult StreamReadyOp::verify() {
  return verifyBulkRingUse(*this, getRing());
}

LogicalResult StreamReleaseOp::verify() {
  return verifyBulkRingUse(*this, getRing());
}

#define GET_OP_CLASSES
#include "tessera/Dialect/Tile/IR/TileOps.cpp.inc"
