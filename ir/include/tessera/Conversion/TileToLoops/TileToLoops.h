//===- TileToLoops.h - tile kernels to per-thread loops ---------*- C++ -*-===//
//
// Declares `convert-tile-to-loops` (createConvertTileToLoops with
// ConvertTileToLoopsOptions): the tile dialect to scalar loops over each
// thread's private buffers (see Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_TILETOLOOPS_TILETOLOOPS_H
#define TESSERA_CONVERSION_TILETOLOOPS_TILETOLOOPS_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera {

#define GEN_PASS_DECL_CONVERTTILETOLOOPS
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_TILETOLOOPS_TILETOLOOPS_H
