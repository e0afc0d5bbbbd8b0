//===- tessera-tileir-translate.cpp - tile kernel -> Tile IR bytecode -----===//
//
// Reads a module holding one tile kernel (the "tile.mlir" stage, or a lit
// test's input) and writes its CUDA Tile IR bytecode (TranslateToTileIR.h)
// to -o (default: stdout). NVIDIA's tileirdisasm turns the result into text
// and tileiras into a cubin. --arch with --num-cta-in-cga, --occupancy,
// --num-worker-warps and --allow-tma write Tile IR's optimization hints (TileIRHints), and
// --extents-fit-i32 and --contiguous-extents-aligned the launch's facts
// (TileIRFacts). Errors are
// diagnostics on the input; the exit status is 1 then.
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

static llvm::cl::opt<std::string> arch("arch",
                                       llvm::cl::desc("architecture of the optimization hints (sm_90, sm_100, ...)"),
                                       llvm::cl::init(""));
static llvm::cl::opt<int> numCtaInCga("num-cta-in-cga", llvm::cl::desc("hint: CTAs per cluster"),
                                      llvm::cl::init(0));
static llvm::cl::opt<int> occupancy("occupancy", llvm::cl::desc("hint: CTAs resident per SM"),
                                    llvm::cl::init(0));
static llvm::cl::opt<int> workerWarps("num-worker-warps", llvm::cl::desc("hint: warps per CTA (4 or 8)"),
                                      llvm::cl::init(0));
static llvm::cl::opt<std::string> allowTma("allow-tma", llvm::cl::desc("hint on loads and stores: true or false"),
                                           llvm::cl::init(""));

static llvm::cl::opt<bool> extentsFitI32("extents-fit-i32",
                                          llvm::cl::desc("fact: every size and stride of the tensors is below 2^31"),
                                          llvm::cl::init(false));

static llvm::cl::opt<bool> contiguousAligned(
    "contiguous-extents-aligned",
    llvm::cl::desc("fact: the unit-stride size of every aligned tensor is a multiple of 16 bytes"),
    llvm::cl::init(false));

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
  mlir::tessera::TileIRHints hints;
  hints.arch = arch;
  hints.numCtaInCga = numCtaInCga;
  hints.occupancy = occupancy;
  hints.numWorkerWarps = workerWarps;
  if (allowTma == "true" || allowTma == "false")
    hints.allowTma = allowTma == "true";
  else if (!allowTma.empty()) {
    llvm::errs() << "tessera-tileir-translate: --allow-tma takes true or false, not '" << allowTma << "'\n";
    return 1;
  }
  mlir::tessera::TileIRFacts facts;
  facts.extentsFitI32 = extentsFitI32;
  facts.contiguousExtentsAligned = contiguousAligned;
  std::vector<uint8_t> bytes;
  if (mlir::failed(mlir::tessera::translateToTileIR(*module, bytes, hints, facts)))
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
