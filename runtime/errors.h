// tessera::Error, the one exception type the runtime throws. Library code never calls exit() or
// abort(); every failure a caller can act on (bad PTX, a CUDA error, out of device memory) is
// reported by throwing this. The class is token for token the one in include/tessera/errors.h (one
// definition across the program); runtime/ keeps its own copy until it may include that header.
#pragma once

#include <stdexcept>

namespace tessera {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tessera
