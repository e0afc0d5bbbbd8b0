//===- Encoding.h - CUDA Tile IR bytecode: numbers, tags, tables -*- C++ -*-===//
//
// The byte level of CUDA Tile IR bytecode, written from the public format
// (NVIDIA/cuda-tile: its bytecode registries are the authority):
//
//   file      = magic "\x7FTileIR\0", major:u8, minor:u8, tag:u16le, section*, 0x00
//   section   = id:u8 (bit 7: aligned), length:varint, [alignment:varint,
//               0xCB padding to it], payload
//   tables    = count:varint, padding to 4 (strings, types) or 8 (constants),
//               one little-endian offset per entry, the entries' bytes
//   varint    = unsigned LEB128; signed values are zig-zag encoded first
//
// ByteWriter builds any of these; TypeTable, StringTable and ConstantTable
// intern their entries (a type by its encoding, which names its parts by
// their indices, so equal encodings are equal types) and assembleModule()
// lays the sections out. Everything here is plain data: no MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_TILEIR_ENCODING_H
#define TESSERA_TARGET_TILEIR_ENCODING_H

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace mlir::tessera::tileir {

/// The bytecode version written: 13.3, the first whose tileiras targets sm_90.
inline constexpr uint8_t kVersionMajor = 13;
inline constexpr uint8_t kVersionMinor = 3;

/// An append-only byte buffer with the format's number encodings.
class ByteWriter {
public:
  void byte(uint8_t b) { data_.push_back(b); }
  void varint(uint64_t v);
  /// Zig-zag, then varint.
  void signedVarint(int64_t v);
  template <typename T>
  void le(T v) {
    auto u = static_cast<uint64_t>(v);
    for (size_t i = 0; i < sizeof(T); ++i)
      byte(static_cast<uint8_t>(u >> (8 * i)));
  }
  /// A count, then each value as a varint (the format's lists of type and
  /// value indices).
  void varints(std::span<const uint64_t> values) {
    varint(values.size());
    for (uint64_t v : values)
      varint(v);
  }
  /// A count, then each value as a little-endian T (the format's int arrays).
  template <typename T>
  void leArray(std::span<const T> values) {
    varint(values.size());
    for (T v : values)
      le<T>(v);
  }
  void append(std::span<const uint8_t> bytes) {
    data_.insert(data_.end(), bytes.begin(), bytes.end());
  }
  void append(const ByteWriter &other) { append(other.bytes()); }
  /// Pads with 0xCB to a multiple of `alignment` from the buffer's start.
  void alignTo(size_t alignment);

  std::span<const uint8_t> bytes() const { return data_; }
  const std::vector<uint8_t> &vector() const { return data_; }
  size_t size() const { return data_.size(); }

private:
  std::vector<uint8_t> data_;
};

/// Element types (their type tags, BytecodeTypeOpcodes.td).
enum class Element : uint8_t {
  I1 = 0, I8 = 1, I16 = 2, I32 = 3, I64 = 4,
  F16 = 5, BF16 = 6, F32 = 7, TF32 = 8, F64 = 9,
};

/// Padding values of partition views (PaddingValue, AttrDefs.td).
enum class Padding : uint8_t { Zero = 0, NegZero = 1, NaN = 2, PosInf = 3, NegInf = 4 };

/// The type table. Each method returns the index of the type, adding it (and
/// the types it names, first) when it is new.
class TypeTable {
public:
  uint64_t element(Element e);
  uint64_t pointer(uint64_t pointee);
  /// A tile of `shape` (empty: a scalar) of element type `elem` (an index).
  uint64_t tile(std::span<const int64_t> shape, uint64_t elem);
  /// `kDynamic` marks a dimension or stride given at run time.
  uint64_t tensorView(uint64_t elem, std::span<const int64_t> shape,
                      std::span<const int64_t> strides);
  uint64_t partitionView(std::span<const int32_t> tileShape, uint64_t tensorView,
                         std::span<const int32_t> dimMap,
                         std::optional<Padding> padding);
  uint64_t token();
  uint64_t function(std::span<const uint64_t> inputs,
                    std::span<const uint64_t> results);

  static constexpr int64_t kDynamic = INT64_MIN;

  /// The section's payload.
  ByteWriter section() const;

private:
  uint64_t intern(ByteWriter encoded);
  std::map<std::vector<uint8_t>, uint64_t> index_;
  std::vector<std::vector<uint8_t>> entries_;
};

class StringTable {
public:
  uint64_t get(const std::string &s);
  ByteWriter section() const;

private:
  std::map<std::string, uint64_t> index_;
  std::vector<std::string> entries_;
};

/// Dense constants: each entry is its size and its raw little-endian bytes
/// (one element for a splat).
class ConstantTable {
public:
  uint64_t add(std::vector<uint8_t> raw);
  bool empty() const { return entries_.empty(); }
  ByteWriter section() const;

private:
  std::map<std::vector<uint8_t>, uint64_t> index_;
  std::vector<std::vector<uint8_t>> entries_;
};

/// One optimization hint: its name and an integer or boolean value.
struct Hint {
  std::string name;
  std::variant<int64_t, bool> value;
};

/// An OptimizationHintsAttr of the hints `hints` (any order) for the one
/// architecture `arch` ("sm_90"), as an op attribute: the dictionary
/// { arch = { name = value, ... } } without the attribute's tag (integers are
/// i32). `selfContained` prefixes the tag, as the function table wants it.
ByteWriter optimizationHints(const std::string &arch, std::vector<Hint> hints,
                             bool selfContained, StringTable &strings,
                             TypeTable &types);

/// One function of the function section.
struct FunctionRecord {
  uint64_t name;       // string index
  uint64_t signature;  // type index of its function type
  bool kernel = true;  // an entry (kernel), not a device function
  std::vector<uint8_t> hints; // a self-contained OptimizationHintsAttr, or none
  std::vector<uint8_t> body;
};

/// The whole file: header, functions, constants, types, strings, end.
std::vector<uint8_t> assembleModule(const std::vector<FunctionRecord> &functions,
                                    const TypeTable &types,
                                    const StringTable &strings,
                                    const ConstantTable &constants);

} // namespace mlir::tessera::tileir

#endif // TESSERA_TARGET_TILEIR_ENCODING_H
