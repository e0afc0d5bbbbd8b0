// tileir.cpp: the tileir backend's compile (tileir.h): to_tile_ir, the Tile IR writer, tileiras.
//
// Its own MLIRContext per compile, as the NVVM pipeline's (pipeline.cpp); the writer reports what
// it cannot express as MLIR diagnostics, collected here into one tessera::Error.
#include "compiler/tileir.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "codegen/mlir_gen.h"
#include "compiler/pipeline.h"
#include "compiler/tileiras.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/Registration.h"
#include "tessera/Target/TileIR/TranslateToTileIR.h"

namespace tessera::detail {
namespace {

// Writes `bytes` as <dump dir>/<symbol>.tileir-<arch>.<stage> when TESSERA_DUMP_DIR is set.
void dump(std::string_view symbol, std::string_view arch, std::string_view stage, std::string_view bytes) {
  std::string dir = dump_dir();
  if (dir.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::ofstream out(std::filesystem::path(dir) / fmt::format("{}.tileir-{}.{}", symbol, arch, stage), std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string_view as_text(const std::vector<uint8_t>& b) { return {reinterpret_cast<const char*>(b.data()), b.size()}; }


std::vector<uint8_t> bytecode_of(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                                 std::string_view arch, StageClock& clock) {
  mlir::DialectRegistry registry;
  mlir::tessera::registerAllDialects(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  std::string messages;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic& d) {
    messages += (messages.empty() ? "" : "\n") + d.str();
    return mlir::success();
  });
  std::string symbol = kernel_symbol(kernel);
  dump(symbol, arch, "ast.txt", ast.text);
  auto module = generate_tile_ir(ctx, kernel, ast, spec);
  // Tile IR leaves an access to a tile wholly outside its tensor undefined; tessera defines it.
  mlir::PassManager pm(module->getOperation()->getName());
  pm.addPass(mlir::tessera::tile::createTileGuardTileIndices());
  if (mlir::failed(pm.run(*module)))
    throw Error(fmt::format("tessera: kernel '{}': the tileir backend cannot compile it: {}", kernel, messages));
  clock.mark("tile-ir");
  if (!dump_dir().empty()) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    dump(symbol, arch, "tile.mlir", text);
  }
  // The launch's hints to tileiras, for the architecture it compiles for ("any": none).
  mlir::tessera::TileIRHints hints;
  if (arch != "any") {
    hints.arch = std::string(arch);
    hints.occupancy = spec.hints.occupancy;
    hints.numCtaInCga = spec.hints.cluster_programs;
    hints.allowTma = spec.hints.tma;
  }
  mlir::tessera::TileIRFacts facts;
  facts.extentsFitI32 = spec.i32_extents;
  facts.contiguousExtentsAligned = spec.aligned_extents;
  std::vector<uint8_t> bytes;
  if (mlir::failed(mlir::tessera::translateToTileIR(*module, bytes, hints, facts)))
    throw TileIrUnsupported(
        fmt::format("tessera: kernel '{}': the tileir backend cannot compile it: {}", kernel, messages));
  clock.mark("tileir-bytecode");
  dump(symbol, arch, "tileirbc", as_text(bytes));
  return bytes;
}

}  // namespace

std::vector<uint8_t> tileir_bytecode(std::string_view kernel, const KernelAst& ast, const Specialization& spec) {
  StageClock clock(nullptr);
  return bytecode_of(kernel, ast, spec, "any", clock);
}

std::string tileir_unsupported_args(std::string_view kernel, std::span<const ArgDesc> args) {
  for (std::size_t i = 0; i < args.size(); ++i)
    for (int d = 0; d < args[i].rank; ++d)
      if (args[i].kind != ArgDesc::Kind::scalar && args[i].shape[d] > 1 && args[i].strides[d] <= 0)
        return fmt::format("tessera: kernel '{}': the tileir backend cannot run this launch: argument {} has stride {} "
                           "along dimension {} (CUDA Tile IR's tensor views need positive strides; a broadcast "
                           "view has stride 0)",
                           kernel, i, args[i].strides[d], d);
  return "";
}

std::string require_tileiras(std::string_view kernel, std::string_view arch) {
  if (std::optional<std::string> tileiras = find_tileiras()) return *tileiras;
  throw TileirasError(fmt::format("tessera: kernel '{}': the tileir backend needs NVIDIA's tileiras, found neither at "
                                  "TESSERA_TILEIRAS, nor at {}, nor on PATH (scripts/install-tileiras.sh installs it)",
                                  kernel, default_tileiras_path()),
                      std::string(kernel), std::string(arch), "");
}

std::string tileiras_arch(std::string_view target_arch) {
  if (target_arch.ends_with("a")) target_arch.remove_suffix(1);
  return std::string(target_arch);
}

TileIrCode compile_tileir(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                          std::string_view arch, std::string tileiras) {
  TileIrCode code;
  code.arch = tileiras_arch(arch);
  code.symbol = kernel_symbol(kernel);
  code.tileiras = tileiras.empty() ? require_tileiras(kernel, code.arch) : std::move(tileiras);
  code.tileiras_version = tileiras_version(code.tileiras);
  StageClock clock(&code.stage_ms);
  code.bytecode = bytecode_of(kernel, ast, spec, code.arch, clock);
  code.cubin = run_tileiras(code.tileiras, code.bytecode, kernel, code.arch);
  clock.mark("tileiras");
  dump(code.symbol, code.arch, "cubin", std::string_view(code.cubin.data(), code.cubin.size()));
  return code;
}

GpuCode tileir_gpu_code(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                        std::string_view target_arch, const std::string& tileiras) {
  TileIrCode t = compile_tileir(kernel, ast, spec, target_arch, tileiras);
  GpuCode code;
  code.arch = std::string(target_arch);
  code.symbol = t.symbol;
  code.cubin = std::move(t.cubin);
  code.block_size = 1;
  code.stage_ms = std::move(t.stage_ms);
  return code;
}

}  // namespace tessera::detail
