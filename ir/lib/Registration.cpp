//===- Registration.cpp - what tessera's compilers and tools register -----===//
//
// See Registration.h.
//
//===----------------------------------------------------------------------===//

#include "tessera/Registration.h"

#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/LLVMIR/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

void mlir::tessera::registerAllDialects(DialectRegistry &registry) {
  tile::registerTileDialect(registry);
  registry.insert<func::FuncDialect, arith::ArithDialect, math::MathDialect,
                  scf::SCFDialect, memref::MemRefDialect, index::IndexDialect,
                  cf::ControlFlowDialect, LLVM::LLVMDialect, NVVM::NVVMDialect,
                  vector::VectorDialect>();
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

void mlir::tessera::registerAllPasses() {
  tile::registerTilePasses();
  registerTesseraConversionPasses();
  registerTesseraLLVMPasses();
  // Upstream passes of tessera's pipeline (see src/compiler/pipeline.cpp).
  registerCanonicalizerPass();
  registerCSEPass();
  registerSCFToControlFlowPass();
  registerConvertMathToLLVMPass();
  registerConvertMathToLibmPass();
  memref::registerExpandStridedMetadataPass();
  registerConvertToLLVMPass();
  registerReconcileUnrealizedCastsPass();
  // Upstream passes only lit tests use: the conversions to the LLVM dialect
  // one dialect at a time, and symbol-dce.
  registerSymbolDCEPass();
  registerArithToLLVMConversionPass();
  registerConvertControlFlowToLLVMPass();
  registerFinalizeMemRefToLLVMConversionPass();
  registerConvertFuncToLLVMPass();
  registerConvertIndexToLLVMPass();
  registerConvertVectorToLLVMPass();
  registerConvertNVVMToLLVMPass();
}
