// gemm_generator.h: random kernels of the tensor-core GEMM class, as AST text with random
// arguments, for the kernel fuzzer (fuzz_kernels --gemm).
//
// The general generator (kernel_generator.h) seldom writes a kernel that the tensor-core
// lowerings take: those need one K loop from 0 carrying a zero f32 accumulator updated only by
// mma of A's tile at (program 0, k) and B's at (k, program 1), then elementwise ops and one store
// of the output's own tile (Conversion/Passes.td's matmul class). generate_gemm(seed) writes such
// kernels with the choices the lowerings branch on drawn at random: operand dtypes (bf16, f16,
// f32, f8e4m3, f8e5m2, and one of each 8-bit format), B row-major or the transposed view of an
// N x K matrix (K-major), tile shapes inside and outside each lowering's (BM 16-128, BN 16-256, a
// K step of 32-256 bytes), M, N and K whole or ragged, K below one tile, K whose rows are not
// 16-byte aligned (no tensor-core lowering), the output dtype, and an epilogue of zero to three
// steps (a scale from a scalar parameter, a bias row, a residual tile, relu, tanh) before the
// cast to the output's dtype. Inputs are small finite values of their dtype. The same seed gives
// the same case everywhere (fuzz_case.h's Rng).
#pragma once

#include <cstdint>

#include "fuzz_case.h"

namespace tessera::fuzz {

FuzzCase generate_gemm(uint64_t seed);

}  // namespace tessera::fuzz
