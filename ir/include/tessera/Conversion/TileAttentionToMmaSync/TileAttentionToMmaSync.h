//===- TileAttentionToMmaSync.h - attention tile kernels to mma.sync -*- C++ -*-===//
//
// Declares `convert-tile-attention-to-mma-sync`
// (createConvertTileAttentionToMmaSync with
// ConvertTileAttentionToMmaSyncOptions): tile kernels of the attention class
// lowered to warp-level mma.sync code whose scores, softmax and output stay
// in registers, for sm_80 and newer (see Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_TILEATTENTIONTOMMASYNC_TILEATTENTIONTOMMASYNC_H
#define TESSERA_CONVERSION_TILEATTENTIONTOMMASYNC_TILEATTENTIONTOMMASYNC_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera {

#define GEN_PASS_DECL_CONVERTTILEATTENTIONTOMMASYNC
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_TILEATTENTIONTOMMASYNC_TILEATTENTIONTOMMASYNC_H
