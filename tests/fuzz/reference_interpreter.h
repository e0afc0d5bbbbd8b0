// reference_interpreter.h: evaluates a kernel's AST text on the host, program by program.
//
// interpret() reads the case's AST (plain tree form, docs/ast-format.md) with its own reader
// (sexp.h) and runs every program of the grid of the first output: loads read zeros outside a
// tensor's view, a store writes only the elements of its tile inside the output's view (the rest
// of the storage keeps its contents), reductions keep their axis, loops run in order, statements
// run in order (an (own ...) after a store of the same output reads the stored values), and every
// element carries an error bound (reference_ops.h). The result has, for each output parameter,
// the expected contents of its whole storage. Throws std::runtime_error for text it cannot
// evaluate (the generator's kernels are always evaluable).
#pragma once

#include <vector>

#include "fuzz_case.h"
#include "reference_ops.h"

namespace tessera::fuzz {

struct ExpectedStorage {
  std::vector<Elem> elems;  // one per storage element; empty for inputs and scalars
};

std::vector<ExpectedStorage> interpret(const FuzzCase& c, const OpContext& ctx);

}  // namespace tessera::fuzz
