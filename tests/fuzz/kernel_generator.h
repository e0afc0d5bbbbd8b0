// kernel_generator.h: random, well-typed tile kernels as AST text, with random arguments.
//
// generate_kernel(seed) builds one FuzzCase: one or two outputs (rank 1-3, power-of-two tiles,
// ragged or whole sizes, the same grid), inputs and scalar parameters created as the body needs
// them, and a body of one store per output whose expressions are drawn from the whole language of
// docs/ast-format.md except device calls: loads like an output, own tiles, loads at computed tile
// indices (program ids and counts, sizes, i32 scalars, loop variables and carried i32 values,
// arithmetic and selects on them), constants, iota, every unary and binary op, comparisons,
// select, casts between all five dtypes, broadcast, reshape, transpose, sum/max/min reductions,
// mma, and for loops (up to two deep) carrying one to three values of any type. Tensor arguments
// are dense or views (a slice of a larger storage, a transposed matrix, rows with a larger
// stride). Every node carries a type consistent with its operands, so a correct compiler accepts
// every generated kernel. The same seed gives the same case on every platform (fuzz_case.h's
// Rng). Tiles have power-of-two dims; values have at most max_elems elements, or in some kernels
// big_elems (large elementwise tiles: a GPU program of several CTAs).
#pragma once

#include <cstdint>

#include "fuzz_case.h"

namespace tessera::fuzz {

struct GeneratorOptions {
  int max_elems = 1024;     // elements of any tile value in the kernel, except:
  int big_elems = 8192;     // elements of the output tiles (and the values of their shape) of
  double big_chance = 0.1;  // this share of the kernels (reductions and mma operands stay small)
  int max_nodes = 48;    // expression nodes per kernel, roughly
  int max_depth = 6;     // nesting of expressions
};

FuzzCase generate_kernel(uint64_t seed, const GeneratorOptions& options = {});

}  // namespace tessera::fuzz
