//===- Encoding.cpp - CUDA Tile IR bytecode: numbers, tags, tables --------===//
//
// The byte level described in Encoding.h. Type records follow the
// registries of NVIDIA/cuda-tile at bytecode 13.3: a tile names its element
// type before its shape; a partition view starts with the bitfield of its
// optional parameters (bit 0: a padding value follows the dimension map).
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/TileIR/Encoding.h"
#include "tessera/Target/TileIR/Opcodes.h"

#include <algorithm>
#include <cstring>

using namespace mlir::tessera::tileir;

namespace {

/// Section ids (BytecodeEnums.h).
enum Section : uint8_t {
  kEnd = 0x00,
  kString = 0x01,
  kFunc = 0x02,
  kConstant = 0x04,
  kType = 0x05,
};

/// Type tags beyond the element types (BytecodeTypeOpcodes.td).
enum TypeTag : uint8_t {
  kPointer = 12,
  kTile = 13,
  kTensorView = 14,
  kPartitionView = 15,
  kFunction = 16,
  kToken = 17,
};

/// Function flags (BytecodeEnums.h).
constexpr uint8_t kFlagKernel = 0x02;
constexpr uint8_t kFlagOptimizationHints = 0x04;


constexpr uint8_t kAlignmentByte = 0xCB;

/// A table: count, padding to `alignment`, offsets (u32 or u64), entries.
template <typename Offset, typename Entries>
ByteWriter table(const Entries &entries, size_t alignment) {
  ByteWriter w;
  w.varint(entries.size());
  w.alignTo(alignment);
  Offset running = 0;
  for (const auto &e : entries) {
    w.le<Offset>(running);
    running += static_cast<Offset>(e.size());
  }
  for (const auto &e : entries)
    w.append(std::span(reinterpret_cast<const uint8_t *>(e.data()), e.size()));
  return w;
}

void section(ByteWriter &file, uint8_t id, const ByteWriter &payload,
             size_t alignment) {
  file.byte(alignment > 1 ? (id | 0x80) : id);
  file.varint(payload.size());
  if (alignment > 1) {
    file.varint(alignment);
    file.alignTo(alignment);
  }
  file.append(payload);
}

} // namespace

void ByteWriter::varint(uint64_t v) {
  do {
    uint8_t b = v & 0x7F;
    v >>= 7;
    if (v)
      b |= 0x80;
    byte(b);
  } while (v);
}

void ByteWriter::signedVarint(int64_t v) {
  varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

void ByteWriter::alignTo(size_t alignment) {
  while (alignment > 1 && data_.size() % alignment)
    byte(kAlignmentByte);
}

//===----------------------------------------------------------------------===//
// Tables
//===----------------------------------------------------------------------===//

uint64_t TypeTable::intern(ByteWriter encoded) {
  auto [it, inserted] = index_.try_emplace(encoded.vector(), entries_.size());
  if (inserted)
    entries_.push_back(encoded.vector());
  return it->second;
}

uint64_t TypeTable::element(Element e) {
  ByteWriter w;
  w.varint(static_cast<uint8_t>(e));
  return intern(std::move(w));
}

uint64_t TypeTable::pointer(uint64_t pointee) {
  ByteWriter w;
  w.varint(kPointer);
  w.varint(pointee);
  return intern(std::move(w));
}

uint64_t TypeTable::tile(std::span<const int64_t> shape, uint64_t elem) {
  ByteWriter w;
  w.varint(kTile);
  w.varint(elem);
  w.leArray<int64_t>(shape);
  return intern(std::move(w));
}

uint64_t TypeTable::tensorView(uint64_t elem, std::span<const int64_t> shape,
                               std::span<const int64_t> strides) {
  ByteWriter w;
  w.varint(kTensorView);
  w.varint(elem);
  w.leArray<int64_t>(shape);
  w.leArray<int64_t>(strides);
  return intern(std::move(w));
}

uint64_t TypeTable::partitionView(std::span<const int32_t> tileShape,
                                  uint64_t tensorView,
                                  std::span<const int32_t> dimMap,
                                  std::optional<Padding> padding) {
  ByteWriter w;
  w.varint(kPartitionView);
  w.varint(padding ? 1 : 0);
  w.leArray<int32_t>(tileShape);
  w.varint(tensorView);
  w.leArray<int32_t>(dimMap);
  if (padding)
    w.varint(static_cast<uint8_t>(*padding));
  return intern(std::move(w));
}

uint64_t TypeTable::token() {
  ByteWriter w;
  w.varint(kToken);
  return intern(std::move(w));
}

uint64_t TypeTable::function(std::span<const uint64_t> inputs,
                             std::span<const uint64_t> results) {
  ByteWriter w;
  w.varint(kFunction);
  w.varints(inputs);
  w.varints(results);
  return intern(std::move(w));
}

ByteWriter TypeTable::section() const { return table<uint32_t>(entries_, 4); }

uint64_t StringTable::get(const std::string &s) {
  auto [it, inserted] = index_.try_emplace(s, entries_.size());
  if (inserted)
    entries_.push_back(s);
  return it->second;
}

ByteWriter StringTable::section() const { return table<uint32_t>(entries_, 4); }

uint64_t ConstantTable::add(std::vector<uint8_t> raw) {
  ByteWriter w;
  w.varint(raw.size());
  w.append(raw);
  auto [it, inserted] = index_.try_emplace(w.vector(), entries_.size());
  if (inserted)
    entries_.push_back(w.vector());
  return it->second;
}

ByteWriter ConstantTable::section() const {
  return table<uint64_t>(entries_, 8);
}

ByteWriter mlir::tessera::tileir::optimizationHints(const std::string &arch,
                                                    std::vector<Hint> hints,
                                                    bool selfContained,
                                                    StringTable &strings,
                                                    TypeTable &types) {
  // A dictionary's entries are sorted by name, as MLIR's DictionaryAttr keeps them.
  std::sort(hints.begin(), hints.end(),
            [](const Hint &a, const Hint &b) { return a.name < b.name; });
  ByteWriter w;
  if (selfContained)
    w.varint(static_cast<uint64_t>(AttrTag::OptimizationHints));
  w.varint(1);
  w.varint(strings.get(arch));
  w.varint(static_cast<uint64_t>(AttrTag::Dictionary));
  w.varint(hints.size());
  for (const Hint &h : hints) {
    w.varint(strings.get(h.name));
    if (const bool *b = std::get_if<bool>(&h.value)) {
      w.varint(static_cast<uint64_t>(AttrTag::Bool));
      w.byte(*b ? 1 : 0);
    } else {
      w.varint(static_cast<uint64_t>(AttrTag::Integer));
      w.varint(types.element(Element::I32));
      w.varint(static_cast<uint32_t>(std::get<int64_t>(h.value)));
    }
  }
  return w;
}

//===----------------------------------------------------------------------===//
// The file
//===----------------------------------------------------------------------===//

std::vector<uint8_t>
mlir::tessera::tileir::assembleModule(const std::vector<FunctionRecord> &functions,
                                      const TypeTable &types,
                                      const StringTable &strings,
                                      const ConstantTable &constants) {
  ByteWriter file;
  const char magic[8] = {0x7F, 'T', 'i', 'l', 'e', 'I', 'R', 0x00};
  for (char c : magic)
    file.byte(static_cast<uint8_t>(c));
  file.byte(kVersionMajor);
  file.byte(kVersionMinor);
  file.le<uint16_t>(0);

  // Functions: name, signature, flags, location (0: unknown), the entry's
  // optimization hints where the flags say so, body.
  ByteWriter funcs;
  funcs.varint(functions.size());
  for (const FunctionRecord &f : functions) {
    funcs.varint(f.name);
    funcs.varint(f.signature);
    funcs.byte((f.kernel ? kFlagKernel : 0) |
               (f.hints.empty() ? 0 : kFlagOptimizationHints));
    funcs.varint(0);
    funcs.append(f.hints);
    funcs.varint(f.body.size());
    funcs.append(f.body);
  }
  funcs.alignTo(8);
  section(file, kFunc, funcs, 8);
  if (!constants.empty())
    section(file, kConstant, constants.section(), 8);
  section(file, kType, types.section(), 4);
  section(file, kString, strings.section(), 4);
  file.byte(kEnd);
  return file.vector();
}
