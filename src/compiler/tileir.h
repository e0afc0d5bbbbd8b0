// tileir.h: the tileir backend's compile: a kernel's tile IR (to_tile_ir, mlir_gen.h) as CUDA Tile IR
// bytecode (ir/include/tessera/Target/TileIR/TranslateToTileIR.h; the kernel's parameters are the
// NVVM backend's, ArgumentAbi::memref), then tileiras (tileiras.h) for one architecture.
//
// A kernel with an op that has no Tile IR form, a tile whose dimensions are not powers of two or
// a load padding other than 0, -0, nan and +-inf is a tessera::Error naming the kernel and the op
// (docs/compiler.md, "Tile IR backend", lists them). With TESSERA_DUMP_DIR set the stages are
// written as <symbol>.tileir-<arch>.{ast.txt,tile.mlir,tileirbc,cubin}.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "frontend/ast.h"

namespace tessera::detail {

// What bytecode_of throws for a kernel Tile IR cannot express (its message names the kernel and
// the op): the launcher falls back to the NVVM backend on it where the backend was not chosen for
// the launch (TESSERA_BACKEND), and reports it where it was (LaunchOptions::backend).
class TileIrUnsupported : public Error {
 public:
  using Error::Error;
};

struct TileIrCode {
  std::string arch;               // "sm_90", "sm_100"
  std::string symbol;             // the entry's name
  std::vector<uint8_t> bytecode;  // the Tile IR module
  std::vector<char> cubin;        // tileiras' output
  std::string tileiras;           // the tileiras that compiled it, and its version
  std::string tileiras_version;
  // Wall time of each stage in milliseconds: "tile-ir", "tileir-bytecode", "tileiras".
  std::vector<std::pair<std::string, double>> stage_ms;
};

// The kernel's Tile IR bytecode; throws TileIrUnsupported for a kernel Tile IR cannot express.
std::vector<uint8_t> tileir_bytecode(std::string_view kernel, const KernelAst& ast, const Specialization& spec);

// Why the tileir backend cannot run a launch with these arguments ("" when it can): a tensor with
// a stride that is not positive along a dimension of more than one element (Tile IR's tensor views
// assume positive strides; a broadcast view has stride 0).
std::string tileir_unsupported_args(std::string_view kernel, std::span<const ArgDesc> args);

// The tileiras find_tileiras() names; throws TileirasError naming the kernel and `arch` when there
// is none.
std::string require_tileiras(std::string_view kernel, std::string_view arch);

// The architecture tileiras compiles for a target: its name without the 'a' (sm_100a -> sm_100).
std::string tileiras_arch(std::string_view target_arch);

// The bytecode compiled by `tileiras` (empty: require_tileiras's) for `arch` (a target name, see
// tileiras_arch); throws TileirasError when it fails.
TileIrCode compile_tileir(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                          std::string_view arch, std::string tileiras = "");

// The launch side of such a compile for the target `target_arch` (the launcher's GpuCode): the
// cubin, one thread per CTA and one program per CTA, no dynamic shared memory, no PTX.
GpuCode tileir_gpu_code(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                        std::string_view target_arch, const std::string& tileiras);

}  // namespace tessera::detail
