// toolkit_library.h: finds and dlopens a CUDA toolkit library (NVRTC, nvJitLink) at run time, so
// tessera builds and runs (CPU target) where the toolkit is missing.
#pragma once

#include <string>
#include <string_view>

namespace tessera::detail {

// dlopens `<stem>.so.13` or `<stem>.so` from the loader path, $CUDA_HOME/lib64, $CUDA_PATH/lib64
// and /usr/local/cuda/lib64, in that order. Returns the handle, or null with `error` saying what
// was tried.
void* open_toolkit_library(std::string_view stem, std::string& error);

}  // namespace tessera::detail
