// case_minimizer.h: shrinks the AST of a failing case while it keeps failing.
//
// minimize_case() repeatedly replaces one typed expression node of the text (largest first) by one
// of its operands of the same type, or by the constant 0 or 1 of its type, and keeps the change
// when `still_fails` holds for the new case (made with with_ast, so each attempt has its own
// kernel name). Types stay consistent, so every attempt is a valid kernel. Stops when no
// replacement keeps the failure or after `max_attempts` attempts.
#pragma once

#include <functional>

#include "fuzz_case.h"

namespace tessera::fuzz {

FuzzCase minimize_case(const FuzzCase& c, const std::function<bool(const FuzzCase&)>& still_fails,
                       int max_attempts = 300);

}  // namespace tessera::fuzz
