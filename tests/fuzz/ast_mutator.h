// ast_mutator.h: malformed variants of a valid AST text, for the never-crash check.
//
// mutate_ast() applies one to three random edits to the text: truncate it, delete, duplicate or
// swap tokens, replace a number with an extreme one (0, -1, 2^31-1, 2^40, ...), replace an op
// name, a dtype or a bracket with another, or damage a constant's hex digits. The result is
// usually invalid (a well-formed variant may still be a valid kernel); a launch of it must run
// or throw tessera::Error, never crash.
#pragma once

#include <string>
#include <string_view>

#include "fuzz_case.h"

namespace tessera::fuzz {

std::string mutate_ast(std::string_view text, Rng& rng);

}  // namespace tessera::fuzz
