//===- Translator.cpp - the Tile IR entry, views, tokens, control flow ----===//
//
// The structural half of the translation (TranslateToTileIR.h): the entry's
// parameters, one tensor view per memref argument and one partition view per
// (memref, tile shape, padding) made at the top of the entry, loads and
// stores with their tokens, memref.dim, scf.for and scf.if. Value ops go to
// TranslateOps.cpp.
//
// Token rules (the Tile IR memory model orders token-ordered ops only
// through tokens): for each memref the kernel writes, a load takes the token
// of the last write (RAW) and adds its own to the reads since; a store takes
// all of them joined (WAR, WAW) and becomes the last write. A loop or branch
// that accesses such a memref carries one joined token for it in and out
// (an extra loop value or branch result), so accesses in different
// iterations and after the region stay ordered.
//
//===----------------------------------------------------------------------===//

#include "Translator.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tileir;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

std::optional<Element> mlir::tessera::tileir::elementOf(Type t) {
  if (t.isIndex())
    return Element::I64;
  if (auto it = dyn_cast<IntegerType>(t)) {
    switch (it.getWidth()) {
    case 1: return Element::I1;
    case 8: return Element::I8;
    case 16: return Element::I16;
    case 32: return Element::I32;
    case 64: return Element::I64;
    default: return std::nullopt;
    }
  }
  if (t.isF16()) return Element::F16;
  if (t.isBF16()) return Element::BF16;
  if (t.isF32()) return Element::F32;
  if (t.isF64()) return Element::F64;
  return std::nullopt;
}

FailureOr<uint64_t> Translator::elementType(Operation *op, Type t,
                                            TypeTable &types) {
  if (auto e = elementOf(t))
    return types.element(*e);
  return op->emitError() << "tileir: kernel '"
                         << op->getParentOfType<func::FuncOp>().getSymName()
                         << "': type " << t << " has no CUDA Tile IR form";
}

/// Why a tile of `shape` has no CUDA Tile IR form ("" when it has one): Tile
/// IR tiles have power-of-two dimensions and at most 2^24 elements (tileiras
/// rejects a larger one when it reads the bytecode).
static std::string tileShapeProblem(ArrayRef<int64_t> shape) {
  constexpr uint64_t kMaxTileElements = uint64_t(1) << 24;
  uint64_t elements = 1;
  for (int64_t d : shape) {
    if (d <= 0 || !llvm::isPowerOf2_64(static_cast<uint64_t>(d)))
      return "has a dimension that is not a power of two (CUDA Tile IR tiles "
             "need power-of-two dimensions)";
    elements *= static_cast<uint64_t>(d);
    if (elements > kMaxTileElements)
      return "has more than 2^24 elements: no CUDA Tile IR form (tileiras' "
             "largest tile)";
  }
  return "";
}

FailureOr<uint64_t> Translator::tileType(Operation *op, Type t,
                                         TypeTable &types) {
  if (auto tt = dyn_cast<RankedTensorType>(t)) {
    if (std::string problem = tileShapeProblem(tt.getShape()); !problem.empty())
      return op->emitError()
             << "tileir: kernel '"
             << op->getParentOfType<func::FuncOp>().getSymName() << "': tile "
             << t << " " << problem;
    auto e = elementType(op, tt.getElementType(), types);
    if (failed(e))
      return failure();
    return types.tile(tt.getShape(), *e);
  }
  auto e = elementType(op, t, types);
  if (failed(e))
    return failure();
  return types.tile({}, *e);
}

FailureOr<std::vector<uint64_t>> Translator::paramTypes(func::FuncOp kernel,
                                                        TypeTable &types) {
  std::vector<uint64_t> params;
  uint64_t i64 = types.tile({}, types.element(Element::I64));
  for (BlockArgument arg : kernel.getArguments()) {
    if (auto m = dyn_cast<MemRefType>(arg.getType())) {
      auto e = elementOf(m.getElementType());
      if (!e || *e == Element::I1)
        return kernel.emitError()
               << "tileir: kernel '" << kernel.getSymName() << "': argument "
               << arg.getArgNumber() << " has element type "
               << m.getElementType() << ", which has no CUDA Tile IR form";
      uint64_t ptr = types.tile({}, types.pointer(types.element(*e)));
      params.insert(params.end(), {ptr, ptr, i64});
      params.insert(params.end(), 2 * m.getRank(), i64);
      continue;
    }
    auto t = tileType(kernel, arg.getType(), types);
    if (failed(t))
      return failure();
    params.push_back(*t);
  }
  return params;
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

FailureOr<uint64_t> Translator::lookup(Operation *op, Value v) {
  auto it = values_.find(v);
  if (it != values_.end())
    return it->second;
  return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                         << "': operand of '" << op->getName()
                         << "' has no CUDA Tile IR value (it is a memref or "
                            "comes from an op without a Tile IR form)";
}

uint64_t Translator::scalarConstant(Element e, std::vector<uint8_t> raw) {
  ByteWriter p;
  p.varint(constants_.add(std::move(raw)));
  return emit1(Opcode::Constant, tileOf({}, e), p);
}

uint64_t Translator::i32Constant(int32_t v) {
  std::vector<uint8_t> raw(4);
  for (int i = 0; i < 4; ++i)
    raw[i] = static_cast<uint8_t>(static_cast<uint32_t>(v) >> (8 * i));
  return scalarConstant(Element::I32, std::move(raw));
}

//===----------------------------------------------------------------------===//
// Tensors and views
//===----------------------------------------------------------------------===//

namespace {

/// The padding of a load as a partition view padding value, if it has one.
FailureOr<std::optional<Padding>> paddingOf(tile::LoadOp load) {
  auto attr = load.getPaddingAttr();
  if (!attr)
    return std::optional<Padding>(Padding::Zero);
  llvm::APFloat v = attr.getValue();
  if (v.isNaN())
    return std::optional<Padding>(Padding::NaN);
  if (v.isInfinity())
    return std::optional<Padding>(v.isNegative() ? Padding::NegInf
                                                 : Padding::PosInf);
  if (v.isZero())
    return std::optional<Padding>(v.isNegative() ? Padding::NegZero
                                                 : Padding::Zero);
  return failure();
}

} // namespace

LogicalResult Translator::prepareTensors() {
  // Parameters: per memref its descriptor (see paramTypes).
  uint64_t next = 0;
  for (BlockArgument arg : kernel_.getArguments()) {
    auto m = dyn_cast<MemRefType>(arg.getType());
    if (!m) {
      define(arg, next++);
      continue;
    }
    Tensor t;
    ++next; // the allocated pointer, unused
    t.base = next++;
    t.offset = next++;
    for (int64_t d = 0; d < m.getRank(); ++d)
      t.sizes.push_back(next++);
    for (int64_t d = 0; d < m.getRank(); ++d)
      t.strides.push_back(next++);
    tensors_[arg] = std::move(t);
  }

  // Which memrefs are written, and the partition views the accesses need.
  struct Need {
    Operation *op;
    Value memref;
    std::vector<int64_t> shape;
    std::optional<Padding> padding;
  };
  std::vector<Need> needs;
  WalkResult walk = kernel_.walk([&](Operation *op) -> WalkResult {
    if (auto load = dyn_cast<tile::LoadOp>(op)) {
      auto padding = paddingOf(load);
      if (failed(padding)) {
        // The shortest text that reads back as the value (2.5, not 2.500000e+00).
        char text[32];
        auto end = std::to_chars(text, text + sizeof text,
                                 load.getPaddingAttr().getValueAsDouble()).ptr;
        load.emitError() << "tileir: kernel '" << kernel_.getSymName()
                         << "': tile.load padding "
                         << llvm::StringRef(text, end - text)
                         << " has no CUDA Tile IR form (a partition view pads "
                            "with 0, -0, nan, inf or -inf only)";
        return WalkResult::interrupt();
      }
      auto shape = load.getResult().getType().getShape();
      needs.push_back({op, load.getSource(), {shape.begin(), shape.end()}, *padding});
    } else if (auto store = dyn_cast<tile::StoreOp>(op)) {
      auto shape = cast<RankedTensorType>(store.getValue().getType()).getShape();
      needs.push_back({op, store.getDest(), {shape.begin(), shape.end()}, std::nullopt});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  for (const Need &n : needs) {
    auto it = tensors_.find(n.memref);
    if (it == tensors_.end())
      return n.op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                               << "': '" << n.op->getName()
                               << "' accesses a memref that is not a kernel "
                                  "argument";
    if (isa<tile::StoreOp>(n.op))
      it->second.written = true;
  }

  // A tensor view per accessed memref: static sizes and strides in its type,
  // the others from the parameters; tile.align as a divisibility fact.
  for (auto &[memref, t] : tensors_) {
    bool used = llvm::any_of(needs, [&](const Need &n) { return n.memref == memref; });
    if (!used)
      continue;
    auto m = cast<MemRefType>(memref.getType());
    auto [strides, offset] = m.getStridesAndOffset();
    uint64_t elem = types_.element(*elementOf(m.getElementType()));
    std::vector<int64_t> shape(m.getShape().begin(), m.getShape().end());
    std::vector<int64_t> strideTy(strides.begin(), strides.end());
    ByteWriter p;
    // The tensor's element [0, ...]: the aligned pointer advanced by the offset (in elements).
    uint64_t ptrType = types_.tile({}, types_.pointer(elem));
    ByteWriter advance;
    advance.varint(t.base);
    advance.varint(t.offset);
    uint64_t base = emit1(Opcode::Offset, ptrType, advance);
    unsigned argNo = cast<BlockArgument>(memref).getArgNumber();
    if (auto align = kernel_.getArgAttrOfType<IntegerAttr>(
            argNo, tile::TileDialect::getAlignAttrName())) {
      ByteWriter assume;
      // assume: its attribute (the predicate, self-contained), then its
      // operand (the value).
      assume.byte(static_cast<uint8_t>(AttrTag::DivBy));
      assume.varint(align.getInt());
      assume.byte(0);
      assume.varint(base);
      base = emit1(Opcode::Assume, ptrType, assume);
    }
    // A dynamic row stride of an aligned memref is a multiple of the
    // alignment (in elements), and its contiguous size a multiple of 16
    // bytes where the launch says so; with the launch's i32 fact every
    // dynamic size and stride is bounded.
    int64_t elemBytes = m.getElementTypeBitWidth() / 8;
    int64_t strideDivisor = 1;
    if (auto align = kernel_.getArgAttrOfType<IntegerAttr>(
            argNo, tile::TileDialect::getAlignAttrName());
        align && elemBytes > 0 && align.getInt() > elemBytes)
      strideDivisor = align.getInt() / elemBytes;
    std::vector<uint64_t> dynShape, dynStrides;
    for (int64_t d = 0; d < m.getRank(); ++d) {
      if (ShapedType::isDynamic(shape[d])) {
        shape[d] = TypeTable::kDynamic;
        bool contiguous = strides[d] == 1 && facts_.contiguousExtentsAligned && strideDivisor > 1;
        dynShape.push_back(assumeExtent(t.sizes[d], contiguous ? std::max<int64_t>(16 / elemBytes, 1) : 1));
      }
      if (ShapedType::isDynamic(strideTy[d])) {
        strideTy[d] = TypeTable::kDynamic;
        dynStrides.push_back(assumeExtent(t.strides[d], strideDivisor));
      }
    }
    t.viewType = types_.tensorView(elem, shape, strideTy);
    p.varint(base);
    p.varints(dynShape);
    p.varints(dynStrides);
    t.view = emit1(Opcode::MakeTensorView, t.viewType, p, true);
  }

  for (const Need &n : needs) {
    Tensor &t = tensors_[n.memref];
    unsigned argNo = cast<BlockArgument>(n.memref).getArgNumber();
    // A store needs any view of its tile shape; loads need their padding.
    if (!n.padding) {
      bool found = false;
      for (auto &[key, v] : partitions_)
        if (std::get<0>(key) == argNo && std::get<1>(key) == n.shape)
          found = true;
      if (found)
        continue;
    }
    auto key = std::make_tuple(argNo, n.shape, n.padding ? int(*n.padding) : -1);
    if (partitions_.count(key))
      continue;
    std::vector<int32_t> tileShape(n.shape.begin(), n.shape.end());
    std::vector<int32_t> dimMap;
    for (size_t d = 0; d < n.shape.size(); ++d)
      dimMap.push_back(static_cast<int32_t>(d));
    if (std::string problem = tileShapeProblem(n.shape); !problem.empty())
      return n.op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                               << "': tile of '" << n.op->getName() << "' "
                               << problem;
    uint64_t type = types_.partitionView(tileShape, t.viewType, dimMap, n.padding);
    ByteWriter p;
    p.varint(t.view);
    partitions_[key] = emit1(Opcode::MakePartitionView, type, p);
  }
  return success();
}

uint64_t Translator::assumeExtent(uint64_t v, int64_t divisor) {
  uint64_t i64 = types_.tile({}, types_.element(Element::I64));
  // assume: its predicate (a self-contained attribute), then the value.
  if (divisor > 1) {
    ByteWriter p;
    p.byte(static_cast<uint8_t>(AttrTag::DivBy));
    p.varint(static_cast<uint64_t>(divisor));
    p.byte(0); // no every/along
    p.varint(v);
    v = emit1(Opcode::Assume, i64, p);
  }
  if (facts_.extentsFitI32) {
    ByteWriter p;
    p.byte(static_cast<uint8_t>(AttrTag::Bounded));
    p.byte(0x3); // both bounds
    p.signedVarint(0);
    p.signedVarint(INT32_MAX);
    p.varint(v);
    v = emit1(Opcode::Assume, i64, p);
  }
  return v;
}

FailureOr<uint64_t> Translator::partitionView(Operation *op, Value memref,
                                              ArrayRef<int64_t> shape,
                                              std::optional<Padding> padding) {
  unsigned argNo = cast<BlockArgument>(memref).getArgNumber();
  std::vector<int64_t> s(shape.begin(), shape.end());
  if (padding) {
    auto it = partitions_.find(std::make_tuple(argNo, s, int(*padding)));
    if (it != partitions_.end())
      return it->second;
  } else {
    for (auto &[key, v] : partitions_)
      if (std::get<0>(key) == argNo && std::get<1>(key) == s)
        return v;
  }
  return op->emitError() << "tileir: internal error: no partition view for '"
                         << op->getName() << "'";
}

//===----------------------------------------------------------------------===//
// Tokens
//===----------------------------------------------------------------------===//

std::optional<uint64_t> Translator::allAccesses(Value memref) {
  TokenState &s = tokens_[memref];
  std::vector<uint64_t> all = s.reads;
  if (s.lastWrite)
    all.insert(all.begin(), *s.lastWrite);
  if (all.empty())
    return std::nullopt;
  if (all.size() == 1)
    return all.front();
  ByteWriter p;
  p.varints(all);
  uint64_t joined = emit1(Opcode::JoinTokens, types_.token(), p, true);
  s.lastWrite = joined;
  s.reads.clear();
  return joined;
}

uint64_t Translator::allAccessesOrFresh(Value memref) {
  if (auto t = allAccesses(memref))
    return *t;
  return emit1(Opcode::MakeToken, types_.token(), ByteWriter());
}

SmallVector<Value> Translator::carriedMemrefs(Operation *op) {
  SmallVector<Value> out;
  for (auto &[memref, t] : tensors_) {
    if (!t.written)
      continue;
    bool accessed = false;
    for (Region &r : op->getRegions())
      r.walk([&](Operation *inner) {
        if (auto l = dyn_cast<tile::LoadOp>(inner); l && l.getSource() == memref)
          accessed = true;
        if (auto s = dyn_cast<tile::StoreOp>(inner); s && s.getDest() == memref)
          accessed = true;
      });
    if (accessed)
      out.push_back(memref);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Loads and stores
//===----------------------------------------------------------------------===//

LogicalResult Translator::translateLoad(Operation *op) {
  auto load = cast<tile::LoadOp>(op);
  auto type = tileType(op, load.getResult().getType());
  if (failed(type))
    return failure();
  auto view = partitionView(op, load.getSource(),
                            load.getResult().getType().getShape(),
                            *paddingOf(load));
  if (failed(view))
    return failure();
  std::optional<uint64_t> token;
  bool ordered = tensors_[load.getSource()].written;
  if (ordered)
    token = tokens_[load.getSource()].lastWrite;
  // Flags: bit 1 the optional optimization hints, bit 2 the optional token
  // operand; the attributes (ordering, hints) come before the operands.
  ByteWriter p;
  p.varint((token ? 0x4 : 0x0) | (accessHints_ ? 0x2 : 0x0));
  p.varint(static_cast<uint8_t>(MemoryOrdering::Weak));
  if (accessHints_)
    p.append(*accessHints_);
  p.varint(*view);
  p.varint(load.getIndices().size());
  for (Value i : load.getIndices()) {
    auto v = lookup(op, i);
    if (failed(v))
      return failure();
    p.varint(*v);
  }
  if (token)
    p.varint(*token);
  uint64_t results[] = {*type, types_.token()};
  uint64_t first = w_.emit(Opcode::LoadViewTko, results, true, p);
  define(load.getResult(), first);
  if (ordered)
    tokens_[load.getSource()].reads.push_back(first + 1);
  return success();
}

LogicalResult Translator::translateStore(Operation *op) {
  auto store = cast<tile::StoreOp>(op);
  auto value = lookup(op, store.getValue());
  if (failed(value))
    return failure();
  auto view = partitionView(op, store.getDest(),
                            cast<RankedTensorType>(store.getValue().getType()).getShape(),
                            std::nullopt);
  if (failed(view))
    return failure();
  std::vector<uint64_t> indices;
  for (Value i : store.getIndices()) {
    auto v = lookup(op, i);
    if (failed(v))
      return failure();
    indices.push_back(*v);
  }
  std::optional<uint64_t> token = allAccesses(store.getDest());
  ByteWriter p;
  p.varint((token ? 0x4 : 0x0) | (accessHints_ ? 0x2 : 0x0));
  p.varint(static_cast<uint8_t>(MemoryOrdering::Weak));
  if (accessHints_)
    p.append(*accessHints_);
  p.varint(*value);
  p.varint(*view);
  p.varints(indices);
  if (token)
    p.varint(*token);
  uint64_t out = emit1(Opcode::StoreViewTko, types_.token(), p, true);
  TokenState &s = tokens_[store.getDest()];
  s.lastWrite = out;
  s.reads.clear();
  return success();
}

LogicalResult Translator::translateDim(Operation *op) {
  auto dim = cast<memref::DimOp>(op);
  auto it = tensors_.find(dim.getSource());
  std::optional<int64_t> index = dim.getConstantIndex();
  if (it == tensors_.end() || !index)
    return op->emitError() << "tileir: kernel '" << kernel_.getSymName()
                           << "': memref.dim needs a kernel argument and a "
                              "constant dimension";
  auto m = cast<MemRefType>(dim.getSource().getType());
  if (!m.isDynamicDim(*index)) {
    std::vector<uint8_t> raw(8);
    for (int i = 0; i < 8; ++i)
      raw[i] = static_cast<uint8_t>(static_cast<uint64_t>(m.getDimSize(*index)) >> (8 * i));
    define(dim.getResult(), scalarConstant(Element::I64, std::move(raw)));
    return success();
  }
  define(dim.getResult(), it->second.sizes[*index]);
  return success();
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

LogicalResult Translator::translateFor(Operation *op) {
  auto loop = cast<scf::ForOp>(op);
  SmallVector<Value> carried = carriedMemrefs(op);
  std::vector<uint64_t> operands, resultTypes;
  for (Value v : {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()}) {
    auto i = lookup(op, v);
    if (failed(i))
      return failure();
    operands.push_back(*i);
  }
  for (Value v : loop.getInitArgs()) {
    auto i = lookup(op, v);
    auto t = tileType(op, v.getType());
    if (failed(i) || failed(t))
      return failure();
    operands.push_back(*i);
    resultTypes.push_back(*t);
  }
  for (Value m : carried) {
    operands.push_back(allAccessesOrFresh(m));
    resultTypes.push_back(types_.token());
  }

  // The body: the induction variable, the loop values, the tokens.
  auto ivType = tileType(op, loop.getInductionVar().getType());
  if (failed(ivType))
    return failure();
  std::vector<uint64_t> argTypes = {*ivType};
  argTypes.insert(argTypes.end(), resultTypes.begin(), resultTypes.end());
  auto savedTokens = tokens_;
  uint64_t first = w_.beginBlock(argTypes);
  define(loop.getInductionVar(), first);
  for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs()))
    define(arg, first + 1 + i);
  for (auto [i, m] : llvm::enumerate(carried))
    tokens_[m] = {first + 1 + loop.getRegionIterArgs().size() + i, {}};
  if (failed(translateRegionBody(loop.getBody(), Opcode::Continue, carried)))
    return failure();
  ByteWriter block = w_.endBlock();
  tokens_ = std::move(savedTokens);

  ByteWriter p;
  p.varint(0); // no optional fields (unsignedCmp unset)
  p.varints(operands);
  p.varint(1); // regions
  p.varint(1); // blocks
  p.append(block);
  defineResults(op, w_.emit(Opcode::For, resultTypes, true, p), carried);
  return success();
}

LogicalResult Translator::translateIf(Operation *op) {
  auto branch = cast<scf::IfOp>(op);
  SmallVector<Value> carried = carriedMemrefs(op);
  auto cond = lookup(op, branch.getCondition());
  if (failed(cond))
    return failure();
  std::vector<uint64_t> resultTypes;
  for (Type t : branch.getResultTypes()) {
    auto tt = tileType(op, t);
    if (failed(tt))
      return failure();
    resultTypes.push_back(*tt);
  }
  std::vector<uint64_t> incoming;
  for (Value m : carried) {
    incoming.push_back(allAccessesOrFresh(m));
    resultTypes.push_back(types_.token());
  }

  auto writeRegion = [&](Region &r, ByteWriter &out) -> LogicalResult {
    auto savedTokens = tokens_;
    w_.beginBlock({});
    for (auto [i, m] : llvm::enumerate(carried))
      tokens_[m] = {incoming[i], {}};
    if (failed(translateRegionBody(r.empty() ? nullptr : &r.front(),
                                   Opcode::Yield, carried)))
      return failure();
    out.varint(1);
    out.append(w_.endBlock());
    tokens_ = std::move(savedTokens);
    return success();
  };

  ByteWriter p;
  p.varint(*cond);
  p.varint(2); // regions: then, else
  if (failed(writeRegion(branch.getThenRegion(), p)))
    return failure();
  if (branch.getElseRegion().empty() && resultTypes.empty()) {
    p.varint(0); // no else block
  } else if (failed(writeRegion(branch.getElseRegion(), p))) {
    return failure();
  }
  defineResults(op, w_.emit(Opcode::If, resultTypes, true, p), carried);
  return success();
}

LogicalResult Translator::translateRegionBody(Block *body, Opcode terminator,
                                              ArrayRef<Value> carried) {
  std::vector<uint64_t> yielded;
  if (body) {
    for (Operation &inner : body->without_terminator())
      if (failed(translateOp(&inner)))
        return failure();
    auto yield = cast<scf::YieldOp>(body->getTerminator());
    for (Value v : yield.getOperands()) {
      auto i = lookup(yield, v);
      if (failed(i))
        return failure();
      yielded.push_back(*i);
    }
  }
  for (Value m : carried)
    yielded.push_back(allAccessesOrFresh(m));
  ByteWriter y;
  y.varints(yielded);
  w_.emit(terminator, {}, true, y);
  return success();
}

void Translator::defineResults(Operation *op, uint64_t first,
                               ArrayRef<Value> carried) {
  for (auto [i, r] : llvm::enumerate(op->getResults()))
    define(r, first + i);
  for (auto [i, m] : llvm::enumerate(carried))
    tokens_[m] = {first + op->getNumResults() + i, {}};
}

//===----------------------------------------------------------------------===//
// The body
//===----------------------------------------------------------------------===//

LogicalResult Translator::translateOp(Operation *op) {
  if (isa<tile::LoadOp>(op))
    return translateLoad(op);
  if (isa<tile::StoreOp>(op))
    return translateStore(op);
  if (isa<memref::DimOp>(op))
    return translateDim(op);
  if (isa<scf::ForOp>(op))
    return translateFor(op);
  if (isa<scf::IfOp>(op))
    return translateIf(op);
  return translateValueOp(op);
}

LogicalResult Translator::translateBlock(Block &block) {
  for (Operation &op : block) {
    if (isa<func::ReturnOp>(op)) {
      ByteWriter p;
      p.varint(0);
      w_.emit(Opcode::Return, {}, true, p);
      continue;
    }
    if (failed(translateOp(&op)))
      return failure();
  }
  return success();
}

LogicalResult Translator::translateBody() {
  if (kernel_.getBlocks().size() != 1)
    return kernel_.emitError() << "tileir: kernel '" << kernel_.getSymName()
                               << "' has more than one block";
  if (failed(prepareTensors()))
    return failure();
  return translateBlock(kernel_.front());
}
