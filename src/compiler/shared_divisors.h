// shared_divisors.h: correctly rounded division of many values by one divisor, for GPU kernels
// (see shared_divisors.cpp).
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace tessera::detail {

// In kernel `symbol`, rewrites each group of four or more IEEE f32 divisions in one basic block
// that share their divisor (and whose numerators are all computed before the first of them) into
// one reciprocal and a correctly rounded refinement per quotient, with the plain divisions as a
// fallback for operands out of range. Returns the number of divisions rewritten.
int share_divisors(llvm::Module& m, const std::string& symbol);

}  // namespace tessera::detail
