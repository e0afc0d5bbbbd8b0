//===- MathToNVVM.h - scalar math to NVVM intrinsics ------------*- C++ -*-===//
//
// Declares `convert-math-to-nvvm` (createConvertMathToNVVM): scalar math ops
// that NVPTX cannot select, as PTX approximate instructions and short
// polynomials (see Conversion/Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_CONVERSION_MATHTONVVM_MATHTONVVM_H
#define TESSERA_CONVERSION_MATHTONVVM_MATHTONVVM_H

#include "mlir/Pass/Pass.h"

#include <memory>

namespace mlir::tessera {

#define GEN_PASS_DECL_CONVERTMATHTONVVM
#include "tessera/Conversion/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_CONVERSION_MATHTONVVM_MATHTONVVM_H
