// sink_pure_ops.h: pure instructions of a GPU kernel moved down to their first use (see
// sink_pure_ops.cpp).
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace tessera::detail {

// In kernel `symbol`, moves each instruction that neither accesses memory nor has side effects
// (nor is a PHI, an alloca or an inline asm call) down to just before its first user in its block,
// or before the block's terminator when its users are elsewhere. Returns the number moved.
int sink_pure_ops(llvm::Module& m, const std::string& symbol);

}  // namespace tessera::detail
