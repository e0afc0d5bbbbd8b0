// occupancy.cpp: see occupancy.h. The cubin is read with LLVM's ELF reader. A .nv.info section is a
// sequence of attributes, each a format byte, an attribute byte and a 16-bit field: for format 4
// (EIFMT_SVAL) the field is the size of a payload that follows, for the others it is the value.
// EIATTR_REGCOUNT (0x2f) carries (symbol index, registers) as two 32-bit words, EIATTR_FRAME_SIZE
// (0x11) (symbol index, bytes).
#include "compiler/occupancy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "llvm/Object/ELF.h"
#include "llvm/Support/Error.h"

namespace tessera::detail {
namespace {

constexpr std::uint8_t kFormatSized = 4;      // EIFMT_SVAL
constexpr std::uint8_t kAttrRegCount = 0x2f;  // EIATTR_REGCOUNT
constexpr std::uint8_t kAttrFrameSize = 0x11;  // EIATTR_FRAME_SIZE

constexpr int kRegisterUnitPerWarp = 256;  // registers are given to a warp in units of 256
constexpr int kSharedReservedPerBlock = 1024;

std::uint32_t word(llvm::ArrayRef<std::uint8_t> bytes, std::size_t at) {
  std::uint32_t v;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;  // little-endian, as the cubin (and every host tessera runs on)
}

}  // namespace

std::optional<KernelResources> cubin_resources(std::span<const char> cubin) {
  auto file = llvm::object::ELF64LEFile::create(llvm::StringRef(cubin.data(), cubin.size()));
  if (!file) {
    llvm::consumeError(file.takeError());
    return std::nullopt;
  }
  auto sections = file->sections();
  if (!sections) {
    llvm::consumeError(sections.takeError());
    return std::nullopt;
  }
  KernelResources r;
  bool found = false;
  for (const auto& section : *sections) {
    auto name = file->getSectionName(section);
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (name->starts_with(".nv.shared.")) r.shared_bytes += static_cast<int>(section.sh_size);
    if (!name->starts_with(".nv.info")) continue;
    auto bytes = file->getSectionContents(section);
    if (!bytes) {
      llvm::consumeError(bytes.takeError());
      continue;
    }
    for (std::size_t at = 0; at + 4 <= bytes->size();) {
      std::uint8_t format = (*bytes)[at], attr = (*bytes)[at + 1];
      std::uint16_t field = static_cast<std::uint16_t>((*bytes)[at + 2] | ((*bytes)[at + 3] << 8));
      at += 4;
      if (format != kFormatSized) continue;
      if (attr == kAttrRegCount && field == 8 && at + 8 <= bytes->size()) {
        r.registers = std::max(r.registers, static_cast<int>(word(*bytes, at + 4)));
        found = true;
      }
      if (attr == kAttrFrameSize && field == 8 && at + 8 <= bytes->size())
        r.frame_bytes = std::max(r.frame_bytes, static_cast<int>(word(*bytes, at + 4)));
      at += field;
    }
  }
  if (!found) return std::nullopt;
  return r;
}

int resident_blocks(const GpuArch& sm, const KernelResources& r, int block_size) {
  const int warps = std::max(1, (block_size + 31) / 32);
  const int per_warp = (std::max(1, r.registers) * 32 + kRegisterUnitPerWarp - 1) / kRegisterUnitPerWarp *
                       kRegisterUnitPerWarp;
  int blocks = std::min({sm.blocks_per_sm, sm.threads_per_sm / 32 / warps, (sm.registers_per_sm / per_warp) / warps});
  if (r.shared_bytes > 0) blocks = std::min(blocks, sm.shared_per_sm / (r.shared_bytes + kSharedReservedPerBlock));
  return std::max(blocks, 0);
}

int register_cap(const GpuArch& sm, int blocks, int block_size) {
  const int warps = blocks * ((block_size + 31) / 32);
  if (warps <= 0) return 255;
  const int per_warp = sm.registers_per_sm / warps / kRegisterUnitPerWarp * kRegisterUnitPerWarp;
  return std::min(255, per_warp / 32 / 8 * 8);
}

}  // namespace tessera::detail
