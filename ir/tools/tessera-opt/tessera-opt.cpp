//===- tessera-opt.cpp - tessera MLIR driver ------------------------------===//
//
// mlir-opt with the tile dialect, its passes, and the upstream dialects and
// passes that tessera's pipelines (and lit tests) use.
//
//===----------------------------------------------------------------------===//

#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tessera::tile::registerTileDialect(registry);
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::scf::SCFDialect,
                  mlir::memref::MemRefDialect, mlir::LLVM::LLVMDialect,
                  mlir::NVVM::NVVMDialect, mlir::index::IndexDialect,
                  mlir::cf::ControlFlowDialect, mlir::vector::VectorDialect>();

  mlir::tessera::tile::registerTilePasses();
  // Upstream passes used by tessera's pipelines and lit tests.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerSymbolDCEPass();
  mlir::registerSCFToControlFlowPass();
  mlir::registerConvertMathToLLVMPass();
  mlir::registerArithToLLVMConversionPass();
  mlir::registerConvertControlFlowToLLVMPass();
  mlir::registerFinalizeMemRefToLLVMConversionPass();
  mlir::registerConvertFuncToLLVMPass();
  mlir::registerConvertIndexToLLVMPass();
  mlir::registerConvertVectorToLLVMPass();
  mlir::registerConvertNVVMToLLVMPass();
  mlir::registerReconcileUnrealizedCastsPass();

  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tessera optimizer driver\n", registry));
}
