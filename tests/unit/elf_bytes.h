// elf_bytes.h: is_elf, whether a compile's output bytes are an ELF file (a cubin), for the tests
// and test tools that check a back end produced code. Plain C++, no tessera headers.
#pragma once

#include <vector>

namespace tessera::testing {

inline bool is_elf(const std::vector<char>& b) {
  return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F';
}

}  // namespace tessera::testing
