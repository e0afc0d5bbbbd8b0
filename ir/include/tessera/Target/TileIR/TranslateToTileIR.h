//===- TranslateToTileIR.h - tile kernels to CUDA Tile IR bytecode -*- C++ -*-===//
//
// Writes a tessera tile kernel (the func.func marked `tile.kernel` of the
// "tile.mlir" stage: tile, arith, math, memref.dim and scf ops) as CUDA Tile
// IR bytecode 13.3, one `entry` of the kernel's symbol, for NVIDIA's
// tileiras to compile.
//
// The entry's parameters are those of the NVVM backend's kernels (the
// launcher's ArgumentAbi::memref), per kernel argument in order:
//   * a memref of rank r: its descriptor -- allocated pointer (unused),
//     aligned pointer, offset, r sizes, r strides; offset, sizes and strides
//     in elements as i64, all of them even where the memref type has them
//     static (the kernel then ignores them);
//   * a scalar: itself (index as i64).
// Each program of the launch grid is one tile block (blockDim 1, no dynamic
// shared memory).
//
// Loads and stores become token-ordered view accesses (a tensor view per
// memref, a partition view per tile shape and padding), with tokens threaded
// so that accesses to a memref the kernel writes keep their program order
// (read after write, write after read, write after write), also across
// loops and branches (tokens are carried as loop values and branch results).
// Memrefs the kernel never writes are read without tokens.
//
// Arithmetic on f16/bf16 is computed in f32 and rounded back per op, as the
// tile dialect defines it. An op with no Tile IR form (see docs/compiler.md,
// "Tile IR backend") is reported on the op, naming it, and nothing is
// written; no input aborts.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_TARGET_TILEIR_TRANSLATETOTILEIR_H
#define TESSERA_TARGET_TILEIR_TRANSLATETOTILEIR_H

#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <vector>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
}
} // namespace mlir

namespace mlir::tessera {

/// Writes `kernel` as a Tile IR module of one entry into `out`. On failure
/// the reason was emitted as an error diagnostic on the offending op.
LogicalResult translateToTileIR(func::FuncOp kernel, std::vector<uint8_t> &out);

/// The same for the one kernel of `module` (the func.func marked tile.kernel).
LogicalResult translateToTileIR(ModuleOp module, std::vector<uint8_t> &out);

} // namespace mlir::tessera

#endif // TESSERA_TARGET_TILEIR_TRANSLATETOTILEIR_H
