//===- FunctionWriter.h - CUDA Tile IR bytecode: ops and blocks -*- C++ -*-===//
//
// The body of one Tile IR function as bytecode, op by op. Every op record is
//
//   opcode:varint, [result count:varint if any of its operands or results
//   is variadic -- ODS's Operator::isVariadic, so also for `return`],
//   result type indices, then its payload in the order its registry entry
//   gives: the optional-field bitfield (when the op has optional fields),
//   attributes in declaration order, operands (value indices), regions
//
// and a region is `blocks:varint` then per block `args:varint, arg type
// indices, ops:varint, ops`. Values are numbered in definition order: the
// function's arguments first, then each op's results after its regions
// (whose own values are numbered on from there and released when the block
// closes). Op names, attribute layouts and opcodes are the caller's
// (Opcodes.h); this class keeps the numbering and the nesting.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_TILEIR_FUNCTIONWRITER_H
#define TESSERA_TARGET_TILEIR_FUNCTIONWRITER_H

#include "tessera/Target/TileIR/Encoding.h"
#include "tessera/Target/TileIR/Opcodes.h"

#include <cassert>

namespace mlir::tessera::tileir {

class FunctionWriter {
public:
  /// A function of `numArgs` arguments (values 0 .. numArgs-1).
  explicit FunctionWriter(uint64_t numArgs) : next_(numArgs) {
    frames_.push_back({});
  }

  /// Appends an op; returns the value index of its first result.
  /// `countResults`: the op has a variadic operand or result, so its record
  /// holds its result count.
  uint64_t emit(Opcode code, std::span<const uint64_t> resultTypes,
                bool countResults, const ByteWriter &payload) {
    Frame &f = frames_.back();
    f.ops.varint(static_cast<uint64_t>(code));
    if (countResults)
      f.ops.varint(resultTypes.size());
    for (uint64_t t : resultTypes)
      f.ops.varint(t);
    f.ops.append(payload);
    ++f.count;
    uint64_t first = next_;
    next_ += resultTypes.size();
    return first;
  }

  /// Opens a block whose arguments have `argTypes`; returns the index of its
  /// first argument.
  uint64_t beginBlock(std::span<const uint64_t> argTypes) {
    Frame f;
    f.saved = next_;
    f.header.varint(argTypes.size());
    for (uint64_t t : argTypes)
      f.header.varint(t);
    frames_.push_back(std::move(f));
    uint64_t first = next_;
    next_ += argTypes.size();
    return first;
  }

  /// Closes the innermost block and returns its encoding; the values it
  /// defined are released.
  ByteWriter endBlock() {
    assert(frames_.size() > 1 && "endBlock without beginBlock");
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    next_ = f.saved;
    ByteWriter w;
    w.append(f.header);
    w.varint(f.count);
    w.append(f.ops);
    return w;
  }

  /// The function body: its ops, without a count.
  const std::vector<uint8_t> &body() const {
    assert(frames_.size() == 1 && "a block is still open");
    return frames_.front().ops.vector();
  }

private:
  struct Frame {
    ByteWriter header;
    ByteWriter ops;
    uint64_t count = 0;
    uint64_t saved = 0;
  };
  std::vector<Frame> frames_;
  uint64_t next_;
};

} // namespace mlir::tessera::tileir

#endif // TESSERA_TARGET_TILEIR_FUNCTIONWRITER_H
