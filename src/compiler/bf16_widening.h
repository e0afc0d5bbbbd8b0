// bf16_widening.h: bf16 -> f32 extensions of packed bf16 pairs as one integer op each, for GPU
// kernels (see bf16_widening.cpp).
#pragma once

#include <string>

namespace llvm {
class Module;
}

namespace tessera::detail {

// In kernel `symbol`, rewrites each `fpext bfloat` of an element of a vector of 32-bit words
// reinterpreted as bf16 pairs into the word's upper half kept (`and` with 0xffff0000) or its lower
// half moved up (`shl` by 16). Returns the number of extensions rewritten.
int widen_bf16_pairs(llvm::Module& m, const std::string& symbol);

}  // namespace tessera::detail
