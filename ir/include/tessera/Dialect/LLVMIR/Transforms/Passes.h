//===- Passes.h - tessera passes on the LLVM dialect ------------*- C++ -*-===//
//
// tessera's passes on the LLVM dialect form of a kernel (flag: creation
// function):
//   llvm-load-cache-hints: createLLVMLoadCacheHints(LLVMLoadCacheHintsOptions)
// registerTesseraLLVMPasses() registers their command-line flags.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_H
#define TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::tessera {

#define GEN_PASS_DECL
#include "tessera/Dialect/LLVMIR/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tessera/Dialect/LLVMIR/Transforms/Passes.h.inc"

} // namespace mlir::tessera

#endif // TESSERA_DIALECT_LLVMIR_TRANSFORMS_PASSES_H
