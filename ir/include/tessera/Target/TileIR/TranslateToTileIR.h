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
// Row strides of a memref with `tile.align` are assumed divisible by the
// alignment in elements, and with TileIRFacts::contiguousExtentsAligned the
// size of its unit-stride dimension by 16 bytes; with TileIRFacts::extentsFitI32
// every dynamic size and stride is assumed to lie in [0, 2^31 - 1].
//
// Optimization hints (TileIRHints) are written for one architecture: the
// entry's `num_cta_in_cga`, `occupancy` and `num_worker_warps_per_cta`, and
// `allow_tma` on every load and store; a hint left unset is tileiras' choice,
// except that a kernel whose largest mma accumulator exceeds 128 x 128
// elements asks for 8 worker warps (over 4 it spills).
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
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class ModuleOp;
namespace func {
class FuncOp;
}
} // namespace mlir

namespace mlir::tessera {

/// Tile IR's optimization hints for the architecture tileiras compiles for
/// (OptimizationHintsAttr); 0 or unset leaves a hint to tileiras.
struct TileIRHints {
  std::string arch;             // "sm_90", "sm_100", ...: required with a hint
  int numCtaInCga = 0;          // CTAs per cluster: 1, 2, 4, 8 or 16
  int occupancy = 0;            // CTAs resident per SM: 1 to 32
  int numWorkerWarps = 0;       // warps per CTA: 4 or 8
  std::optional<bool> allowTma; // whether loads and stores may use TMA
  bool empty() const { return !numCtaInCga && !occupancy && !numWorkerWarps && !allowTma; }
};

/// What the launch guarantees beyond the kernel's types, written as `assume`s
/// on the entry's parameters so that tileiras can index in i32 and move
/// tiles with TMA (which needs 32-bit extents and 16-byte row strides).
struct TileIRFacts {
  /// Every size and stride of every tensor argument lies in [0, 2^31 - 1].
  bool extentsFitI32 = false;
  /// In every tensor argument with `tile.align`, the size of the dimension
  /// of unit stride is a multiple of 16 bytes.
  bool contiguousExtentsAligned = false;
};

/// Writes `kernel` as a Tile IR module of one entry into `out`, with `hints`
/// and `facts`. On failure the reason was emitted as an error diagnostic on
/// the offending op (for hints out of range or an architecture Tile IR does
/// not know: on the kernel).
LogicalResult translateToTileIR(func::FuncOp kernel, std::vector<uint8_t> &out,
                                const TileIRHints &hints = {},
                                const TileIRFacts &facts = {});

/// The same for the one kernel of `module` (the func.func marked tile.kernel).
LogicalResult translateToTileIR(ModuleOp module, std::vector<uint8_t> &out,
                                const TileIRHints &hints = {},
                                const TileIRFacts &facts = {});

} // namespace mlir::tessera

#endif // TESSERA_TARGET_TILEIR_TRANSLATETOTILEIR_H
