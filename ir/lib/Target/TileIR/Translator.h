//===- Translator.h - state of one tile kernel's translation ----*- C++ -*-===//
//
// The translator of TranslateToTileIR.h, shared by its two files:
// Translator.cpp (the entry and its ABI, views, tokens, control flow) and
// TranslateOps.cpp (the value ops: elementwise, math, casts, shape ops,
// reductions, mma). It maps each MLIR value to the index of the Tile IR
// value that holds it; every emitter either succeeds or emits an error on
// its op and returns failure, leaving nothing half-written that could be
// used.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_TARGET_TILEIR_TRANSLATOR_H
#define TESSERA_LIB_TARGET_TILEIR_TRANSLATOR_H

#include "tessera/Target/TileIR/FunctionWriter.h"
#include "tessera/Target/TileIR/TranslateToTileIR.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <map>
#include <optional>
#include <tuple>

namespace mlir::tessera::tileir {

class Translator {
public:
  Translator(func::FuncOp kernel, TypeTable &types, ConstantTable &constants,
             uint64_t numParams, TileIRFacts facts = {})
      : kernel_(kernel), types_(types), constants_(constants), w_(numParams),
        facts_(facts) {}

  /// The entry's parameter types (TranslateToTileIR.h's ABI), or failure.
  static FailureOr<std::vector<uint64_t>> paramTypes(func::FuncOp kernel,
                                                     TypeTable &types);
  /// The optimization hints (an op attribute, Encoding.h) every load and
  /// store carries.
  void setAccessHints(ByteWriter hints) { accessHints_ = std::move(hints); }
  /// Writes the body; `w()` then holds it.
  LogicalResult translateBody();
  const FunctionWriter &w() const { return w_; }

  //===--- Types (Translator.cpp) ---===//
  /// Tile IR element type of a scalar MLIR type (index is i64).
  static FailureOr<uint64_t> elementType(Operation *op, Type t, TypeTable &types);
  /// The tile type of an MLIR scalar (rank 0) or static tensor; tiles must
  /// have power-of-two dimensions.
  static FailureOr<uint64_t> tileType(Operation *op, Type t, TypeTable &types);
  FailureOr<uint64_t> tileType(Operation *op, Type t) {
    return tileType(op, t, types_);
  }
  uint64_t tileOf(ArrayRef<int64_t> shape, Element e) {
    return types_.tile(shape, types_.element(e));
  }

  //===--- Values ---===//
  FailureOr<uint64_t> lookup(Operation *op, Value v);
  void define(Value v, uint64_t index) { values_[v] = index; }

  /// Emits `code` with one result of `resultType` (an index) and `payload`;
  /// `countResults` as FunctionWriter::emit has it.
  uint64_t emit1(Opcode code, uint64_t resultType, const ByteWriter &payload,
                 bool countResults = false) {
    uint64_t t[] = {resultType};
    return w_.emit(code, t, countResults, payload);
  }
  /// `v` (a scalar i64 parameter) with `assume div_by<divisor>` (divisor > 1)
  /// and, with TileIRFacts::extentsFitI32, `assume bounded<0, 2^31 - 1>`.
  uint64_t assumeExtent(uint64_t v, int64_t divisor);
  /// A scalar constant of element `e` whose raw bytes are `raw`.
  uint64_t scalarConstant(Element e, std::vector<uint8_t> raw);
  uint64_t i32Constant(int32_t v);

  //===--- Ops (TranslateOps.cpp) ---===//
  /// Translates one op that defines values (not a load, store or region op).
  LogicalResult translateValueOp(Operation *op);

private:
  //===--- Translator.cpp ---===//
  LogicalResult translateBlock(Block &block);
  LogicalResult translateOp(Operation *op);
  LogicalResult prepareTensors();
  LogicalResult translateLoad(Operation *op);
  LogicalResult translateStore(Operation *op);
  LogicalResult translateFor(Operation *op);
  LogicalResult translateIf(Operation *op);
  /// The ops of a for or if body (none for `body` null: an absent else) and
  /// its `terminator` (Continue or Yield), which passes the scf.yield's
  /// values and then the tokens of the `carried` memrefs.
  LogicalResult translateRegionBody(Block *body, Opcode terminator,
                                    ArrayRef<Value> carried);
  /// Defines the results of region op `op`, numbered from `first`, and after
  /// them the tokens of the `carried` memrefs.
  void defineResults(Operation *op, uint64_t first, ArrayRef<Value> carried);
  LogicalResult translateDim(Operation *op);
  /// The partition view of `memref` for tiles of `shape` with `padding`.
  FailureOr<uint64_t> partitionView(Operation *op, Value memref,
                                    ArrayRef<int64_t> shape,
                                    std::optional<Padding> padding);

  /// Token order of one written memref: the last write and the reads since.
  struct TokenState {
    std::optional<uint64_t> lastWrite;
    std::vector<uint64_t> reads;
  };
  /// One token after every access so far (joined), or none before any.
  std::optional<uint64_t> allAccesses(Value memref);
  /// The same, a fresh token when there was no access yet.
  uint64_t allAccessesOrFresh(Value memref);
  /// Written memrefs accessed inside `op`'s regions, in argument order.
  SmallVector<Value> carriedMemrefs(Operation *op);

  //===--- TranslateOps.cpp ---===//
  LogicalResult translateElementwise(Operation *op);
  LogicalResult translateCast(Operation *op);
  LogicalResult translateConstant(Operation *op);
  LogicalResult translateTileOp(Operation *op);
  LogicalResult translateReduce(Operation *op);
  LogicalResult translateMma(Operation *op);
  /// Emits a float op on operands `ins` of type `type`; f16/bf16 operands are
  /// widened to f32 and the result rounded back.
  FailureOr<uint64_t> floatOp(Operation *op, Opcode code, ArrayRef<uint64_t> ins,
                              Type type, const ByteWriter &attrs);
  /// ftof of `v` from a tile of `from` to one of `to` (element types).
  FailureOr<uint64_t> convertFloat(Operation *op, uint64_t v, Type from, Type to);
  /// `v`, a tile of `from`, reshaped to `shape` (same element type).
  uint64_t reshape(uint64_t v, ArrayRef<int64_t> shape, uint64_t elem);

  func::FuncOp kernel_;
  TypeTable &types_;
  ConstantTable &constants_;
  FunctionWriter w_;
  llvm::DenseMap<Value, uint64_t> values_;

  /// Per memref argument: its aligned pointer, offset, sizes and strides
  /// (value indices of the entry's parameters).
  struct Tensor {
    uint64_t base = 0;
    uint64_t offset = 0;
    std::vector<uint64_t> sizes, strides;
    uint64_t view = 0;      // its tensor view, made in prepareTensors
    uint64_t viewType = 0;
    bool written = false;
  };
  llvm::MapVector<Value, Tensor> tensors_;
  std::map<std::tuple<unsigned, std::vector<int64_t>, int>, uint64_t> partitions_;
  llvm::DenseMap<Value, TokenState> tokens_;
  std::optional<ByteWriter> accessHints_;
  TileIRFacts facts_;
};

/// Element of a scalar MLIR type, if it has one in Tile IR.
std::optional<Element> elementOf(Type t);

} // namespace mlir::tessera::tileir

#endif // TESSERA_LIB_TARGET_TILEIR_TRANSLATOR_H
