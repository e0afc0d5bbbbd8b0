// register_cap.h: a register budget for a versioned GPU kernel, set by the copy of its body that
// nearly all programs run. tile-version-interior gives a kernel two copies of its body: one for
// programs whose tiles lie wholly in bounds, and one for the tensors' edges, which stages ragged
// tiles through local memory and may need more registers. ptxas gives the whole kernel the
// registers of its hungriest path, so the edge copy can lower the occupancy of every program.
// The launcher (variant_search.cpp, try_register_cap) measures the interior copy alone, compiling the
// PTX without its branch to the edge copy, with and without caps (`.maxnreg`), and caps the
// kernel's registers at the most programs per SM (up to half an SM's threads) for which the
// interior compiles without spilling (its stack frame unchanged): the edge copy may then spill to
// local memory, which only the programs on the edges pay.
// Assumes what compile_ptx emits for a versioned kernel: the test of the interior is the first
// conditional branch after `.entry`, and it branches to the edge copy. (Were it otherwise, the
// probe would measure the edge copy and the cap would change nothing.)
#pragma once

#include <string>
#include <string_view>

namespace tessera::detail {

// The PTX with the first conditional branch (`@%p... bra`) of its entry removed; unchanged if it
// has none.
std::string ptx_without_edge_branch(std::string_view ptx);

// The PTX with `.maxnreg regs` after its `.maxntid` line; unchanged if it has no such line.
std::string ptx_with_register_cap(std::string_view ptx, int regs);

}  // namespace tessera::detail
