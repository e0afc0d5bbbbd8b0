//===- TileMatmulToMmaSync.h - matmul tile kernels to mma.sync --*- C++ -*-===//
//
// Declares `convert-tile-matmul-to-mma-sync`
// (createConvertTileMatmulToMmaSync with ConvertTileMatmulToMmaSyncOptions):
// tile kernels of the matmul class lowered to warp-level mma.sync code with
// cp.async and ldmatrix for sm_80 and newer (see Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_TILEMATMULTOMMASYNC_TILEMATMULTOMMASYNC_H
#define TESSERA_CONVERSION_TILEMATMULTOMMASYNC_TILEMATMULTOMMASYNC_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera {

#define GEN_PASS_DECL_CONVERTTILEMATMULTOMMASYNC
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_TILEMATMULTOMMASYNC_TILEMATMULTOMMASYNC_H
