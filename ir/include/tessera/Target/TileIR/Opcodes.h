//===- Opcodes.h - CUDA Tile IR opcodes and attribute enums -----*- C++ -*-===//
//
// The opcodes (frozen in the format: BytecodeOpcodes.td of NVIDIA/cuda-tile)
// and attribute enum values (AttrDefs.td) of the ops tessera writes. Only
// ops available in bytecode 13.1 .. 13.3 appear here.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_TILEIR_OPCODES_H
#define TESSERA_TARGET_TILEIR_OPCODES_H

#include <cstdint>

namespace mlir::tessera::tileir {

enum class Opcode : uint16_t {
  AbsF = 0x00,
  AbsI = 0x01,
  AddF = 0x02,
  AddI = 0x03,
  AndI = 0x04,
  Assume = 0x06,
  Bitcast = 0x09,
  Broadcast = 0x0B,
  Ceil = 0x0D,
  CmpF = 0x0E,
  CmpI = 0x0F,
  Constant = 0x10,
  Continue = 0x11,
  Cos = 0x12,
  DivF = 0x14,
  DivI = 0x15,
  Exp = 0x17,
  Exp2 = 0x18,
  ExtI = 0x25,
  Floor = 0x27,
  Fma = 0x28,
  For = 0x29,
  FToF = 0x2A,
  FToI = 0x2B,
  GetNumTileBlocks = 0x2E,
  GetTileBlockId = 0x30,
  If = 0x32,
  Iota = 0x3A,
  IToF = 0x3B,
  JoinTokens = 0x3C,
  LoadViewTko = 0x3E,
  Log = 0x3F,
  Log2 = 0x40,
  MakePartitionView = 0x42,
  MakeTensorView = 0x43,
  MakeToken = 0x44,
  MaxF = 0x45,
  MaxI = 0x46,
  MinF = 0x47,
  MinI = 0x48,
  MmaF = 0x49,
  MulF = 0x4C,
  MulI = 0x4E,
  NegF = 0x4F,
  NegI = 0x50,
  Offset = 0x51,
  OrI = 0x52,
  Permute = 0x53,
  Pow = 0x54,
  Reduce = 0x58,
  RemF = 0x59,
  RemI = 0x5A,
  Reshape = 0x5B,
  Return = 0x5C,
  Rsqrt = 0x5D,
  Select = 0x5F,
  ShLI = 0x60,
  ShRI = 0x61,
  Sin = 0x62,
  Sqrt = 0x64,
  StoreViewTko = 0x66,
  SubF = 0x67,
  SubI = 0x68,
  Tan = 0x69,
  TanH = 0x6A,
  TruncI = 0x6B,
  XOrI = 0x6C,
  Yield = 0x6D,
};

enum class Rounding : uint8_t {
  NearestEven = 0,
  Zero = 1,
  NegativeInf = 2,
  PositiveInf = 3,
  Approx = 4,
  Full = 5,
  NearestIntToZero = 6,
};

enum class Signedness : uint8_t { Unsigned = 0, Signed = 1 };

enum class CmpPredicate : uint8_t {
  Equal = 0,
  NotEqual = 1,
  LessThan = 2,
  LessThanOrEqual = 3,
  GreaterThan = 4,
  GreaterThanOrEqual = 5,
};

enum class CmpOrdering : uint8_t { Unordered = 0, Ordered = 1 };

enum class MemoryOrdering : uint8_t { Weak = 0, Relaxed = 1, Acquire = 2 };

/// Self-contained attribute tags (BytecodeAttrOpcodes.td).
enum class AttrTag : uint8_t {
  Integer = 1, Float = 2, Bool = 3, DivBy = 8, Dictionary = 10,
  OptimizationHints = 11, Bounded = 12,
};

} // namespace mlir::tessera::tileir

#endif // TESSERA_TARGET_TILEIR_OPCODES_H
