// register_cap.cpp: see register_cap.h. Works on the PTX text that compile_ptx produces (one
// `.entry`, one instruction or directive per line).
#include "compiler/register_cap.h"

#include <algorithm>

namespace tessera::detail {

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

}  // namespace tessera::detail
