//===- TranslateToTileIR.cpp - one tile kernel as a Tile IR module --------===//
//
// The entry points of TranslateToTileIR.h: the hints checked, the kernel's
// parameter types, its body (Translator), then the module's sections
// (Encoding.h). Nothing is written unless the whole kernel translated.
//
//===----------------------------------------------------------------------===//

#include "tessera/Target/TileIR/TranslateToTileIR.h"

#include "Translator.h"

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::tessera;
using namespace mlir::tessera::tileir;

namespace {

/// The architectures OptimizationHintsAttr knows, and of them those that
/// allow clusters (Ampere and Ada take num_cta_in_cga = 1 only).
bool knownArch(StringRef arch) {
  return llvm::is_contained({"sm_80", "sm_86", "sm_87", "sm_88", "sm_89",
                             "sm_90", "sm_100", "sm_103", "sm_110", "sm_120",
                             "sm_121"},
                            arch);
}
bool clusters(StringRef arch) { return !arch.starts_with("sm_8"); }

LogicalResult checkHints(func::FuncOp kernel, const TileIRHints &h) {
  auto fail = [&](const Twine &what) {
    return kernel.emitError() << "tileir: kernel '" << kernel.getSymName()
                              << "': " << what;
  };
  if (h.empty())
    return success();
  if (!knownArch(h.arch))
    return fail("optimization hints for architecture '" + h.arch +
                "', which CUDA Tile IR does not know (sm_80 to sm_121)");
  int n = h.numCtaInCga;
  if (n && (n < 0 || n > 16 || (n & (n - 1))))
    return fail("num_cta_in_cga " + Twine(n) +
                ": expected a power of two up to 16");
  if (n > 1 && !clusters(h.arch))
    return fail("num_cta_in_cga " + Twine(n) + " on " + h.arch +
                ", which has no clusters: expected 1");
  if (h.occupancy && (h.occupancy < 1 || h.occupancy > 32))
    return fail("occupancy " + Twine(h.occupancy) + ": expected 1 to 32");
  if (h.numWorkerWarps && h.numWorkerWarps != 4 && h.numWorkerWarps != 8)
    return fail("num_worker_warps_per_cta " + Twine(h.numWorkerWarps) +
                ": expected 4 or 8 (what tileiras supports)");
  return success();
}

/// The warps per CTA to ask tileiras for: the hint's, else 8 for a kernel
/// whose largest mma accumulator exceeds 128 x 128 elements (over tileiras'
/// default 4 warps, a 128 x 256 f32 accumulator is 256 registers per thread:
/// its cubin spills, a 1816-byte stack frame, and runs at a fifteenth of the
/// speed), else none (tileiras' choice). Needs the hints' architecture.
int workerWarps(func::FuncOp kernel, const TileIRHints &h) {
  if (h.numWorkerWarps || h.arch.empty())
    return h.numWorkerWarps;
  int64_t largest = 0;
  kernel.walk([&](tile::MmaOp mma) {
    largest = std::max(largest, cast<RankedTensorType>(mma.getResult().getType()).getNumElements());
  });
  return largest > 128 * 128 ? 8 : 0;
}

} // namespace

LogicalResult mlir::tessera::translateToTileIR(func::FuncOp kernel,
                                               std::vector<uint8_t> &out,
                                               const TileIRHints &hints,
                                               const TileIRFacts &facts) {
  if (failed(checkHints(kernel, hints)))
    return failure();
  TypeTable types;
  StringTable strings;
  ConstantTable constants;
  auto params = Translator::paramTypes(kernel, types);
  if (failed(params))
    return failure();
  Translator translator(kernel, types, constants, params->size(), facts);
  if (hints.allowTma)
    translator.setAccessHints(optimizationHints(
        hints.arch, {{"allow_tma", *hints.allowTma}}, false, strings, types));
  if (failed(translator.translateBody()))
    return failure();
  FunctionRecord fn;
  fn.name = strings.get(kernel.getSymName().str());
  fn.signature = types.function(*params, {});
  std::vector<Hint> entry;
  if (hints.numCtaInCga)
    entry.push_back({"num_cta_in_cga", int64_t{hints.numCtaInCga}});
  if (hints.occupancy)
    entry.push_back({"occupancy", int64_t{hints.occupancy}});
  if (int warps = workerWarps(kernel, hints))
    entry.push_back({"num_worker_warps_per_cta", int64_t{warps}});
  if (!entry.empty())
    fn.hints = optimizationHints(hints.arch, entry, true, strings, types).vector();
  fn.body = translator.w().body();
  out = assembleModule({fn}, types, strings, constants);
  return success();
}

LogicalResult mlir::tessera::translateToTileIR(ModuleOp module,
                                               std::vector<uint8_t> &out,
                                               const TileIRHints &hints,
                                               const TileIRFacts &facts) {
  func::FuncOp kernel;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(tile::TileDialect::getKernelAttrName()) && !fn.isExternal()) {
      if (kernel)
        return fn.emitError() << "tileir: the module has more than one tile "
                                 "kernel; the Tile IR writer takes one";
      kernel = fn;
    }
  if (!kernel)
    return module.emitError() << "tileir: the module has no func.func marked "
                              << tile::TileDialect::getKernelAttrName();
  return translateToTileIR(kernel, out, hints, facts);
}
