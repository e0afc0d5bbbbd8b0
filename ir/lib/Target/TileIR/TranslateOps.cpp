//===- TranslateOps.cpp - tile kernel value ops to Tile IR ops ------------===//
//
// The value ops of a tile kernel as Tile IR ops: arith and math elementwise
// ops (IEEE rounding to nearest even where the op has a rounding mode; exp
// and tanh at full precision; divf, sqrt, exp and tanh marked `afn`, the
// front end's fast_* functions, approximate), casts, constants, program ids, splat,
// broadcast, reshape, transpose, iota, reductions and mma. Each op record
// is written as its registry entry lays it out after the result types:
// the optional-field bitfield (only for ops that have optional fields),
// the attributes in declaration order, the operands.
//
// f16 and bf16 are storage types in the tile dialect: float arithmetic and
// comparisons on them are computed in f32 and rounded back per op
// (floatOp), reductions accumulate in f32 and round once.
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tileir;

namespace {

/// Flags and attributes of an op, written before its operands.
ByteWriter fields(std::initializer_list<uint64_t> values) {
  ByteWriter w;
  for (uint64_t v : values)
    w.varint(v);
  return w;
}

constexpr uint64_t kNE = static_cast<uint64_t>(Rounding::NearestEven);
constexpr uint64_t kSigned = static_cast<uint64_t>(Signedness::Signed);
constexpr uint64_t kUnsigned = static_cast<uint64_t>(Signedness::Unsigned);

bool is16BitFloat(Type t) {
  Type e = getElementTypeOrSelf(t);
  return e.isF16() || e.isBF16();
}

Type withElement(Type t, Type elem) {
  if (auto tt = dyn_cast<RankedTensorType>(t))
    return tt.clone(elem);
  return elem;
}

ArrayRef<int64_t> shapeOf(Type t) {
  if (auto tt = dyn_cast<RankedTensorType>(t))
    return tt.getShape();
  return {};
}

/// Little-endian bytes of `bits`, `width` bits wide (at least one byte).
std::vector<uint8_t> rawBits(const APInt &bits) {
  unsigned bytes = std::max(1u, bits.getBitWidth() / 8);
  std::vector<uint8_t> raw(bytes);
  for (unsigned i = 0; i < bytes; ++i)
    raw[i] = static_cast<uint8_t>(bits.extractBitsAsZExtValue(
        std::min(8u, bits.getBitWidth() - 8 * i), 8 * i));
  return raw;
}

struct FloatOpInfo {
  Opcode code;
  ByteWriter fields;
};

/// Whether `op` is marked `afn` (the front end's fast_exp, fast_tanh,
/// fast_sqrt and fast_div): it then takes Tile IR's approximate rounding,
/// which exists for f32 only (f16 and bf16 are computed in f32 here).
bool approximate(Operation *op) {
  auto fm = dyn_cast<arith::ArithFastMathInterface>(op);
  return fm && !getElementTypeOrSelf(op->getResult(0).getType()).isF64() &&
         fm.getFastMathFlagsAttr() &&
         arith::bitEnumContainsAny(fm.getFastMathFlagsAttr().getValue(),
                                   arith::FastMathFlags::afn);
}

/// The Tile IR op and fields of an arith/math float op, if it is one.
std::optional<FloatOpInfo> floatOpInfo(Operation *op) {
  const uint64_t approx = static_cast<uint64_t>(Rounding::Approx);
  const uint64_t full = static_cast<uint64_t>(Rounding::Full);
  const bool fast = approximate(op);
  if (isa<arith::DivFOp>(op)) return FloatOpInfo{Opcode::DivF, fields({0, fast ? approx : kNE})};
  if (isa<math::ExpOp>(op)) return FloatOpInfo{Opcode::Exp, fields({fast ? approx : full})};
  if (isa<math::TanhOp>(op)) return FloatOpInfo{Opcode::TanH, fields({fast ? approx : full})};
  if (isa<math::SqrtOp>(op)) return FloatOpInfo{Opcode::Sqrt, fields({0, fast ? approx : kNE})};
  if (isa<arith::AddFOp>(op)) return FloatOpInfo{Opcode::AddF, fields({0, kNE})};
  if (isa<arith::SubFOp>(op)) return FloatOpInfo{Opcode::SubF, fields({0, kNE})};
  if (isa<arith::MulFOp>(op)) return FloatOpInfo{Opcode::MulF, fields({0, kNE})};
  if (isa<arith::RemFOp>(op)) return FloatOpInfo{Opcode::RemF, fields({})};
  // maxf/minf: bit 0 propagate_nan (maximumf/minimumf), bit 1 flush_to_zero.
  if (isa<arith::MaximumFOp>(op)) return FloatOpInfo{Opcode::MaxF, fields({1})};
  if (isa<arith::MinimumFOp>(op)) return FloatOpInfo{Opcode::MinF, fields({1})};
  if (isa<arith::MaxNumFOp>(op)) return FloatOpInfo{Opcode::MaxF, fields({0})};
  if (isa<arith::MinNumFOp>(op)) return FloatOpInfo{Opcode::MinF, fields({0})};
  if (isa<arith::NegFOp>(op)) return FloatOpInfo{Opcode::NegF, fields({})};
  if (isa<math::AbsFOp>(op)) return FloatOpInfo{Opcode::AbsF, fields({})};
  if (isa<math::FloorOp>(op)) return FloatOpInfo{Opcode::Floor, fields({})};
  if (isa<math::CeilOp>(op)) return FloatOpInfo{Opcode::Ceil, fields({})};
  if (isa<math::SinOp>(op)) return FloatOpInfo{Opcode::Sin, fields({})};
  if (isa<math::CosOp>(op)) return FloatOpInfo{Opcode::Cos, fields({})};
  if (isa<math::TanOp>(op)) return FloatOpInfo{Opcode::Tan, fields({})};
  if (isa<math::LogOp>(op)) return FloatOpInfo{Opcode::Log, fields({})};
  if (isa<math::Log2Op>(op)) return FloatOpInfo{Opcode::Log2, fields({})};
  if (isa<math::PowFOp>(op)) return FloatOpInfo{Opcode::Pow, fields({})};
  if (isa<math::Exp2Op>(op)) return FloatOpInfo{Opcode::Exp2, fields({0})};
  if (isa<math::RsqrtOp>(op)) return FloatOpInfo{Opcode::Rsqrt, fields({0})};
  if (isa<math::FmaOp>(op)) return FloatOpInfo{Opcode::Fma, fields({0, kNE})};
  return std::nullopt;
}

struct IntOpInfo {
  Opcode code;
  ByteWriter fields;
};

/// The Tile IR op and attributes of an arith/math integer op, if it is one.
std::optional<IntOpInfo> intOpInfo(Operation *op) {
  if (isa<arith::AddIOp>(op)) return IntOpInfo{Opcode::AddI, fields({0})};
  if (isa<arith::SubIOp>(op)) return IntOpInfo{Opcode::SubI, fields({0})};
  if (isa<arith::MulIOp>(op)) return IntOpInfo{Opcode::MulI, fields({0})};
  if (isa<arith::ShLIOp>(op)) return IntOpInfo{Opcode::ShLI, fields({0})};
  if (isa<arith::AndIOp>(op)) return IntOpInfo{Opcode::AndI, fields({})};
  if (isa<arith::OrIOp>(op)) return IntOpInfo{Opcode::OrI, fields({})};
  if (isa<arith::XOrIOp>(op)) return IntOpInfo{Opcode::XOrI, fields({})};
  uint64_t zero = static_cast<uint64_t>(Rounding::Zero);
  if (isa<arith::DivSIOp>(op)) return IntOpInfo{Opcode::DivI, fields({kSigned, zero})};
  if (isa<arith::DivUIOp>(op)) return IntOpInfo{Opcode::DivI, fields({kUnsigned, zero})};
  if (isa<arith::RemSIOp>(op)) return IntOpInfo{Opcode::RemI, fields({kSigned})};
  if (isa<arith::RemUIOp>(op)) return IntOpInfo{Opcode::RemI, fields({kUnsigned})};
  if (isa<arith::ShRSIOp>(op)) return IntOpInfo{Opcode::ShRI, fields({kSigned})};
  if (isa<arith::ShRUIOp>(op)) return IntOpInfo{Opcode::ShRI, fields({kUnsigned})};
  if (isa<arith::MaxSIOp>(op)) return IntOpInfo{Opcode::MaxI, fields({kSigned})};
  if (isa<arith::MaxUIOp>(op)) return IntOpInfo{Opcode::MaxI, fields({kUnsigned})};
  if (isa<arith::MinSIOp>(op)) return IntOpInfo{Opcode::MinI, fields({kSigned})};
  if (isa<arith::MinUIOp>(op)) return IntOpInfo{Opcode::MinI, fields({kUnsigned})};
  if (isa<math::AbsIOp>(op)) return IntOpInfo{Opcode::AbsI, fields({})};
  return std::nullopt;
}

/// cmpf's predicate and ordering, if Tile IR has them.
std::optional<std::pair<CmpPredicate, CmpOrdering>>
cmpfOf(arith::CmpFPredicate p) {
  using P = arith::CmpFPredicate;
  auto o = CmpOrdering::Ordered, u = CmpOrdering::Unordered;
  switch (p) {
  case P::OEQ: return {{CmpPredicate::Equal, o}};
  case P::ONE: return {{CmpPredicate::NotEqual, o}};
  case P::OLT: return {{CmpPredicate::LessThan, o}};
  case P::OLE: return {{CmpPredicate::LessThanOrEqual, o}};
  case P::OGT: return {{CmpPredicate::GreaterThan, o}};
  case P::OGE: return {{CmpPredicate::GreaterThanOrEqual, o}};
  case P::UEQ: return {{CmpPredicate::Equal, u}};
  case P::UNE: return {{CmpPredicate::NotEqual, u}};
  case P::ULT: return {{CmpPredicate::LessThan, u}};
  case P::ULE: return {{CmpPredicate::LessThanOrEqual, u}};
  case P::UGT: return {{CmpPredicate::GreaterThan, u}};
  case P::UGE: return {{CmpPredicate::GreaterThanOrEqual, u}};
  default: return std::nullopt;
  }
}

std::pair<CmpPredicate, Signedness> cmpiOf(arith::CmpIPredicate p) {
  using P = arith::CmpIPredicate;
  auto s = Signedness::Signed, u = Signedness::Unsigned;
  switch (p) {
  case P::eq: return {CmpPredicate::Equal, s};
  case P::ne: return {CmpPredicate::NotEqual, s};
  case P::slt: return {CmpPredicate::LessThan, s};
  case P::sle: return {CmpPredicate::LessThanOrEqual, s};
  case P::sgt: return {CmpPredicate::GreaterThan, s};
  case P::sge: return {CmpPredicate::GreaterThanOrEqual, s};
  case P::ult: return {CmpPredicate::LessThan, u};
  case P::ule: return {CmpPredicate::LessThanOrEqual, u};
  case P::ugt: return {CmpPredicate::GreaterThan, u};
  case P::uge: return {CmpPredicate::GreaterThanOrEqual, u};
  }
  return {CmpPredicate::Equal, s};
}

} // namespace

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

FailureOr<uint64_t> Translator::convertFloat(Operation *op, uint64_t v,
                                             Type from, Type to) {
  auto t = tileType(op, withElement(from, to));
  if (failed(t))
    return failure();
  ByteWriter p = fields({kNE});
  p.varint(v);
  return emit1(Opcode::FToF, *t, p);
}

FailureOr<uint64_t> Translator::floatOp(Operation *op, Opcode code,
                                        ArrayRef<uint64_t> ins, Type type,
                                        const ByteWriter &attrs) {
  Type resultType = op->getResult(0).getType();
  bool widen = is16BitFloat(type);
  Type f32 = Float32Type::get(op->getContext());
  std::vector<uint64_t> operands(ins.begin(), ins.end());
  if (widen)
    for (uint64_t &v : operands) {
      auto w = convertFloat(op, v, type, f32);
      if (failed(w))
        return failure();
      v = *w;
    }
  Type computed = widen && is16BitFloat(resultType) ? withElement(resultType, f32)
                                                    : resultType;
  auto t = tileType(op, computed);
  if (failed(t))
    return failure();
  ByteWriter p = attrs;
  for (uint64_t v : operands)
    p.varint(v);
  uint64_t r = emit1(code, *t, p);
  if (computed != resultType)
    return convertFloat(op, r, computed, getElementTypeOrSelf(resultType));
  return r;
}

uint64_t Translator::reshape(uint64_t v, ArrayRef<int64_t> shape,
                             uint64_t elem) {
  ByteWriter p;
  p.varint(v);
  return emit1(Opcode::Reshape, types_.tile(shape, elem), p);
}

//===----------------------------------------------------------------------===//
// Elementwise ops, casts, constants
//===----------------------------------------------------------------------===//

LogicalResult Translator::translateElementwise(Operation *op) {
  std::vector<uint64_t> ins;
  for (Value v : op->getOperands()) {
    auto i = lookup(op, v);
    if (failed(i))
      return failure();
    ins.push_back(*i);
  }
  Value result = op->getResult(0);
  if (auto info = floatOpInfo(op)) {
    auto r = floatOp(op, info->code, ins, op->getOperand(0).getType(), info->fields);
    if (failed(r))
      return failure();
    define(result, *r);
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    auto pred = cmpfOf(cmp.getPredicate());
    if (!pred)
      return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                             << "': arith.cmpf predicate '"
                             << arith::stringifyCmpFPredicate(cmp.getPredicate())
                             << "' has no CUDA Tile IR form";
    auto r = floatOp(op, Opcode::CmpF, ins, cmp.getLhs().getType(),
                     fields({uint64_t(pred->first), uint64_t(pred->second)}));
    if (failed(r))
      return failure();
    define(result, *r);
    return success();
  }
  auto type = tileType(op, result.getType());
  if (failed(type))
    return failure();
  if (auto info = intOpInfo(op)) {
    ByteWriter p = info->fields;
    for (uint64_t v : ins)
      p.varint(v);
    define(result, emit1(info->code, *type, p));
    return success();
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    auto [pred, sign] = cmpiOf(cmp.getPredicate());
    // Its attributes, predicate and signedness, precede both operands (all
    // attributes come before the operands, whatever their declared order).
    ByteWriter p = fields({uint64_t(pred), uint64_t(sign)});
    for (uint64_t v : ins)
      p.varint(v);
    define(result, emit1(Opcode::CmpI, *type, p));
    return success();
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    uint64_t cond = ins[0];
    auto shape = shapeOf(result.getType());
    if (!isa<RankedTensorType>(sel.getCondition().getType()) && !shape.empty()) {
      // A scalar condition selects whole tiles: broadcast it.
      uint64_t i1 = types_.element(Element::I1);
      std::vector<int64_t> ones(shape.size(), 1);
      cond = reshape(cond, ones, i1);
      ByteWriter b;
      b.varint(cond);
      cond = emit1(Opcode::Broadcast, types_.tile(shape, i1), b);
    }
    ByteWriter p;
    p.varint(cond);
    p.varint(ins[1]);
    p.varint(ins[2]);
    define(result, emit1(Opcode::Select, *type, p));
    return success();
  }
  return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                         << "': op '" << op->getName()
                         << "' has no CUDA Tile IR form in tessera's tileir "
                            "backend (use the nvvm backend)";
}

LogicalResult Translator::translateCast(Operation *op) {
  Value in = op->getOperand(0), result = op->getResult(0);
  auto v = lookup(op, in);
  auto type = tileType(op, result.getType());
  if (failed(v) || failed(type))
    return failure();
  Type from = getElementTypeOrSelf(in.getType());
  Type to = getElementTypeOrSelf(result.getType());
  auto emitWith = [&](Opcode code, ByteWriter p) {
    p.varint(*v);
    define(result, emit1(code, *type, p));
    return success();
  };
  if (isa<arith::ExtFOp, arith::TruncFOp>(op))
    return emitWith(Opcode::FToF, fields({kNE}));
  if (isa<arith::SIToFPOp>(op))
    return emitWith(Opcode::IToF, fields({kSigned, kNE}));
  if (isa<arith::UIToFPOp>(op))
    return emitWith(Opcode::IToF, fields({kUnsigned, kNE}));
  uint64_t toZero = static_cast<uint64_t>(Rounding::NearestIntToZero);
  if (isa<arith::FPToSIOp>(op))
    return emitWith(Opcode::FToI, fields({kSigned, toZero}));
  if (isa<arith::FPToUIOp>(op))
    return emitWith(Opcode::FToI, fields({kUnsigned, toZero}));
  if (isa<arith::ExtSIOp>(op))
    return emitWith(Opcode::ExtI, fields({kSigned}));
  if (isa<arith::ExtUIOp>(op))
    return emitWith(Opcode::ExtI, fields({kUnsigned}));
  if (isa<arith::TruncIOp>(op))
    return emitWith(Opcode::TruncI, fields({0}));
  if (isa<arith::BitcastOp>(op))
    return emitWith(Opcode::Bitcast, fields({}));
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    // index is i64 here.
    unsigned fromBits = from.isIndex() ? 64 : from.getIntOrFloatBitWidth();
    unsigned toBits = to.isIndex() ? 64 : to.getIntOrFloatBitWidth();
    if (fromBits == toBits) {
      define(result, *v);
      return success();
    }
    if (fromBits > toBits)
      return emitWith(Opcode::TruncI, fields({0}));
    return emitWith(Opcode::ExtI,
                    fields({isa<arith::IndexCastOp>(op) ? kSigned : kUnsigned}));
  }
  return failure();
}

LogicalResult Translator::translateConstant(Operation *op) {
  auto cst = cast<arith::ConstantOp>(op);
  auto type = tileType(op, cst.getType());
  if (failed(type))
    return failure();
  std::vector<uint8_t> raw;
  Attribute value = cst.getValue();
  auto bitsOf = [](Attribute a) -> std::optional<APInt> {
    if (auto f = dyn_cast<FloatAttr>(a))
      return f.getValue().bitcastToAPInt();
    if (auto i = dyn_cast<IntegerAttr>(a)) {
      APInt v = i.getValue();
      return i.getType().isIndex() ? v.sextOrTrunc(64) : v;
    }
    return std::nullopt;
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat()) {
      raw = rawBits(*bitsOf(dense.getSplatValue<Attribute>()));
    } else if (dense.getElementType().isInteger(1)) {
      return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                             << "': a non-uniform i1 tile constant has no "
                                "CUDA Tile IR form in tessera's writer";
    } else {
      for (Attribute a : dense.getValues<Attribute>()) {
        auto bytes = rawBits(*bitsOf(a));
        raw.insert(raw.end(), bytes.begin(), bytes.end());
      }
    }
  } else if (auto bits = bitsOf(value)) {
    raw = rawBits(*bits);
  } else {
    return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                           << "': constant " << value
                           << " has no CUDA Tile IR form";
  }
  ByteWriter p;
  p.varint(constants_.add(std::move(raw)));
  define(cst.getResult(), emit1(Opcode::Constant, *type, p));
  return success();
}

//===----------------------------------------------------------------------===//
// Tile ops
//===----------------------------------------------------------------------===//

LogicalResult Translator::translateReduce(Operation *op) {
  auto reduce = cast<tile::ReduceOp>(op);
  auto in = lookup(op, reduce.getInput());
  if (failed(in))
    return failure();
  auto inType = cast<RankedTensorType>(reduce.getInput().getType());
  Type elem = inType.getElementType();
  Type f32 = Float32Type::get(op->getContext());
  uint64_t input = *in;
  Type acc = elem;
  if (is16BitFloat(elem)) {
    auto w = convertFloat(op, input, inType, f32);
    if (failed(w))
      return failure();
    input = *w;
    acc = f32;
  }
  auto accElem = elementType(op, acc, types_);
  if (failed(accElem))
    return failure();
  uint64_t scalar = types_.tile({}, *accElem);
  unsigned axis = reduce.getAxis();
  std::vector<int64_t> reduced;
  for (auto [d, n] : llvm::enumerate(inType.getShape()))
    if (d != axis)
      reduced.push_back(n);

  // The identity, a self-contained attribute of the accumulator's type.
  ByteWriter identity;
  auto kind = reduce.getKind();
  if (auto ft = dyn_cast<FloatType>(acc)) {
    APFloat v = kind == tile::ReduceKind::sum ? APFloat::getZero(ft.getFloatSemantics())
                : APFloat::getInf(ft.getFloatSemantics(), kind == tile::ReduceKind::max);
    identity.varint(static_cast<uint8_t>(AttrTag::Float));
    identity.varint(*accElem);
    identity.signedVarint(static_cast<int64_t>(v.bitcastToAPInt().getZExtValue()));
  } else {
    unsigned width = acc.getIntOrFloatBitWidth();
    APInt v = kind == tile::ReduceKind::sum ? APInt::getZero(width)
              : kind == tile::ReduceKind::max ? APInt::getSignedMinValue(width)
                                              : APInt::getSignedMaxValue(width);
    identity.varint(static_cast<uint8_t>(AttrTag::Integer));
    identity.varint(*accElem);
    identity.varint(v.getZExtValue());
  }

  // The combiner: (element, accumulator) -> accumulator.
  uint64_t argTypes[] = {scalar, scalar};
  uint64_t a = w_.beginBlock(argTypes);
  ByteWriter c;
  Opcode code;
  bool isFloat = isa<FloatType>(acc);
  switch (kind) {
  case tile::ReduceKind::sum:
    code = isFloat ? Opcode::AddF : Opcode::AddI;
    c = isFloat ? fields({0, kNE}) : fields({0});
    break;
  // Float max and min reductions propagate NaN, as tile.reduce defines them
  // (maxf/minf bit 0: propagate_nan).
  case tile::ReduceKind::max:
    code = isFloat ? Opcode::MaxF : Opcode::MaxI;
    c = isFloat ? fields({1}) : fields({kSigned});
    break;
  case tile::ReduceKind::min:
    code = isFloat ? Opcode::MinF : Opcode::MinI;
    c = isFloat ? fields({1}) : fields({kSigned});
    break;
  }
  c.varint(a);
  c.varint(a + 1);
  uint64_t combined = emit1(code, scalar, c);
  ByteWriter y;
  y.varint(1);
  y.varint(combined);
  w_.emit(Opcode::Yield, {}, true, y);
  ByteWriter block = w_.endBlock();

  ByteWriter p;
  p.varint(axis);
  p.varint(1); // identities
  p.append(identity);
  p.varint(1); // operands
  p.varint(input);
  p.varint(1); // regions
  p.varint(1); // blocks
  p.append(block);
  uint64_t resultTypes[] = {types_.tile(reduced, *accElem)};
  uint64_t r = w_.emit(Opcode::Reduce, resultTypes, true, p);

  // tessera keeps the reduced axis with size 1.
  auto outType = cast<RankedTensorType>(reduce.getResult().getType());
  r = reshape(r, outType.getShape(), *accElem);
  if (acc != elem) {
    auto n = convertFloat(op, r, outType.clone(f32), elem);
    if (failed(n))
      return failure();
    r = *n;
  }
  define(reduce.getResult(), r);
  return success();
}

LogicalResult Translator::translateMma(Operation *op) {
  auto mma = cast<tile::MmaOp>(op);
  auto a = lookup(op, mma.getA());
  auto b = lookup(op, mma.getB());
  auto c = lookup(op, mma.getAcc());
  auto type = tileType(op, mma.getResult().getType());
  if (failed(a) || failed(b) || failed(c) || failed(type))
    return failure();
  ByteWriter p = fields({0}); // fast_acc unset
  p.varint(*a);
  p.varint(*b);
  p.varint(*c);
  define(mma.getResult(), emit1(Opcode::MmaF, *type, p));
  return success();
}

LogicalResult Translator::translateTileOp(Operation *op) {
  if (isa<tile::ProgramIdOp, tile::NumProgramsOp>(op)) {
    bool id = isa<tile::ProgramIdOp>(op);
    uint32_t dim = id ? cast<tile::ProgramIdOp>(op).getDim()
                      : cast<tile::NumProgramsOp>(op).getDim();
    uint64_t i32 = tileOf({}, Element::I32);
    uint64_t results[] = {i32, i32, i32};
    uint64_t first = w_.emit(id ? Opcode::GetTileBlockId : Opcode::GetNumTileBlocks,
                             results, false, ByteWriter());
    define(op->getResult(0), first + dim);
    return success();
  }
  if (auto iota = dyn_cast<tile::IotaOp>(op)) {
    auto type = tileType(op, iota.getResult().getType());
    if (failed(type))
      return failure();
    define(iota.getResult(), emit1(Opcode::Iota, *type, ByteWriter()));
    return success();
  }
  if (isa<tile::ReduceOp>(op))
    return translateReduce(op);
  if (isa<tile::MmaOp>(op))
    return translateMma(op);
  if (isa<tile::DeviceCallOp>(op))
    return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                           << "': tile.device_call has no CUDA Tile IR form "
                              "(Tile IR 13.3 cannot call external device "
                              "functions; use the nvvm backend)";

  // splat, broadcast, reshape, transpose: one operand, one result.
  if (!isa<tile::SplatOp, tile::BroadcastOp, tile::ReshapeOp, tile::TransposeOp>(op))
    return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                           << "': op '" << op->getName()
                           << "' has no CUDA Tile IR form";
  auto in = lookup(op, op->getOperand(0));
  auto type = tileType(op, op->getResult(0).getType());
  if (failed(in) || failed(type))
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (isa<tile::SplatOp>(op)) {
    auto elem = elementType(op, resultType.getElementType(), types_);
    if (failed(elem))
      return failure();
    std::vector<int64_t> ones(resultType.getRank(), 1);
    uint64_t v = reshape(*in, ones, *elem);
    ByteWriter p;
    p.varint(v);
    define(op->getResult(0), emit1(Opcode::Broadcast, *type, p));
    return success();
  }
  ByteWriter p;
  Opcode code = Opcode::Reshape;
  if (isa<tile::BroadcastOp>(op)) {
    code = Opcode::Broadcast;
  } else if (isa<tile::TransposeOp>(op)) {
    code = Opcode::Permute;
    int32_t perm[] = {1, 0};
    p.leArray<int32_t>(perm);
  }
  p.varint(*in);
  define(op->getResult(0), emit1(code, *type, p));
  return success();
}

LogicalResult Translator::translateValueOp(Operation *op) {
  if (op->getDialect() && op->getDialect()->getNamespace() == "tile")
    return translateTileOp(op);
  if (isa<arith::ConstantOp>(op))
    return translateConstant(op);
  if (isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
          arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp, arith::ExtUIOp,
          arith::TruncIOp, arith::BitcastOp, arith::IndexCastOp,
          arith::IndexCastUIOp>(op))
    return translateCast(op);
  if (op->getNumResults() == 1 &&
      (isa<arith::ArithDialect, math::MathDialect>(op->getDialect())))
    return translateElementwise(op);
  return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                         << "': op '" << op->getName()
                         << "' has no CUDA Tile IR form in tessera's tileir "
                            "backend (use the nvvm backend)";
}
