//===- tessera-tileir-translate.cpp - tile kernel -> Tile IR bytecode -----===//
//
// Reads a module holding one tile kernel (the "tile.mlir" stage, or a lit
// test's input) and writes its CUDA Tile IR bytecode (TranslateToTileIR.h)
// to -o (default: stdout). NVIDIA's tileirdisasm turns the result into text
// and tileiras into a cubin. Errors are diagnostics on the input; the exit
// status is 1 then.
//
//===----------------------------------------------------------------------===//

#include "tessera/Registration.h"
#include "tessera/Target/TileIR/TranslateToTileIR.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<input .mlir>"),
                                            llvm::cl::init("-"));
static llvm::cl::opt<std::string> outputFile("o", llvm::cl::desc("output bytecode file"),
                                             llvm::cl::value_desc("file"),
                                             llvm::cl::init("-"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "tessera tile kernel -> CUDA Tile IR bytecode\n");
  mlir::DialectRegistry registry;
  mlir::tessera::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();

  std::string error;
  auto input = mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << "tessera-tileir-translate: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sources;
  sources.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  mlir::SourceMgrDiagnosticHandler handler(sources, &ctx);
  auto module = mlir::parseSourceFile<mlir::ModuleOp>(sources, &ctx);
  if (!module)
    return 1;
  std::vector<uint8_t> bytes;
  if (mlir::failed(mlir::tessera::translateToTileIR(*module, bytes)))
    return 1;
  auto output = mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << "tessera-tileir-translate: " << error << "\n";
    return 1;
  }
  output->os().write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  output->keep();
  return 0;
}
