//===- Registration.h - what tessera registers ------------------*- C++ -*-===//
//
// The one place that says which dialects, interfaces and passes tessera's
// compiler uses. The JIT (src/compiler/pipeline.cpp) builds its MLIRContext
// from registerAllDialects and adds its passes by their typed creation
// functions; tessera-opt registers the same dialects and, for its command
// line, every pass the JIT runs (tessera's and MLIR's) plus the upstream
// conversions the lit tests use. LLVM IR passes register separately, with a
// PassBuilder (tessera/LLVMIR/Transforms/Passes.h).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_REGISTRATION_H
#define TESSERA_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace tessera {

/// Adds to `registry` the tile dialect and every dialect a kernel passes
/// through on its way to LLVM IR (func, arith, math, scf, cf, memref, index,
/// vector, llvm, nvvm), their ConvertToLLVMPatternInterface implementations
/// (used by `convert-to-llvm`) and their translations to LLVM IR.
void registerAllDialects(DialectRegistry &registry);

/// Registers the command-line flags of tessera's MLIR passes (tile,
/// conversion and LLVM dialect passes) and of the upstream passes that
/// tessera's pipeline and lit tests run. Call once per process.
void registerAllPasses();

} // namespace tessera
} // namespace mlir

#endif // TESSERA_REGISTRATION_H
