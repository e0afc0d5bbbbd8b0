// fuzz_runner.h: launches a FuzzCase through the library and checks it against the reference.
//
// run_case() makes the case's storages and ArgDescs, launches the AST text with
// detail::launch (LaunchRequest: name, text, args; LaunchOptions with the case's whole_tiles and
// static_shapes) on the given target, and compares every element of every output storage with
// the reference interpreter's value and bound (reference_ops.h): exact where the bound is 0,
// within it otherwise, skipped where it is unknown. launch_only() runs text that need not be
// valid (the mutation mode): it must run or throw tessera::Error (std::bad_alloc allowed).
// compile_only() compiles a case for a target without running it.
// describe() prints a case completely (seed, options, parameters, views, AST) for reports.
#pragma once

#include <tessera/kernel.h>
#include <tessera/launch.h>

#include <cstdint>
#include <string>

#include "fuzz_case.h"

namespace tessera::fuzz {

struct Outcome {
  enum class Kind { pass, mismatch, launch_error, reference_error } kind = Kind::pass;
  std::string report;     // what went wrong (empty on pass)
  int64_t checked = 0;    // output elements compared
  int64_t unknown = 0;    // output elements the reference could not bound (skipped)
};

Outcome run_case(const FuzzCase& c, Target target);

struct LaunchOnly {
  bool ok = true;          // ran, or threw tessera::Error / std::bad_alloc
  bool threw = false;      // threw tessera::Error
  std::string message;     // the error's message, or what else went wrong
};
LaunchOnly launch_only(const FuzzCase& c, Target target);

// Compiles the case for `target` without running it (detail::compile: no GPU needed for sm_90);
// empty if it compiled, else what went wrong.
std::string compile_only(const FuzzCase& c, Target target);
// The same compile's artifact (its PTX shows which lowering the kernel took); throws what the
// compile throws.
CompiledArtifact compile_case(const FuzzCase& c, Target target);

std::string describe(const FuzzCase& c);

// The case with `ast` in place of its text, under a new unique kernel name (the launcher's fast
// cache keys on the text's address and the name, so a new text must not reuse an old name).
FuzzCase with_ast(const FuzzCase& c, std::string ast);

}  // namespace tessera::fuzz
