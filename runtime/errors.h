// tessera::Error, the one exception type the runtime throws. Library code never calls exit() or
// abort(); every failure a caller can act on (bad PTX, a CUDA error, out of device memory) is
// reported by throwing this. Assumes nothing; this header will move to include/tessera/errors.h.
#pragma once

#include <stdexcept>

namespace tessera {

class Error : public std::runtime_error {
  using runtime_error::runtime_error;
};

}  // namespace tessera
