//===- Passes.h - tessera tile dialect passes -------------------*- C++ -*-===//
//
// Passes on tile kernels (flag: creation function). On tile IR, before the
// conversion to loops (Conversion/Passes.h):
//   tile-vector-mma:              createTileVectorMma()
//   tile-hoist-loads:             createTileHoistLoads()
//   tile-rewiden-after-reduce:    createTileRewidenAfterReduce()
//   tile-version-interior:        createTileVersionInterior()
// On the lowered kernel, after it:
//   tile-promote-private-arrays:  createTilePromotePrivateArrays()
//   tile-cpu-workspace:           createTileCpuWorkspace(TileCpuWorkspaceOptions)
//   tile-expand-bf16-conversions: createTileExpandBF16Conversions()
//   tile-expand-f8-conversions:   createTileExpandF8Conversions()
// registerTilePasses() registers their command-line flags.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera::tile {

#define GEN_PASS_DECL
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Dialect/Tile/Transforms/Passes.h.inc"

} // namespace mlir::tessera::tile

#endif // TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
