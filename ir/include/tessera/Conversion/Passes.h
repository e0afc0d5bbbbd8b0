//===- Passes.h - tessera conversion passes ---------------------*- C++ -*-===//
//
// tessera's passes that convert between dialects (flag: creation function):
//   convert-tile-to-loops: createConvertTileToLoops(ConvertTileToLoopsOptions)
//   convert-math-to-nvvm:  createConvertMathToNVVM()
//   convert-tile-matmul-to-nvvm:
//                          createConvertTileMatmulToNVVM(ConvertTileMatmulToNVVMOptions)
//   convert-tile-matmul-to-mma-sync:
//                          createConvertTileMatmulToMmaSync(ConvertTileMatmulToMmaSyncOptions)
//   convert-tile-attention-to-mma-sync:
//                          createConvertTileAttentionToMmaSync(ConvertTileAttentionToMmaSyncOptions)
// registerTesseraConversionPasses() registers their command-line flags.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_PASSES_H
#define TESSERA_CONVERSION_PASSES_H

#include "tessera/Conversion/MathToNVVM/MathToNVVM.h"
#include "tessera/Conversion/TileAttentionToMmaSync/TileAttentionToMmaSync.h"
#include "tessera/Conversion/TileMatmulToMmaSync/TileMatmulToMmaSync.h"
#include "tessera/Conversion/TileMatmulToNVVM/TileMatmulToNVVM.h"
#include "tessera/Conversion/TileToLoops/TileToLoops.h"

namespace mlir::tessera {

#define GEN_PASS_REGISTRATION
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_PASSES_H
