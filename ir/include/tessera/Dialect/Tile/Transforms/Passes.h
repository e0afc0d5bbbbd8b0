//===- Passes.h - tessera tile dialect passes -------------------*- C++ -*-===//
//
// Passes of the tile dialect (flag: creation function):
//   tile-lower-to-loops: createTileLowerToLoops(TileLowerToLoopsOptions)
//   tile-math-to-nvvm:   createTileMathToNVVM()
//   tile-hoist-loads:    createTileHoistLoads()
//   tile-version-interior: createTileVersionInterior()
//   tile-load-cache-hints: createTileLoadCacheHints(TileLoadCacheHintsOptions)
//   tile-cpu-workspace:  createTileCpuWorkspace(TileCpuWorkspaceOptions)
// registerTilePasses() registers their command-line flags.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H
#define TESSERA_DIALECT_TILE_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
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
