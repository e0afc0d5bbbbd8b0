//===- tessera-opt.cpp - tessera MLIR driver ------------------------------===//
//
// mlir-opt with the dialects and passes tessera's compiler uses (see
// tessera/Registration.h): the JIT's pipeline can be run pass by pass.
//
//===----------------------------------------------------------------------===//

#include "tessera/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tessera::registerAllDialects(registry);
  mlir::tessera::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tessera optimizer driver\n", registry));
}
