//===- TileMatmulToNVVM.h - matmul tile kernels to wgmma code ---*- C++ -*-===//
//
// Declares `convert-tile-matmul-to-nvvm` (createConvertTileMatmulToNVVM with
// ConvertTileMatmulToNVVMOptions): tile kernels of the matmul class lowered to
// warp-specialized TMA + wgmma code for sm_90a (see Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_TILEMATMULTONVVM_TILEMATMULTONVVM_H
#define TESSERA_CONVERSION_TILEMATMULTONVVM_TILEMATMULTONVVM_H

#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera {

#define GEN_PASS_DECL_CONVERTTILEMATMULTONVVM
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_TILEMATMULTONVVM_TILEMATMULTONVVM_H
