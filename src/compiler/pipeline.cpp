// pipeline.cpp: the compiler's stages (pipeline.h), each a list of typed pass calls.
//
// The table of contents, in the order a compile runs it (dump file names in quotes, see
// docs/debugging.md; the passes and why each runs are in docs/compiler.md):
//
//   to_tile_ir       the AST as tile IR (codegen/mlir_gen.h)                      "tile.mlir"
//   to_loops         tile passes, the conversion to per-thread loops, cleanups     "loops.mlir"
//   to_llvm_dialect  the upstream conversions to the LLVM dialect, L2 hints (gpu)  "llvm-dialect.mlir"
//   to_llvm_ir       the translation to LLVM IR; the CPU entry point (cpu)
//   optimize         LLVM's O3 (gpu: then the rewrites that must follow it) or O2  "ll"
//   to_ptx           NVPTX code generation (gpu)                                   "ptx"
//   to_object        host code generation, frames measured (cpu); the ORC JIT links it
//
// compile_ptx and compile_cpu at the end of the file run them. The passes are tessera's (ir/:
// Dialect/Tile, Conversion, Dialect/LLVMIR for MLIR, LLVMIR/Transforms for LLVM IR) and MLIR's and
// LLVM's own, added by their creation functions with typed options.
//
// One MLIRContext per compile (no threading inside it: machines are small and kernels are small),
// with the dialects of tessera/Registration.h. Diagnostics are collected and turned into
// tessera::Error; passes verify their input first, so LLVM never sees IR it could abort on. The LLVM
// targets used are initialised once per process.
#include "compiler/pipeline.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <new>
#include <optional>

#include "codegen/mlir_gen.h"
#include "driver/gpu_arch.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "mlir/Conversion/ConvertToLLVM/ToLLVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"
#include "tessera/Conversion/Passes.h"
#include "tessera/Dialect/LLVMIR/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/LLVMIR/Transforms/Passes.h"
#include "tessera/Registration.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

namespace llvmir = mlir::tessera::llvmir;
namespace tile = mlir::tessera::tile;
using mlir::tessera::tile::TileDialect;

// The kernel this thread compiles (CompileScope), named by the errors LLVM's handlers throw.
thread_local const std::string_view* compiling_kernel = nullptr;

// Marks the current thread as compiling `kernel` for its lifetime.
class CompileScope {
 public:
  explicit CompileScope(const std::string_view& kernel) : outer_(compiling_kernel) { compiling_kernel = &kernel; }
  CompileScope(const CompileScope&) = delete;
  CompileScope& operator=(const CompileScope&) = delete;
  ~CompileScope() { compiling_kernel = outer_; }

 private:
  const std::string_view* outer_;
};

// LLVM's fatal errors (report_fatal_error: an instruction the back end cannot select, a pass
// that gives up) during a compile become a tessera::Error naming the kernel, thrown through
// LLVM's frames: Debian's libLLVM and libMLIR are built without exceptions but with unwind tables
// (.eh_frame), so the unwinder passes their frames, skipping their destructors: what the failed
// compile allocated inside LLVM leaks, and its MLIR and LLVM contexts, ours, are destroyed.
// Outside a compile (another user of LLVM in the process) the handler keeps LLVM's behaviour: it
// prints the message and returns, and LLVM exits.
void on_llvm_fatal_error(void*, const char* reason, bool) {
  if (!compiling_kernel) {
    std::fprintf(stderr, "LLVM ERROR: %s\n", reason);
    return;
  }
  throw Error(fmt::format("tessera: kernel '{}': LLVM failed to compile it: {}", *compiling_kernel, reason));
}

// LLVM's allocation failures outside operator new (which throws std::bad_alloc itself): malloc in
// its containers ("LLVM ERROR: out of memory" and abort without a handler).
void on_llvm_bad_alloc(void*, const char*, bool) { throw std::bad_alloc(); }

// MLIR allocates operations with malloc and does not check the result (Operation::create): a
// compile that runs out of memory midway can fault inside MLIR whatever the handlers do (measured
// under a lowered RLIMIT_AS: a softmax's compile needs about 50 MiB; with less left it faulted in
// Operation::create, or the unwinder gave up on a std::bad_alloc thrown from MLIR's frames). A
// compile therefore starts only when kCompileMemoryBytes plus kCompileMemoryPerAstByte per byte
// of AST text can be mapped (mapped and unmapped at once, nothing touched); else std::bad_alloc.
// It makes running out midway unlikely, not impossible (memory others take meanwhile).
void require_compile_memory(std::size_t ast_bytes) {
  const std::size_t bytes = kCompileMemoryBytes + kCompileMemoryPerAstByte * ast_bytes;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  munmap(p, bytes);
}

void initialize_llvm_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::install_fatal_error_handler(&on_llvm_fatal_error);
    llvm::install_bad_alloc_error_handler(&on_llvm_bad_alloc);
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

}  // namespace

std::string dump_dir() {
  const char* d = std::getenv("TESSERA_DUMP_DIR");
  return d ? d : "";
}

namespace {

// Writes one stage of one kernel to TESSERA_DUMP_DIR, if set.
class Dumper {
 public:
  Dumper(std::string symbol, std::string target) : symbol_(std::move(symbol)), target_(std::move(target)) {
    dir_ = dump_dir();
  }
  bool enabled() const { return !dir_.empty(); }
  void write(std::string_view stage, std::string_view text) const {
    if (!enabled()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    std::ofstream out(std::filesystem::path(dir_) / fmt::format("{}.{}.{}", symbol_, target_, stage), std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  template <class T>
  void write_ir(std::string_view stage, T&& ir) const {
    if (!enabled()) return;
    std::string s;
    llvm::raw_string_ostream os(s);
    ir.print(os);
    write(stage, s);
  }

 private:
  std::string symbol_, target_, dir_;
};

mlir::DialectRegistry make_registry() {
  mlir::DialectRegistry registry;
  mlir::tessera::registerAllDialects(registry);
  return registry;
}


// Collects diagnostics so a failure can be reported as one tessera::Error.
class DiagnosticCollector {
 public:
  explicit DiagnosticCollector(mlir::MLIRContext& ctx)
      : handler_(&ctx, [this](mlir::Diagnostic& d) {
          messages_ += (messages_.empty() ? "" : "\n") + d.str();
          return mlir::success();
        }) {}
  const std::string& messages() const { return messages_; }

 private:
  std::string messages_;
  mlir::ScopedDiagnosticHandler handler_;
};

// The LLVM back end's diagnostics for one LLVMContext: errors, which LLVM without a handler answers
// with exit(1), are collected for a tessera::Error; frame sizes ("stack frame size" of functions
// marked "warn-stack-size"="0", see compile_cpu) are added up; other diagnostics are printed as
// LLVM prints them.
class LlvmDiagnostics {
 public:
  // Only the diagnostics LLVM would report without a handler reach it (RespectFilters: no remarks).
  explicit LlvmDiagnostics(llvm::LLVMContext& ctx) {
    ctx.setDiagnosticHandlerCallBack(&LlvmDiagnostics::handle, this, /*RespectFilters=*/true);
  }
  const std::string& errors() const { return errors_; }
  uint64_t frame_bytes() const { return frame_bytes_; }

 private:
  static void handle(const llvm::DiagnosticInfo* info, void* self) {
    auto* me = static_cast<LlvmDiagnostics*>(self);
    const llvm::DiagnosticInfo& d = *info;
    if (auto* frame = llvm::dyn_cast<llvm::DiagnosticInfoStackSize>(&d)) {
      me->frame_bytes_ += frame->getStackSize();
      return;
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::DiagnosticPrinterRawOStream printer(os);
    d.print(printer);
    if (d.getSeverity() == llvm::DS_Error) {
      me->errors_ += (me->errors_.empty() ? "" : "\n") + text;
      return;
    }
    if (d.getSeverity() == llvm::DS_Remark) return;
    llvm::errs() << llvm::LLVMContext::getDiagnosticMessagePrefix(d.getSeverity()) << ": " << text << "\n";
  }

  std::string errors_;
  uint64_t frame_bytes_ = 0;
};

// Runs the passes `add` puts on a pass manager over the module; a failure becomes a
// tessera::Error naming the target. TESSERA_PRINT_IR=1 prints the IR after every pass.
void run_passes(std::string_view kernel, mlir::ModuleOp module, std::string_view target, DiagnosticCollector& diags,
                llvm::function_ref<void(mlir::OpPassManager&)> add) {
  mlir::PassManager pm(module->getName());
  add(pm);
  if (const char* p = std::getenv("TESSERA_PRINT_IR"); p && *p == '1') pm.enableIRPrinting();
  if (mlir::failed(pm.run(module)))
    throw Error(fmt::format("tessera: kernel '{}': the compiler rejected the kernel for target {}:\n{}", kernel,
                            target, diags.messages()));
}

// Runs the LLVM passes `build` makes with a PassBuilder for `tm` (null: no target) over `m`. A pass
// that rejects the module reports an error diagnostic (collected by LlvmDiagnostics) and leaves it
// unchanged: the caller then throws.
void run_llvm_passes(llvm::Module& m, llvm::TargetMachine* tm,
                     llvm::function_ref<llvm::ModulePassManager(llvm::PassBuilder&)> build) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = build(pb);
  mpm.run(m, mam);
}

// Throws the errors LLVM's passes or code generator reported for the kernel, if any (`what`: who).
void throw_llvm_errors(std::string_view kernel, const LlvmDiagnostics& diags, std::string_view what) {
  if (!diags.errors().empty())
    throw Error(fmt::format("tessera: kernel '{}': {} rejected the kernel:\n{}", kernel, what, diags.errors()));
}

void verify(std::string_view kernel, const llvm::Module& m) {
  if (llvm::verifyModule(m, &llvm::errs()))
    throw Error(fmt::format("tessera: kernel '{}': internal error: invalid LLVM IR", kernel));
}

// The target of one compile and the launcher's variant of it: what selects the lowering.
struct Lowering {
  bool cpu = false;
  int block_size = 0;                // gpu: threads per CTA; 0 = chosen per kernel
  bool exp_range_test = true;        // gpu: convert-tile-to-loops' exp-range-test
  bool rewiden = false;              // gpu: run tile-rewiden-after-reduce (a launcher variant)
  int max_shared_bytes = 48 * 1024;  // gpu: the shared memory a CTA may use (the device's opt-in limit)
  int unroll_bytes = kUnrollBytes;   // gpu: tile-unroll-streaming-loops' bytes-in-flight
  int stream_stages = 0;             // gpu: tile-stream-loads' stages (CompilerHints::stream_stages)
  bool bulk_streams = false;         // gpu: tile-stream-loads' bulk rings (CompilerHints::bulk_streams, sm_90+)
  bool f8_cvt = false;               // gpu: 8-bit float conversions as sm_89's cvt instructions (sm_89+)
  int split_k = 1;                   // gpu: tile-split-k-loop's CTAs (CompilerHints::split_k, sm_90+)
  int early_frozen_steps = 0;        // gpu: tile-load-settled-before-wait's steps (CompilerHints, sm_90+)
  bool carried_sums = false;         // gpu: convert-tile-to-loops' carried-sums (see LowerControlFlow.cpp)
};

// The bytes all rings of one loop may take: per-thread cp.async rings keep 64 KiB (a program per SM
// beside other scratch); bulk rings up to 112 KiB, so that four slots of 16 x 512 bf16 and the
// vector chunk (72 KiB) fit, two programs per SM.
constexpr int kRingBytes = 64 * 1024;
constexpr int kBulkRingBytes = 112 * 1024;

// ---------------------------------------------------------------------------------------------
// Stage to_loops: tile IR -> scalar loops over each thread's private arrays ("loops.mlir").
// ---------------------------------------------------------------------------------------------
void to_loops(mlir::OpPassManager& pm, const Lowering& l) {
  // What the user computed before a loop and the front end emitted at its use inside it, computed
  // once before the loop again.
  pm.addPass(tile::createTileHoistInvariants());
  // One-row mma in a K loop (a batch-1 linear layer) as element-wise multiply-adds, reduced once.
  pm.addPass(tile::createTileVectorMma());
  // (gpu, CompilerHints::split_k) Each program's K loop shared by the CTAs of a cluster.
  if (!l.cpu && l.split_k > 1) {
    tile::TileSplitKLoopOptions split;
    split.ctas = l.split_k;
    pm.addPass(tile::createTileSplitKLoop(split));
  }
  // (gpu, CompilerHints::early_frozen_steps) A K loop's first tiles of frozen inputs loaded before
  // the wait for the grids the kernel depends on, so that they overlap the end of the kernel before.
  if (!l.cpu && l.early_frozen_steps > 0) {
    tile::TileLoadSettledBeforeWaitOptions early;
    early.steps = l.early_frozen_steps;
    pm.addPass(tile::createTileLoadSettledBeforeWait(early));
  }
  // (gpu, CompilerHints::stream_stages >= 2) Tiles a loop streams copied ahead into rings in
  // shared memory, so that later iterations' bytes are in flight without registers: per-thread
  // cp.async, or (CompilerHints::bulk_streams, sm_90 and newer) one thread's cp.async.bulk per row
  // into row-major slots, the vector chunks the loop broadcasts included.
  if (!l.cpu && l.stream_stages >= 2) {
    tile::TileStreamLoadsOptions stream;
    stream.stages = l.stream_stages;
    stream.bulk = l.bulk_streams;
    stream.maxBytes = l.bulk_streams ? kBulkRingBytes : kRingBytes;
    pm.addPass(tile::createTileStreamLoads(stream));
  }
  // (gpu) Loops streaming tiles unrolled, so that several iterations' loads are in flight.
  if (!l.cpu) {
    tile::TileUnrollStreamingLoopsOptions unroll;
    unroll.bytesInFlight = l.unroll_bytes;
    pm.addPass(tile::createTileUnrollStreamingLoops(unroll));
  }
  // Loads from read-only arguments issued before the reductions and barriers that precede their use.
  pm.addPass(tile::createTileHoistLoads());
  // (variant) bf16 tiles kept across the reductions they feed and widened again after them.
  if (l.rewiden) pm.addPass(tile::createTileRewidenAfterReduce());
  // One bounds test per program: programs wholly in bounds run no ragged paths.
  pm.addPass(tile::createTileVersionInterior());
  // The conversion: per-thread code; on gpu the block size and the CTAs of a program chosen per
  // kernel (block-size=0) unless the caller gives the block size, scratch over 48 KiB in dynamic
  // shared memory up to max-shared-bytes.
  mlir::tessera::ConvertTileToLoopsOptions loops;
  loops.target = l.cpu ? "cpu" : "gpu";
  if (!l.cpu) {
    loops.blockSize = l.block_size;
    loops.ctasPerProgram = l.block_size == 0 ? 0 : 1;
    loops.expRangeTest = l.exp_range_test;
    loops.maxSharedBytes = l.max_shared_bytes;
    loops.carriedSums = l.carried_sums;
  }
  pm.addPass(mlir::tessera::createConvertTileToLoops(loops));
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // Private arrays read and written at constant indices become SSA values (most of a small kernel's ops).
  pm.addPass(tile::createTilePromotePrivateArrays());
  // 8-bit float conversions and constants as integer arithmetic (LLVM has no 8-bit float types), or
  // from sm_89 on as its cvt instructions.
  tile::TileExpandF8ConversionsOptions f8;
  f8.hardwareConversions = l.f8_cvt;
  pm.addPass(tile::createTileExpandF8Conversions(f8));
  if (l.cpu) {
    // Private arrays a host thread's stack cannot hold move to a per-thread workspace.
    pm.addPass(tile::createTileCpuWorkspace());
    // bf16 conversions as integer arithmetic: x86's instructions flush subnormals, the GPU's do not.
    pm.addPass(tile::createTileExpandBF16Conversions());
  } else {
    // Math that NVPTX cannot select as PTX approximations and polynomials (no libdevice).
    pm.addPass(mlir::tessera::createConvertMathToNVVM());
  }
}

// ---------------------------------------------------------------------------------------------
// Stage to_llvm_dialect: loops -> the LLVM dialect ("llvm-dialect.mlir").
// ---------------------------------------------------------------------------------------------
void to_llvm_dialect(mlir::OpPassManager& pm, const Lowering& l) {
  pm.addPass(mlir::createSCFToControlFlowPass());
  if (l.cpu) {
    // Math ops that LLVM has intrinsics for become those, the rest libm calls.
    pm.addPass(mlir::createConvertMathToLLVMPass());
    pm.addPass(mlir::createConvertMathToLibmPass());
  }
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  // One conversion for every dialect left, through each dialect's ConvertToLLVMPatternInterface
  // (registerAllDialects): one walk instead of a pass per dialect, which took twice as long.
  pm.addPass(mlir::createConvertToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
  // Loads from read-only parameters get an L2 policy: evict_last, or evict_first on a reduction's
  // streams.
  if (!l.cpu) pm.addPass(mlir::tessera::createLLVMLoadCacheHints());
}

// ---------------------------------------------------------------------------------------------
// Stage to_tensor_cores (gpu targets): kernels of the matmul class become tensor-core code
// ("tensor-cores.mlir"): warp-specialized TMA + wgmma code for the architecture-specific variant
// `isa` where the target has one (sm_90a, GpuArch) and the kernel is of that lowering's shapes,
// else warp-level mma.sync code for `arch` (sm_80 and newer), and kernels of the attention class
// mma.sync code with the softmax on registers; the others are left as they are,
// for to_loops. A launch's CompilerHints fix the pipeline's stages and the programs' grouped order,
// and the mma.sync GEMMs' warps.
// ---------------------------------------------------------------------------------------------
void to_tensor_cores(mlir::OpPassManager& pm, std::string_view arch, std::string_view isa, int max_shared_bytes,
                     const CompilerHints& hints) {
  mlir::tessera::ConvertTileMatmulToNVVMOptions matmul;
  matmul.arch = std::string(isa);
  matmul.maxSharedBytes = max_shared_bytes;
  matmul.stages = hints.pipeline_stages;
  if (hints.group_rows) matmul.groupM = hints.group_rows;
  // Each program's k-tiles shared by the CTAs of a cluster, one program per cluster.
  matmul.splitK = hints.split_k > 1 ? hints.split_k : 1;
  // The consumers take programs in turn, one's epilogue beside the other's products.
  matmul.pingPong = hints.ping_pong;
  pm.addPass(mlir::tessera::createConvertTileMatmulToNVVM(matmul));
  mlir::tessera::ConvertTileMatmulToMmaSyncOptions warp;
  warp.arch = std::string(arch);
  warp.maxSharedBytes = max_shared_bytes;
  warp.stages = hints.pipeline_stages;
  // Each program's k-tiles shared by the CTAs of a cluster (sm_90 and newer; the pass checks).
  warp.splitK = hints.split_k > 1 ? hints.split_k : 1;
  if (hints.group_rows) warp.groupRows = hints.group_rows;
  // 128 or 256 threads: 4 or 8 warps, where the tile takes them.
  if (hints.threads == 128 || hints.threads == 256) warp.warps = hints.threads / 32;
  pm.addPass(mlir::tessera::createConvertTileMatmulToMmaSync(warp));
  // Attention kernels (a loop of two products around a softmax) with both products and the softmax
  // on registers.
  mlir::tessera::ConvertTileAttentionToMmaSyncOptions attention;
  attention.arch = std::string(arch);
  attention.maxSharedBytes = max_shared_bytes;
  attention.stages = hints.pipeline_stages;
  pm.addPass(mlir::tessera::createConvertTileAttentionToMmaSync(attention));
}

// After a kernel took the tensor-core lowering: what to_loops does after its conversion.
void tensor_core_cleanup(mlir::OpPassManager& pm, const Lowering& l) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  // An epilogue's 8-bit float conversions, and its math, as for every gpu kernel.
  tile::TileExpandF8ConversionsOptions f8;
  f8.hardwareConversions = l.f8_cvt;
  pm.addPass(tile::createTileExpandF8Conversions(f8));
  pm.addPass(mlir::tessera::createConvertMathToNVVM());
}

// Whether the kernel `symbol` of `module` took a tensor-core lowering: wgmma (tile.persistent) or
// mma.sync (tile.mma_sync).
bool lowered_to_tensor_cores(mlir::ModuleOp module, const std::string& symbol) {
  auto fn = module.lookupSymbol<mlir::func::FuncOp>(symbol);
  return fn && (fn->hasAttr(TileDialect::getPersistentAttrName()) || fn->hasAttr(TileDialect::getMmaSyncAttrName()));
}

// Runs to_loops (unless `loops` is false: a kernel lowered by to_tensor_cores) and
// to_llvm_dialect on the module, with their dumps and clock marks. `target` is
// "cpu" or the GPU architecture ("sm_90"), which errors name.
void lower_to_llvm_dialect(std::string_view kernel, mlir::ModuleOp module, std::string_view target, const Lowering& l,
                           const Dumper& dump, DiagnosticCollector& diags, StageClock& clock, bool loops = true) {
  if (loops) {
    run_passes(kernel, module, target, diags, [&](mlir::OpPassManager& pm) { to_loops(pm, l); });
    clock.mark("loops");
    dump.write_ir("loops.mlir", module);
  }
  run_passes(kernel, module, target, diags, [&](mlir::OpPassManager& pm) { to_llvm_dialect(pm, l); });
  clock.mark("llvm-dialect");
  dump.write_ir("llvm-dialect.mlir", module);
}

// ---------------------------------------------------------------------------------------------
// Stage to_llvm_ir: the LLVM dialect -> LLVM IR.
// ---------------------------------------------------------------------------------------------
std::unique_ptr<llvm::Module> to_llvm_ir(std::string_view kernel, mlir::ModuleOp module, llvm::LLVMContext& llctx,
                                         DiagnosticCollector& diags) {
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, llctx);
  if (!m) throw Error(fmt::format("tessera: kernel '{}': translation to LLVM IR failed:\n{}", kernel, diags.messages()));
  return m;
}

// On the CPU target, before the optimizer (and before the module has a data layout).
llvm::ModulePassManager cpu_entry(const std::string& symbol) {
  llvm::ModulePassManager mpm;
  // `void <symbol>_packed(ptr argv)`: the one signature the launcher calls (CpuKernel::run).
  mpm.addPass(llvmir::PackedWrapperPass(symbol));
  // __truncsfbf2, which x86 code generation calls and Debian 12's libgcc lacks.
  mpm.addPass(llvmir::DefineBF16TruncationPass());
  return mpm;
}

// ---------------------------------------------------------------------------------------------
// Stage optimize ("ll"): LLVM's O2 on the CPU; on the GPU O3, then the rewrites that must follow it.
// ---------------------------------------------------------------------------------------------
llvm::ModulePassManager optimize_cpu(llvm::PassBuilder& pb) {
  return pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
}

llvm::ModulePassManager optimize_gpu(llvm::PassBuilder& pb, const GpuCode& code) {
  llvm::ModulePassManager mpm;
  // The kernel's own grid dependency waits stay where they are, after the loads of frozen tiles.
  mpm.addPass(llvmir::MarkGridWaitsConvergentPass(code.symbol));
  // Aligned PTX in inline asm (wgmma, setmaxnreg, barriers) is never copied into a branch's arms.
  mpm.addPass(llvmir::MarkAlignedAsmConvergentPass(code.symbol));
  mpm.addPass(pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3));
  // Divisions by one value share its reciprocal (the optimizer would merge them back).
  mpm.addPass(llvmir::ShareDivisorsPass(code.symbol));
  // A bf16 of a packed pair widened by one integer op instead of a split and a cvt.
  mpm.addPass(llvmir::WidenBF16PairsPass(code.symbol));
  // (rewiden variant) Each chunk's work moved next to its store: one chunk live at a time.
  if (code.rewiden) mpm.addPass(llvmir::SinkPureOpsPass(code.symbol));
  // How programs map to CTAs, as comments for readers of the PTX.
  mpm.addPass(llvmir::LaunchCommentsPass({code.ctas_per_program, code.programs_per_cta, code.dynamic_shared_bytes}));
  // Read-only pointer parameters noalias: loads through them take ld.global.nc.
  mpm.addPass(llvmir::MarkReadOnlyNoAliasPass(code.symbol));
  // The wait for the grids the kernel depends on (griddepcontrol, sm_90 and later), in its own entry block.
  mpm.addPass(llvmir::GridDependencyWaitPass(code.symbol, gpu_arch(code.arch)->grid_dependency_control));
  // Where programs share CTAs, those past the end of the grid return after that wait.
  if (code.programs_per_cta > 1)
    mpm.addPass(llvmir::SkipProgramsPastTheEndPass(
        code.symbol, static_cast<unsigned>(code.block_size / code.programs_per_cta)));
  return mpm;
}

// ---------------------------------------------------------------------------------------------
// Stage to_ptx: LLVM IR -> PTX ("ptx").
// ---------------------------------------------------------------------------------------------
// The NVPTX target machine for `arch`. PTX ISA pinned at 9.0: the CUDA 13.0 driver and nvJitLink
// reject 9.1. A multiply feeding an add is contracted into one fma (one rounding instead of two), as
// nvcc does by default (--fmad=true).
std::unique_ptr<llvm::TargetMachine> nvptx_target_machine(const std::string& arch) {
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) throw Error("tessera: NVPTX target unavailable: " + err);
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, arch, "+ptx90", options, llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw Error(fmt::format("tessera: cannot create an NVPTX target machine for {}", arch));
  return tm;
}

// Runs `tm`'s code generator on `m` into a buffer: PTX text or an object file (`type`).
// `cannot` is the error when the target cannot emit that type.
llvm::SmallVector<char, 0> emit_file(llvm::Module& m, llvm::TargetMachine& tm, llvm::CodeGenFileType type,
                                     const char* cannot) {
  llvm::SmallVector<char, 0> out;
  llvm::raw_svector_ostream os(out);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, type)) throw Error(cannot);
  pm.run(m);
  return out;
}

std::string to_ptx(std::string_view kernel, llvm::Module& m, llvm::TargetMachine& tm, const LlvmDiagnostics& diags) {
  llvm::SmallVector<char, 0> ptx =
      emit_file(m, tm, llvm::CodeGenFileType::AssemblyFile, "tessera: the NVPTX target cannot emit PTX");
  throw_llvm_errors(kernel, diags, "the NVPTX code generator");
  return std::string(ptx.data(), ptx.size());
}

// ---------------------------------------------------------------------------------------------
// Stage to_object (cpu): LLVM IR -> an object file, its frames measured.
// ---------------------------------------------------------------------------------------------
// "warn-stack-size"="0" reports every function's frame to LlvmDiagnostics; stack probes make a
// frame that still overran its thread's stack fault on the guard page instead of writing past it.
llvm::SmallVector<char, 0> to_object(std::string_view kernel, llvm::Module& m, llvm::TargetMachine& tm,
                                     const LlvmDiagnostics& diags) {
  run_llvm_passes(m, nullptr, [](llvm::PassBuilder&) {
    llvm::ModulePassManager mpm;
    mpm.addPass(llvmir::StackChecksPass());
    return mpm;
  });
  throw_llvm_errors(kernel, diags, "tessera-stack-checks");
  llvm::SmallVector<char, 0> object =
      emit_file(m, tm, llvm::CodeGenFileType::ObjectFile, "tessera: the host target cannot emit object files");
  throw_llvm_errors(kernel, diags, "the host code generator");
  if (diags.frame_bytes() > kMaxCpuFrameBytes)
    throw Error(fmt::format("tessera: kernel '{}': a program of the CPU target needs {} bytes of stack, more than the "
                            "{} allowed (its values do not fit the registers and the frame)",
                            kernel, diags.frame_bytes(), kMaxCpuFrameBytes));
  return object;
}

class JitCpuKernel : public CpuKernel {
 public:
  JitCpuKernel(std::unique_ptr<llvm::orc::LLJIT> jit, void (*fn)(void**), std::size_t workspace_bytes,
               std::size_t stack_bytes)
      : jit_(std::move(jit)), fn_(fn), workspace_bytes_(workspace_bytes), stack_bytes_(stack_bytes) {}
  void run(void** argv) const override { fn_(argv); }
  std::size_t workspace_bytes() const override { return workspace_bytes_; }
  std::size_t stack_bytes() const override { return stack_bytes_; }

 private:
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  void (*fn_)(void**);
  std::size_t workspace_bytes_, stack_bytes_;
};

std::string to_string(const llvm::Module& m) {
  std::string s;
  llvm::raw_string_ostream os(s);
  m.print(os, nullptr);
  return s;
}

// What the lowering chose for a GPU kernel, read from the attributes convert-tile-to-loops and
// tile-version-interior left on its function.
void read_lowering(std::string_view kernel, mlir::LLVM::LLVMFuncOp fn, const Specialization& spec, GpuCode& code) {
  auto threads = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getBlockSizeAttrName());
  if (!threads) throw Error(fmt::format("tessera: kernel '{}': internal error: no block size", kernel));
  code.block_size = static_cast<int>(threads.getInt());
  if (auto ctas = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getCtasPerProgramAttrName()))
    code.ctas_per_program = static_cast<int>(ctas.getInt());
  if (auto programs = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getProgramsPerCtaAttrName()))
    code.programs_per_cta = static_cast<int>(programs.getInt());
  if (auto shared = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getDynamicSharedBytesAttrName()))
    code.dynamic_shared_bytes = static_cast<int>(shared.getInt());
  code.persistent = fn->hasAttr(TileDialect::getPersistentAttrName());
  code.mma_sync = fn->hasAttr(TileDialect::getMmaSyncAttrName());
  if (auto maps = fn->getAttrOfType<mlir::ArrayAttr>(TileDialect::getTensorMapsAttrName()))
    for (mlir::Attribute m : maps) {
      llvm::ArrayRef<int64_t> v = mlir::cast<mlir::DenseI64ArrayAttr>(m).asArrayRef();  // verified by the dialect
      code.tensor_maps.push_back({static_cast<int>(v[0]), static_cast<unsigned>(v[1]), static_cast<unsigned>(v[2]),
                                  static_cast<unsigned>(v[3])});
    }
  // A kernel compiled for static shapes counts as unversioned: where its launch has whole tiles
  // only, LLVM folds the interior test away (the grid's range on the CTA ids) and no edge copy is
  // left for the launcher's register probes (register_cap.h) to cut off; they measure it whole.
  code.static_shapes = spec.shapes.has_value();
  code.whole_tiles = spec.whole_tiles;
  code.versioned = fn->hasAttr(TileDialect::getVersionedAttrName()) && !code.static_shapes;
  code.exchange_free = fn->hasAttr(TileDialect::getExchangeFreeAttrName());
  code.rewidened = fn->hasAttr(TileDialect::getRewidenedAttrName());
  code.unrolled_streams = fn->hasAttr(TileDialect::getUnrolledStreamsAttrName());
  code.has_exp_range_tests = fn->hasAttr(TileDialect::getExpRangeTestedAttrName());
}

}  // namespace

std::string llvm_version() { return LLVM_VERSION_STRING; }

void raise_llvm_error(std::string_view kernel, bool out_of_memory) {
  initialize_llvm_once();
  CompileScope scope(kernel);
  if (out_of_memory) llvm::report_bad_alloc_error("tessera: a test of the bad-alloc handler");
  llvm::report_fatal_error("a test of the fatal-error handler");
}

namespace {

// The decimal number (1 to `most`) that follows `marker` and spaces in `ptx`; std::nullopt without one.
std::optional<int> number_after(std::string_view ptx, std::string_view marker, int most = 1024) {
  std::size_t i = ptx.find(marker);
  if (i == std::string_view::npos) return std::nullopt;
  i += marker.size();
  while (i < ptx.size() && (ptx[i] == ' ' || ptx[i] == '\t')) ++i;
  int64_t n = 0;
  for (; i < ptx.size() && ptx[i] >= '0' && ptx[i] <= '9' && n <= most; ++i) n = n * 10 + (ptx[i] - '0');
  if (n < 1 || n > most) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace

int block_size_of_ptx(std::string_view ptx) { return number_after(ptx, ".maxntid").value_or(kGpuBlockSize); }

int ctas_per_program_of_ptx(std::string_view ptx) { return number_after(ptx, llvmir::kCtasPerProgramComment).value_or(1); }

int programs_per_cta_of_ptx(std::string_view ptx) { return number_after(ptx, llvmir::kProgramsPerCtaComment).value_or(1); }

int dynamic_shared_bytes_of_ptx(std::string_view ptx) {
  return number_after(ptx, llvmir::kDynamicSharedBytesComment, std::numeric_limits<int32_t>::max()).value_or(0);
}

int max_shared_bytes_of_arch(std::string_view arch) {
  const GpuArch* a = gpu_arch(arch);
  return a ? a->max_shared_bytes : 48 * 1024;
}

int64_t programs_per_cta_of_launch(int64_t programs_per_cta, int64_t programs_along_x) {
  if (programs_per_cta <= 1) return 1;
  return std::min<int64_t>(programs_per_cta, std::bit_ceil(static_cast<uint64_t>(std::max<int64_t>(programs_along_x, 1))));
}

// The CPU target: the lowered kernel (its private arrays beyond 128 KiB of stack in a workspace,
// tile-cpu-workspace) is optimized at O2 and compiled to an object file here, where the frames the
// code generator lays out are measured (to_object); the ORC JIT then only links that object. A
// kernel whose frames exceed kMaxCpuFrameBytes is rejected. The target machine mirrors the one
// LLJIT makes for JITLink (PIC, small code model).
std::unique_ptr<CpuKernel> compile_cpu(std::string_view kernel, const KernelAst& ast, const Specialization& spec) {
  if (auto calls = device_functions(kernel, ast); !calls.empty())
    throw Error(fmt::format("tessera: kernel '{}': calls the device function '{}' ({}), which only GPU targets "
                            "can run; the CPU target cannot",
                            kernel, calls.front().name, calls.front().is_ptx ? "PTX" : "CUDA C++"));
  initialize_llvm_once();
  CompileScope scope(kernel);
  require_compile_memory(ast.text.size());
  std::string symbol = kernel_symbol(kernel);
  Dumper dump(symbol, spec.whole_tiles ? "cpu.whole" : "cpu");
  StageClock clock(nullptr);
  dump.write("ast.txt", ast.text);
  mlir::MLIRContext ctx(make_registry(), mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  DiagnosticCollector diags(ctx);

  // to_tile_ir, to_loops, to_llvm_dialect
  auto module = generate_tile_ir(ctx, kernel, ast, spec);
  dump.write_ir("tile.mlir", *module);
  lower_to_llvm_dialect(kernel, *module, "cpu", Lowering{.cpu = true}, dump, diags, clock);
  std::size_t workspace_bytes = 0;
  if (auto fn = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(symbol))
    if (auto bytes = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getWorkspaceBytesAttrName()))
      workspace_bytes = static_cast<std::size_t>(bytes.getInt());

  // to_llvm_ir
  auto llctx = std::make_unique<llvm::LLVMContext>();
  LlvmDiagnostics llvm_diags(*llctx);
  std::unique_ptr<llvm::Module> m = to_llvm_ir(kernel, *module, *llctx, diags);
  run_llvm_passes(*m, nullptr, [&](llvm::PassBuilder&) { return cpu_entry(symbol); });
  throw_llvm_errors(kernel, llvm_diags, "the CPU entry point's passes");

  // optimize
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("tessera: cannot detect the host target: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  // x86's f32 -> bf16 instructions (AVX512-BF16, AVX-NE-CONVERT) flush subnormals, and the x86
  // back end uses them for the bf16 values it holds promoted to f32 (a phi of a masked load, a
  // select): without them it calls the module's __truncsfbf2, which keeps subnormals as the GPU
  // does.
  if (jtmb->getTargetTriple().isX86())
    for (const char* feature : {"avx512bf16", "avxneconvert"}) jtmb->getFeatures().AddFeature(feature, false);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw Error("tessera: cannot create the host target machine: " + llvm::toString(tm.takeError()));
  m->setDataLayout((*tm)->createDataLayout());
  m->setTargetTriple((*tm)->getTargetTriple());
  run_llvm_passes(*m, tm->get(), optimize_cpu);
  verify(kernel, *m);
  dump.write("ll", to_string(*m));

  // to_object, then the ORC JIT links it
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  if (!jtmb->getCodeModel()) jtmb->setCodeModel(llvm::CodeModel::Small);
  auto codegen_tm = jtmb->createTargetMachine();
  if (!codegen_tm) throw Error("tessera: cannot create the host target machine: " + llvm::toString(codegen_tm.takeError()));
  llvm::SmallVector<char, 0> object = to_object(kernel, *m, **codegen_tm, llvm_diags);

  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) throw Error(fmt::format("tessera: kernel '{}': cannot create the CPU JIT: {}", kernel, llvm::toString(jit.takeError())));
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) throw Error(fmt::format("tessera: kernel '{}': CPU JIT: {}", kernel, llvm::toString(gen.takeError())));
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  if (auto err = (*jit)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(object.data(), object.size()), symbol)))
    throw Error(fmt::format("tessera: kernel '{}': CPU JIT: {}", kernel, llvm::toString(std::move(err))));
  auto sym = (*jit)->lookup(symbol + "_packed");
  if (!sym) throw Error(fmt::format("tessera: kernel '{}': CPU JIT: {}", kernel, llvm::toString(sym.takeError())));
  auto fn = sym->toPtr<void (*)(void**)>();
  return std::make_unique<JitCpuKernel>(std::move(*jit), fn, workspace_bytes,
                                        static_cast<std::size_t>(llvm_diags.frame_bytes()) + kCpuCallStackBytes);
}

GpuCode compile_ptx(std::string_view kernel, const KernelAst& ast, const Specialization& spec, std::string_view arch,
                    int block_size, bool exp_range_test, bool rewiden, int unroll_bytes) {
  if (!gpu_arch(arch))
    throw Error(fmt::format("tessera: kernel '{}': unsupported GPU target '{}' (expected one of {})", kernel, arch,
                            target_names().substr(5)));
  initialize_llvm_once();
  CompileScope scope(kernel);
  require_compile_memory(ast.text.size());
  GpuCode code;
  code.arch = std::string(arch);
  code.symbol = kernel_symbol(kernel);
  code.exp_range_test = exp_range_test;
  code.rewiden = rewiden;
  code.unroll_bytes = unroll_bytes;
  // A compile with a block size given by the caller (a second try, see variant_search.h) dumps its
  // stages as <symbol>.<arch>.t<threads>.<stage>.
  // Without exp range tests (the launcher's other variant) they are <symbol>.<arch>.plain-exp.<stage>,
  // widened again after reductions <symbol>.<arch>.rewiden.<stage>, with another unroll budget
  // <symbol>.<arch>.u<bytes>.<stage>; compiled for one launch's
  // shapes (LaunchOptions::static_shapes) <symbol>.<arch>.static.<stage>, for whole tiles
  // (LaunchOptions::whole_tiles) <symbol>.<arch>.whole.<stage>.
  Dumper dump(code.symbol, fmt::format("{}{}{}{}{}{}", code.arch,
                                       spec.shapes ? ".static" : spec.whole_tiles ? ".whole" : "",
                                       block_size ? fmt::format(".t{}", block_size) : "",
                                       exp_range_test ? "" : ".plain-exp", rewiden ? ".rewiden" : "",
                                       code.unroll_bytes != kUnrollBytes ? fmt::format(".u{}", code.unroll_bytes) : ""));
  StageClock clock(&code.stage_ms);
  dump.write("ast.txt", ast.text);
  mlir::MLIRContext ctx(make_registry(), mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  DiagnosticCollector diags(ctx);
  clock.mark("context");

  // to_tile_ir
  auto module = generate_tile_ir(ctx, kernel, ast, spec);
  clock.mark("tile-ir");
  dump.write_ir("tile.mlir", *module);
  module->walk([&](mlir::tessera::tile::ReduceOp) { ++code.reduces; });

  const Lowering lowering{.cpu = false,
                          .block_size = block_size,
                          .exp_range_test = exp_range_test,
                          .rewiden = rewiden,
                          .max_shared_bytes = max_shared_bytes_of_arch(code.arch),
                          .unroll_bytes = code.unroll_bytes,
                          .stream_stages = spec.hints.stream_stages,
                          .bulk_streams = spec.hints.bulk_streams && gpu_arch(code.arch)->compute_capability >= 90,
                          .f8_cvt = gpu_arch(code.arch)->compute_capability >= 89,
                          .split_k = gpu_arch(code.arch)->compute_capability >= 90 && spec.hints.split_k > 1
                                         ? spec.hints.split_k
                                         : 1,
                          .early_frozen_steps =
                              gpu_arch(code.arch)->compute_capability >= 90 ? spec.hints.early_frozen_steps : 0,
                          // Where registers decide the programs per SM: beside bulk rings, and where the
                          // launch fixes the programs per SM (CompilerHints::occupancy) and so the
                          // registers a program may take.
                          .carried_sums = (spec.hints.bulk_streams && gpu_arch(code.arch)->compute_capability >= 90) ||
                                          spec.hints.occupancy > 0};
  // to_tensor_cores, on the kernel's first compile only: the launch's threads (CompilerHints::threads,
  // 0 without) and the default lowering; each of the launcher's variants changes one of these (the
  // tensor-core lowerings choose their own threads).
  const std::string_view variant = gpu_arch(arch)->arch_specific_variant;
  bool tensor_cores = false;
  if (block_size == spec.hints.threads && exp_range_test && !rewiden && unroll_bytes == kUnrollBytes) {
    run_passes(kernel, *module, code.arch, diags,
               [&](mlir::OpPassManager& pm) { to_tensor_cores(pm, code.arch, variant, lowering.max_shared_bytes, spec.hints); });
    if (lowered_to_tensor_cores(*module, code.symbol)) {
      tensor_cores = true;
      // wgmma code (tile.persistent) is the variant's; mma.sync code is the target's own.
      if (module->lookupSymbol<mlir::func::FuncOp>(code.symbol)->hasAttr(TileDialect::getPersistentAttrName()))
        code.isa = std::string(variant);
      run_passes(kernel, *module, code.arch, diags,
                 [&](mlir::OpPassManager& pm) { tensor_core_cleanup(pm, lowering); });
      clock.mark("tensor-cores");
      dump.write_ir("tensor-cores.mlir", *module);
    }
  }
  // to_loops (unless the kernel took a tensor-core lowering), to_llvm_dialect
  lower_to_llvm_dialect(kernel, *module, code.arch, lowering, dump, diags, clock, /*loops=*/!tensor_cores);
  auto fn = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(code.symbol);
  if (!fn) throw Error(fmt::format("tessera: kernel '{}': internal error: lowered kernel not found", kernel));
  read_lowering(kernel, fn, spec, code);
  // A rewiden variant the pass left unchanged would be the first variant again: no PTX.
  if (rewiden && !code.rewidened) return code;

  // to_llvm_ir: the entry point is a PTX .entry with the block size the lowering chose as .maxntid.
  mlir::OpBuilder b(&ctx);
  fn->setAttr(mlir::NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn->setAttr(mlir::NVVM::NVVMDialect::getMaxntidAttrName(), b.getDenseI32ArrayAttr({code.block_size, 1, 1}));
  // A program whose K loop its cluster's CTAs share (tile-split-k-loop): the cluster's size in the
  // PTX (.reqnctapercluster), so that every launch of it, graphs included, runs such clusters.
  if (auto split = fn->getAttrOfType<mlir::IntegerAttr>(TileDialect::getSplitKAttrName()))
    fn->setAttr(mlir::NVVM::NVVMDialect::getClusterDimAttrName(),
                b.getDenseI32ArrayAttr({static_cast<int32_t>(split.getInt()), 1, 1}));
  if (code.persistent) {
    // One CTA per SM: ptxas may give each thread the registers of a whole SM's share.
    fn->setAttr(mlir::NVVM::NVVMDialect::getMinctasmAttrName(), b.getI32IntegerAttr(1));
    // Parameters passed by value (tensor maps) are grid constants: TMA reads them in place.
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (fn.getArgAttr(i, mlir::LLVM::LLVMDialect::getByValAttrName()))
        fn.setArgAttr(i, mlir::NVVM::NVVMDialect::getGridConstantAttrName(), b.getUnitAttr());
  }
  llvm::LLVMContext llctx;
  LlvmDiagnostics llvm_diags(llctx);
  std::unique_ptr<llvm::Module> m = to_llvm_ir(kernel, *module, llctx, diags);
  clock.mark("llvm-ir");

  // optimize
  std::unique_ptr<llvm::TargetMachine> tm = nvptx_target_machine(code.link_arch());
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(tm->getTargetTriple());
  run_llvm_passes(*m, tm.get(), [&](llvm::PassBuilder& pb) { return optimize_gpu(pb, code); });
  throw_llvm_errors(kernel, llvm_diags, "LLVM's passes");
  verify(kernel, *m);
  clock.mark("llvm-opt");
  dump.write("ll", to_string(*m));

  // to_ptx
  code.ptx = to_ptx(kernel, *m, *tm, llvm_diags);
  clock.mark("ptx");
  dump.write("ptx", code.ptx);
  return code;
}

}  // namespace tessera::detail
