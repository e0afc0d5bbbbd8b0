// errors.h: the one exception type tessera throws for user-facing errors.
//
// Every error a user can cause (bad shapes, aliasing, an unsupported target, a kernel the compiler
// rejects) is reported as tessera::Error whose message names the kernel, the parameter and what was
// expected. tessera never aborts the process on bad input.
#pragma once

#include <stdexcept>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera
