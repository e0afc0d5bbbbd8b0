//===- tessera-llvm-opt.cpp - tessera's LLVM IR passes on a .ll file ------===//
//
// opt for tessera's LLVM IR passes (tessera/LLVMIR/Transforms/Passes.h):
// reads LLVM IR (a file or stdin), runs the textual pipeline given with
// -passes= (tessera's passes and LLVM's own), verifies the result and prints
// it as LLVM IR. Errors a pass reports are printed and make it exit with 1,
// without printing the module. No target machine is set up: `default<O3>`
// here optimizes as for a generic target, not as the JIT does for NVPTX.
//
//===----------------------------------------------------------------------===//

#include "tessera/LLVMIR/Transforms/Passes.h"

#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

static cl::opt<std::string>
    inputFile(cl::Positional, cl::desc("<input .ll file>"), cl::init("-"));
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("filename"),
                                       cl::init("-"));
static cl::opt<std::string>
    passes("passes", cl::desc("A textual pass pipeline, as opt's -passes"),
           cl::Required);

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "tessera's LLVM IR passes on a .ll file\n");
  LLVMContext context;
  bool failed = false;
  context.setDiagnosticHandlerCallBack(
      [](const DiagnosticInfo *info, void *failedFlag) {
        DiagnosticPrinterRawOStream printer(errs());
        errs() << LLVMContext::getDiagnosticMessagePrefix(info->getSeverity())
               << ": ";
        info->print(printer);
        errs() << "\n";
        if (info->getSeverity() == DS_Error)
          *static_cast<bool *>(failedFlag) = true;
      },
      &failed, /*RespectFilters=*/true);

  SMDiagnostic error;
  std::unique_ptr<Module> module = parseIRFile(inputFile, error, context);
  if (!module) {
    error.print(argv[0], errs());
    return 1;
  }

  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb;
  mlir::tessera::llvmir::registerPasses(pb);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  ModulePassManager mpm;
  if (Error e = pb.parsePassPipeline(mpm, passes)) {
    errs() << argv[0] << ": " << toString(std::move(e)) << "\n";
    return 1;
  }
  mpm.run(*module, mam);
  if (failed)
    return 1;
  if (verifyModule(*module, &errs())) {
    errs() << argv[0] << ": the passes left invalid LLVM IR\n";
    return 1;
  }

  std::error_code ec;
  ToolOutputFile out(outputFile, ec, sys::fs::OF_TextWithCRLF);
  if (ec) {
    errs() << argv[0] << ": " << ec.message() << "\n";
    return 1;
  }
  module->print(out.os(), nullptr);
  out.keep();
  return 0;
}
