// tileiras.h: runs NVIDIA's tileiras, the CUDA Tile IR compiler, on bytecode (tileir.h writes it).
//
// tileiras is found, in this order, at TESSERA_TILEIRAS (the path of the binary), at the default
// location the install step uses (scripts/install-tileiras.sh: `pip install --target` of the
// nvidia-cuda-tileiras, nvidia-cuda-nvcc and nvidia-nvvm wheels of one CUDA version into
// $TESSERA_TILEIRAS_HOME, else ${XDG_CACHE_HOME:-$HOME/.cache}/tessera/tileiras, the binary then
// being <that>/nvidia/cu13/bin/tileiras), else on PATH. tileiras runs ptxas and loads libNVVM
// from $CUDA_HOME; when its own directory's parent holds a libNVVM (the wheels' layout), CUDA_HOME
// is set to that parent for the child, so that it uses the ptxas and libNVVM of its own version.
//
// It compiles for the architectures it lists (sm_80 ... sm_121, sm_90 from 13.3 on), never the
// `a` variants (sm_90a is refused). Each run has a time limit; a failure, a time-out or a missing
// tileiras is a TileirasError naming the kernel and the architecture and carrying tileiras'
// stderr.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessera/errors.h"

namespace tessera::detail {

class TileirasError : public Error {
 public:
  TileirasError(std::string message, std::string kernel, std::string arch, std::string stderr_text)
      : Error(std::move(message)), kernel(std::move(kernel)), arch(std::move(arch)), stderr_text(std::move(stderr_text)) {}
  std::string kernel, arch, stderr_text;
};

// The tileiras binary to run, or nullopt when none is found (see above).
std::optional<std::string> find_tileiras();
// The default location of the binary (whether or not it exists there).
std::string default_tileiras_path();
// `tileiras --version`'s "V13.5.37" part (the whole output if it has none); throws TileirasError
// if it cannot be run.
std::string tileiras_version(const std::string& tileiras);

// Default time limit of one compile.
inline constexpr int kTileirasTimeoutSeconds = 300;

// Compiles `bytecode` (the Tile IR module of `kernel`) for `arch` ("sm_90", "sm_100": an
// architecture without the `a` suffix) and returns the cubin.
std::vector<char> run_tileiras(const std::string& tileiras, std::span<const uint8_t> bytecode,
                               std::string_view kernel, std::string_view arch,
                               int timeout_seconds = kTileirasTimeoutSeconds);

// Runs NVIDIA's tileirdisasm beside `tileiras` on `bytecode` and returns its text (tests, dumps).
std::string run_tileirdisasm(const std::string& tileiras, std::span<const uint8_t> bytecode, std::string_view kernel);

}  // namespace tessera::detail
