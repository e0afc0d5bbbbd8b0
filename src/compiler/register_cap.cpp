// register_cap.cpp: see register_cap.h. Works on the PTX text that compile_ptx produces (one
// `.entry`, one instruction or directive per line).
#include "compiler/register_cap.h"

#include <algorithm>

namespace tessera::detail {

namespace {
constexpr int kRegistersPerSm = 65536;
constexpr int kRegisterUnitPerWarp = 256;  // as occupancy.cpp: a warp's registers come in units of 256
}  // namespace

std::string ptx_without_edge_branch(std::string_view ptx) {
  std::string s(ptx);
  const std::size_t entry = s.find(".entry");
  if (entry == std::string::npos) return s;
  // Lines after the entry: the first whose instruction is a predicated `bra` goes.
  for (std::size_t line = s.find('\n', entry); line != std::string::npos; line = s.find('\n', line + 1)) {
    const std::size_t start = line + 1;
    const std::size_t end = std::min(s.find('\n', start), s.size());
    const std::size_t text = s.find_first_not_of(" \t", start);
    if (text == std::string::npos || text >= end || s[text] != '@') continue;
    const std::size_t space = s.find_first_of(" \t", text);
    if (space >= end) continue;
    const std::size_t op = s.find_first_not_of(" \t", space);
    if (op < end && s.compare(op, 3, "bra") == 0 && (s[op + 3] == ' ' || s[op + 3] == '\t' || s[op + 3] == '.')) {
      s.erase(line, end - line);
      return s;
    }
  }
  return s;
}

std::string ptx_with_register_cap(std::string_view ptx, int regs) {
  std::string s(ptx);
  const std::size_t at = s.find(".maxntid ");
  if (at == std::string::npos) return s;
  const std::size_t eol = s.find('\n', at);
  if (eol == std::string::npos) return s;
  s.insert(eol + 1, ".maxnreg " + std::to_string(regs) + "\n");
  return s;
}

int register_cap(int blocks, int block_size) {
  const int warps = blocks * ((block_size + 31) / 32);
  if (warps <= 0) return 255;
  const int per_warp = kRegistersPerSm / warps / kRegisterUnitPerWarp * kRegisterUnitPerWarp;
  return std::min(255, per_warp / 32 / 8 * 8);
}

}  // namespace tessera::detail
