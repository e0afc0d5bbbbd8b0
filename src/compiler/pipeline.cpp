// pipeline.cpp: runs the compiler stages declared in pipeline.h.
//
// One MLIRContext per compile (no threading inside it: machines are small and kernels are small).
// Diagnostics are collected and turned into tessera::Error; passes verify their input first, so
// LLVM never sees IR it could abort on. The LLVM targets used are initialised once per process.
// GPU kernels begin by waiting for the grids they depend on (griddepcontrol), so that the runtime
// may launch them programmatically (add_grid_dependency_wait); where programs share CTAs, those
// past the end of the grid then return (skip_programs_past_the_end).
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
#include "compiler/bf16_widening.h"
#include "compiler/shared_divisors.h"
#include "compiler/sink_pure_ops.h"
#include "driver/gpu_arch.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
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
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"
#include "tessera/Dialect/Tile/IR/TileDialect.h"
#include "tessera/Dialect/Tile/Transforms/Passes.h"
#include "tessera/errors.h"

namespace tessera::detail {
namespace {

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
    mlir::registerSCFToControlFlowPass();
    mlir::registerConvertMathToLLVMPass();
    mlir::registerConvertMathToLibmPass();
    mlir::registerReconcileUnrealizedCastsPass();
    mlir::registerConvertToLLVMPass();
    mlir::memref::registerExpandStridedMetadataPass();
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
    mlir::tessera::tile::registerTilePasses();
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
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::memref::MemRefDialect, mlir::index::IndexDialect,
                  mlir::cf::ControlFlowDialect, mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
                  mlir::vector::VectorDialect, mlir::tessera::tile::TileDialect>();
  mlir::arith::registerConvertArithToLLVMInterface(registry);
  mlir::cf::registerConvertControlFlowToLLVMInterface(registry);
  mlir::registerConvertFuncToLLVMInterface(registry);
  mlir::index::registerConvertIndexToLLVMInterface(registry);
  mlir::registerConvertMathToLLVMInterface(registry);
  mlir::registerConvertMemRefToLLVMInterface(registry);
  mlir::vector::registerConvertVectorToLLVMInterface(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  return registry;
}

// Records the wall time of consecutive stages.
class StageClock {
 public:
  explicit StageClock(std::vector<std::pair<std::string, double>>* out) : out_(out) {}
  void mark(std::string stage) {
    auto now = std::chrono::steady_clock::now();
    if (out_) out_->emplace_back(std::move(stage), std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  std::vector<std::pair<std::string, double>>* out_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

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

// Runs a textual pass pipeline on the module; a failure becomes a tessera::Error.
void run_passes(std::string_view kernel, mlir::ModuleOp module, const std::string& pipeline,
                std::string_view target, DiagnosticCollector& diags) {
  mlir::PassManager pm(module->getName());
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)))
    throw Error(fmt::format("tessera: kernel '{}': internal error: bad pass pipeline '{}'", kernel, pipeline));
  if (const char* p = std::getenv("TESSERA_PRINT_IR"); p && *p == '1') pm.enableIRPrinting();
  if (mlir::failed(pm.run(module)))
    throw Error(fmt::format("tessera: kernel '{}': the compiler rejected the kernel for target {}:\n{}", kernel,
                            target, diags.messages()));
}

// On the CPU target, f32 <-> bf16 conversions become integer arithmetic (MLIR's expansion: the
// f32 -> bf16 rounding to nearest even by a rounding bias, NaN to a quiet NaN). The x86 backend
// would otherwise use the host's conversion instructions where it has them (AVX512-BF16), which
// flush subnormal results to zero: the GPU's cvt.rn.bf16.f32 keeps them (a softmax of bf16 rows
// has results near 6e-39 where the row holds max - 88).
void expand_bf16_conversions(std::string_view kernel, mlir::ModuleOp module) {
  mlir::RewritePatternSet patterns(module.getContext());
  mlir::arith::populateExpandBFloat16Patterns(patterns);
  if (mlir::failed(mlir::applyPatternsGreedily(module, std::move(patterns))))
    throw Error(fmt::format("tessera: kernel '{}': internal error: the bf16 conversions did not converge", kernel));
}

// tile IR -> loops (stage "loops.mlir") -> LLVM dialect (stage "llvm-dialect.mlir"). `target` is
// "cpu" or the GPU architecture ("sm_90"), which errors name.
// On GPU targets the lowering chooses the block size per kernel (block-size=0: about 32 elements of
// the largest tile per thread, between 32 and 512 threads) unless the caller gives one, and records
// it as tile.block_size; with block-size=0 it may also run the program of a kernel whose threads
// never exchange data as several CTAs of 256 threads (tile.ctas_per_program, see ThreadMapping.h).
// On GPU targets, loads from read-only parameters finally get the L2 policy evict_last
// (tile-load-cache-hints: the written lines are evicted first); a reduction's streamed loads get
// evict_first (its stream passes through L2 without displacing other data). A scratch over 48 KiB
// is dynamic shared memory, up to `max_shared_bytes` (tile.dynamic_shared_bytes, see Passes.td).
void lower_to_llvm_dialect(std::string_view kernel, mlir::ModuleOp module, std::string_view target,
                           const Dumper& dump, DiagnosticCollector& diags, StageClock& clock, int block_size = 0,
                           bool exp_range_test = true, bool rewiden = false, int max_shared_bytes = 48 * 1024) {
  bool cpu = target == "cpu";
  // tile-hoist-loads issues loads from read-only arguments before the reductions (and barriers) that
  // precede their first use; tile-version-interior tests once per program whether all its tiles are
  // in bounds, so that the common case has no ragged paths (and no waits for loads at their joins).
  // With `rewiden` (a launcher variant), tile-rewiden-after-reduce first keeps bf16 tiles across
  // the reductions that they feed and widens them again after (fewer registers across them).
  std::string to_loops =
      cpu ? std::string("tile-hoist-loads,tile-version-interior,tile-lower-to-loops{target=cpu},canonicalize,cse,"
                        "tile-promote-private-arrays,tile-cpu-workspace")
          : fmt::format("tile-hoist-loads,{}tile-version-interior,"
                        "tile-lower-to-loops{{target=gpu block-size={} ctas-per-program={} exp-range-test={} "
                        "max-shared-bytes={}}},"
                        "canonicalize,cse,tile-promote-private-arrays,"
                        "tile-math-to-nvvm",
                        rewiden ? "tile-rewiden-after-reduce," : "", block_size, block_size == 0 ? 0 : 1,
                        exp_range_test, max_shared_bytes);
  run_passes(kernel, module, to_loops, target, diags);
  if (cpu) expand_bf16_conversions(kernel, module);
  clock.mark("loops");
  dump.write_ir("loops.mlir", module);
  // One conversion to the LLVM dialect for every dialect left (convert-to-llvm, through each
  // dialect's ConvertToLLVMPatternInterface, registered in make_registry): one walk instead of a
  // pass per dialect, which took twice as long. On the CPU target, math ops that LLVM has
  // intrinsics for become those first, the rest libm calls.
  std::string to_llvm = fmt::format(
      "convert-scf-to-cf,{}expand-strided-metadata,convert-to-llvm,reconcile-unrealized-casts{}",
      cpu ? "convert-math-to-llvm,convert-math-to-libm," : "", cpu ? "" : ",tile-load-cache-hints");
  run_passes(kernel, module, to_llvm, target, diags);
  clock.mark("llvm-dialect");
  dump.write_ir("llvm-dialect.mlir", module);
}

std::unique_ptr<llvm::Module> translate(std::string_view kernel, mlir::ModuleOp module, llvm::LLVMContext& llctx,
                                        DiagnosticCollector& diags) {
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, llctx);
  if (!m) throw Error(fmt::format("tessera: kernel '{}': translation to LLVM IR failed:\n{}", kernel, diags.messages()));
  return m;
}

void optimize(llvm::Module& m, llvm::TargetMachine* tm, llvm::OptimizationLevel level) {
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
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
  mpm.run(m, mam);
}

// Adds `void <symbol>_packed(ptr argv)` that loads each parameter of <symbol> from argv[i].
void add_packed_wrapper(llvm::Module& m, const std::string& symbol) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f) throw Error(fmt::format("tessera: internal error: kernel function '{}' not found in LLVM IR", symbol));
  llvm::LLVMContext& c = m.getContext();
  auto* ptr = llvm::PointerType::getUnqual(c);
  auto* wrapper_ty = llvm::FunctionType::get(llvm::Type::getVoidTy(c), {ptr}, false);
  auto* w = llvm::Function::Create(wrapper_ty, llvm::Function::ExternalLinkage, symbol + "_packed", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", w));
  llvm::SmallVector<llvm::Value*> args;
  for (llvm::Argument& a : f->args()) {
    llvm::Value* slot = b.CreateConstGEP1_64(ptr, w->getArg(0), a.getArgNo());
    llvm::Value* p = b.CreateLoad(ptr, slot);
    args.push_back(b.CreateLoad(a.getType(), p));
  }
  b.CreateCall(f, args);
  b.CreateRetVoid();
}

// Defines __truncsfbf2 (f32 -> bf16, round to nearest even, NaN to a quiet NaN: as
// float_to_bf16_bits in dtype.h) in a CPU kernel's module. x86 without AVX512-BF16 holds bf16
// values in registers (a bf16 scalar parameter, a select or loop phi of bf16 scalars) promoted to
// f32 and truncates them back with a call to __truncsfbf2, which compiler-rt and libgcc 13 define
// but older libgccs (Debian 12's) do not: the JIT then failed to link such kernels ("Symbols not
// found: [ __truncsfbf2 ]"). The module's own definition is found first.
void define_bf16_truncation(llvm::Module& m) {
  if (m.getFunction("__truncsfbf2")) return;
  llvm::LLVMContext& c = m.getContext();
  auto* i32 = llvm::Type::getInt32Ty(c);
  auto* ty = llvm::FunctionType::get(llvm::Type::getBFloatTy(c), {llvm::Type::getFloatTy(c)}, false);
  auto* f = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, "__truncsfbf2", m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(c, "entry", f));
  llvm::Value* x = b.CreateBitCast(f->getArg(0), i32);
  llvm::Value* high = b.CreateLShr(x, 16);
  llvm::Value* bias = b.CreateAdd(b.CreateAnd(high, 1), llvm::ConstantInt::get(i32, 0x7fff));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(x, bias), 16);
  llvm::Value* nan = b.CreateICmpUGT(b.CreateAnd(x, 0x7fffffff), llvm::ConstantInt::get(i32, 0x7f800000));
  llvm::Value* bits = b.CreateSelect(nan, b.CreateOr(high, 0x40), rounded);
  b.CreateRet(b.CreateBitCast(b.CreateTrunc(bits, llvm::Type::getInt16Ty(c)), llvm::Type::getBFloatTy(c)));
}

// Marks the kernel's pointer parameters that it only reads (readonly/readnone, as inferred by the
// optimizer) noalias, so that NVPTX selects ld.global.nc (the read-only data path) for loads through
// them. Sound because the launcher never lets an output alias an input: no memory a read-only
// parameter points to is written during the kernel, whatever else aliases it.
// Occupancy (nvvm.minctasm) is deliberately not requested: measured on the H200 with 512-thread
// rows, a cap of 3 CTAs per SM made RMSNorm 10% faster but LayerNorm 1.8x slower (it spills).
void mark_read_only_noalias(llvm::Module& m, const std::string& symbol) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f) return;
  for (llvm::Argument& a : f->args())
    if (a.getType()->isPointerTy() && a.onlyReadsMemory() && !a.hasNoAliasAttr())
      a.addAttr(llvm::Attribute::NoAlias);
}

// Makes the kernel wait for the grids it depends on before anything else: a new entry block
// (holding the static allocas, which must stay in the entry block) runs
//   griddepcontrol.launch_dependents;  the next kernel may be launched now (it waits in turn),
//   griddepcontrol.wait;               every prerequisite grid has ended, its writes are visible,
// then branches to the old entry. Launches and graph edges may then be programmatic (see
// cuda_driver.h), which overlaps a dependent kernel's launch with the end of the one before it;
// without them both instructions do nothing. The wait is inline asm with a memory clobber, and in a
// block of its own: the optimizer has run already, and instruction selection, which works block by
// block, cannot move loads from read-only (constant to it) parameters above it. Targets before
// sm_90 have no griddepcontrol (and their launches are never programmatic): the entry block is made
// all the same, without the instructions, as skip_programs_past_the_end expects it.
void add_grid_dependency_wait(llvm::Module& m, const std::string& symbol, bool grid_dependency_control) {
  llvm::Function* f = m.getFunction(symbol);
  if (!f || f->empty()) return;
  llvm::LLVMContext& c = m.getContext();
  llvm::BasicBlock* old_entry = &f->getEntryBlock();
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(c, "wait_for_prerequisite_grids", f, old_entry);
  llvm::IRBuilder<> b(entry);
  for (llvm::Instruction& i : llvm::make_early_inc_range(*old_entry))
    if (auto* a = llvm::dyn_cast<llvm::AllocaInst>(&i); a && a->isStaticAlloca()) a->moveBefore(entry->end());
  auto* asm_type = llvm::FunctionType::get(llvm::Type::getVoidTy(c), false);
  b.SetInsertPoint(entry);
  if (grid_dependency_control)
    b.CreateCall(llvm::InlineAsm::get(asm_type, "griddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;",
                                      "~{memory}", /*hasSideEffects=*/true));
  b.CreateBr(old_entry);
}

// Programs sharing a CTA (GpuCode::programs_per_cta, see ThreadMapping.h): the last CTA along x
// holds programs past the end of the grid when the programs per CTA do not divide it. After the
// wait for the prerequisite grids (add_grid_dependency_wait's entry block, which must run first), a program
// ctaid.x * (ntid.x / T) + tid.x / T at or past the number of programs along x (the kernel's last
// parameter, which the launcher appends) returns at once, instead of running the edge copy with
// every access masked (on an H200, a chain of two-program kernels took 0.99 us per launch with six
// such programs running beside them).
void skip_programs_past_the_end(std::string_view kernel, llvm::Module& m, const GpuCode& code) {
  if (code.programs_per_cta <= 1) return;
  llvm::Function* f = m.getFunction(code.symbol);
  auto* wait = f && !f->empty() ? llvm::dyn_cast<llvm::BranchInst>(f->getEntryBlock().getTerminator()) : nullptr;
  if (!wait || wait->isConditional() || f->arg_empty() || !f->getArg(f->arg_size() - 1)->getType()->isIntegerTy(32))
    throw Error(fmt::format("tessera: kernel '{}': internal error: no program count after the arguments", kernel));
  llvm::LLVMContext& c = m.getContext();
  llvm::BasicBlock* past = llvm::BasicBlock::Create(c, "program_past_the_end", f);
  llvm::ReturnInst::Create(c, past);
  // The program id and the count are read before the wait (the inline asm, a memory clobber that
  // the parameter load cannot cross), so that only the branch follows it on the path from the end
  // of the prerequisite grids to this program's work.
  llvm::Instruction* first = &*f->getEntryBlock().getFirstNonPHIOrDbgOrAlloca();
  llvm::IRBuilder<> b(first);
  const unsigned t_log2 = llvm::Log2_32(static_cast<unsigned>(code.block_size / code.programs_per_cta));
  llvm::Value* cta = b.CreateIntrinsic(b.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_ctaid_x, {});
  llvm::Value* ntid = b.CreateIntrinsic(b.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_ntid_x, {});
  llvm::Value* tid = b.CreateIntrinsic(b.getInt32Ty(), llvm::Intrinsic::nvvm_read_ptx_sreg_tid_x, {});
  llvm::Value* program = b.CreateAdd(b.CreateMul(cta, b.CreateLShr(ntid, t_log2)), b.CreateLShr(tid, t_log2));
  llvm::Value* inside = b.CreateICmpULT(program, f->getArg(f->arg_size() - 1));
  b.SetInsertPoint(wait);
  b.CreateCondBr(inside, wait->getSuccessor(0), past);
  wait->eraseFromParent();
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

int ctas_per_program_of_ptx(std::string_view ptx) { return number_after(ptx, kCtasPerProgramComment).value_or(1); }

int programs_per_cta_of_ptx(std::string_view ptx) { return number_after(ptx, kProgramsPerCtaComment).value_or(1); }

int dynamic_shared_bytes_of_ptx(std::string_view ptx) {
  return number_after(ptx, kDynamicSharedBytesComment, std::numeric_limits<int32_t>::max()).value_or(0);
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
// code generator lays out are measured ("warn-stack-size"="0" reports every function's frame to
// LlvmDiagnostics; stack probes make a frame that still overran its thread's stack fault on the
// guard page instead of writing past it); the ORC JIT then only links that object. A kernel whose
// frames exceed kMaxCpuFrameBytes is rejected. The target machine mirrors the one LLJIT makes for
// JITLink (PIC, small code model).
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
  auto module = generate_tile_ir(ctx, kernel, ast, spec);
  dump.write_ir("tile.mlir", *module);
  lower_to_llvm_dialect(kernel, *module, "cpu", dump, diags, clock);
  std::size_t workspace_bytes = 0;
  if (auto fn = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(symbol))
    if (auto bytes = fn->getAttrOfType<mlir::IntegerAttr>(mlir::tessera::tile::TileDialect::getWorkspaceBytesAttrName()))
      workspace_bytes = static_cast<std::size_t>(bytes.getInt());

  auto llctx = std::make_unique<llvm::LLVMContext>();
  LlvmDiagnostics llvm_diags(*llctx);
  std::unique_ptr<llvm::Module> m = translate(kernel, *module, *llctx, diags);
  add_packed_wrapper(*m, symbol);
  define_bf16_truncation(*m);

  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) throw Error("tessera: cannot detect the host target: " + llvm::toString(jtmb.takeError()));
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) throw Error("tessera: cannot create the host target machine: " + llvm::toString(tm.takeError()));
  m->setDataLayout((*tm)->createDataLayout());
  m->setTargetTriple((*tm)->getTargetTriple());
  optimize(*m, tm->get(), llvm::OptimizationLevel::O2);
  if (llvm::verifyModule(*m, &llvm::errs()))
    throw Error(fmt::format("tessera: kernel '{}': internal error: invalid LLVM IR", kernel));
  dump.write("ll", to_string(*m));

  for (llvm::Function& f : *m) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("warn-stack-size", "0");
    f.addFnAttr("probe-stack", "inline-asm");
  }
  jtmb->setRelocationModel(llvm::Reloc::PIC_);
  if (!jtmb->getCodeModel()) jtmb->setCodeModel(llvm::CodeModel::Small);
  auto codegen_tm = jtmb->createTargetMachine();
  if (!codegen_tm) throw Error("tessera: cannot create the host target machine: " + llvm::toString(codegen_tm.takeError()));
  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream os(object);
    llvm::legacy::PassManager pm;
    if ((*codegen_tm)->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      throw Error("tessera: the host target cannot emit object files");
    pm.run(*m);
  }
  if (!llvm_diags.errors().empty())
    throw Error(fmt::format("tessera: kernel '{}': the host code generator rejected the kernel:\n{}", kernel,
                            llvm_diags.errors()));
  if (llvm_diags.frame_bytes() > kMaxCpuFrameBytes)
    throw Error(fmt::format("tessera: kernel '{}': a program of the CPU target needs {} bytes of stack, more than the "
                            "{} allowed (its values do not fit the registers and the frame)",
                            kernel, llvm_diags.frame_bytes(), kMaxCpuFrameBytes));

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
                    int block_size, bool exp_range_test, bool rewiden) {
  if (!gpu_arch(arch))
    throw Error(fmt::format("tessera: kernel '{}': unsupported GPU target '{}' (expected one of {})", kernel, arch,
                            target_names().substr(5)));
  initialize_llvm_once();
  CompileScope scope(kernel);
  require_compile_memory(ast.text.size());
  GpuCode code;
  code.arch = std::string(arch);
  code.symbol = kernel_symbol(kernel);
  // A compile with a block size given by the caller (a second try, see variant_search.h) dumps its
  // stages as <symbol>.<arch>.t<threads>.<stage>.
  // Without exp range tests (the launcher's other variant) they are <symbol>.<arch>.plain-exp.<stage>,
  // widened again after reductions <symbol>.<arch>.rewiden.<stage>; compiled for one launch's
  // shapes (LaunchOptions::static_shapes) <symbol>.<arch>.static.<stage>, for whole tiles
  // (LaunchOptions::whole_tiles) <symbol>.<arch>.whole.<stage>.
  Dumper dump(code.symbol, fmt::format("{}{}{}{}{}", code.arch,
                                       spec.shapes ? ".static" : spec.whole_tiles ? ".whole" : "",
                                       block_size ? fmt::format(".t{}", block_size) : "",
                                       exp_range_test ? "" : ".plain-exp", rewiden ? ".rewiden" : ""));
  StageClock clock(&code.stage_ms);
  dump.write("ast.txt", ast.text);
  mlir::MLIRContext ctx(make_registry(), mlir::MLIRContext::Threading::DISABLED);
  ctx.loadAllAvailableDialects();
  DiagnosticCollector diags(ctx);
  clock.mark("context");
  auto module = generate_tile_ir(ctx, kernel, ast, spec);
  clock.mark("tile-ir");
  dump.write_ir("tile.mlir", *module);
  module->walk([&](mlir::tessera::tile::ReduceOp) { ++code.reduces; });
  lower_to_llvm_dialect(kernel, *module, code.arch, dump, diags, clock, block_size, exp_range_test, rewiden,
                        max_shared_bytes_of_arch(code.arch));
  // Mark the entry point: a PTX .entry with the block size the lowering chose as .maxntid.
  auto fn = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(code.symbol);
  if (!fn) throw Error(fmt::format("tessera: kernel '{}': internal error: lowered kernel not found", kernel));
  auto threads = fn->getAttrOfType<mlir::IntegerAttr>(mlir::tessera::tile::TileDialect::getBlockSizeAttrName());
  if (!threads) throw Error(fmt::format("tessera: kernel '{}': internal error: no block size", kernel));
  code.block_size = static_cast<int>(threads.getInt());
  if (auto ctas = fn->getAttrOfType<mlir::IntegerAttr>(mlir::tessera::tile::TileDialect::getCtasPerProgramAttrName()))
    code.ctas_per_program = static_cast<int>(ctas.getInt());
  if (auto programs = fn->getAttrOfType<mlir::IntegerAttr>(mlir::tessera::tile::TileDialect::getProgramsPerCtaAttrName()))
    code.programs_per_cta = static_cast<int>(programs.getInt());
  if (auto shared = fn->getAttrOfType<mlir::IntegerAttr>(mlir::tessera::tile::TileDialect::getDynamicSharedBytesAttrName()))
    code.dynamic_shared_bytes = static_cast<int>(shared.getInt());
  // A kernel compiled for static shapes counts as unversioned: where its launch has whole tiles
  // only, LLVM folds the interior test away (the grid's range on the CTA ids) and no edge copy is
  // left for the launcher's register probes (register_cap.h) to cut off; they measure it whole.
  code.static_shapes = spec.shapes.has_value();
  code.whole_tiles = spec.whole_tiles;
  code.versioned = fn->hasAttr(mlir::tessera::tile::TileDialect::getVersionedAttrName()) && !code.static_shapes;
  code.exchange_free = fn->hasAttr(mlir::tessera::tile::TileDialect::getExchangeFreeAttrName());
  code.exp_range_test = exp_range_test;
  code.rewiden = rewiden;
  code.rewidened = fn->hasAttr(mlir::tessera::tile::TileDialect::getRewidenedAttrName());
  code.has_exp_range_tests = fn->hasAttr(mlir::tessera::tile::TileDialect::getExpRangeTestedAttrName());
  // A rewiden variant the pass left unchanged would be the first variant again: no PTX.
  if (rewiden && !code.rewidened) return code;
  mlir::OpBuilder b(&ctx);
  fn->setAttr(mlir::NVVM::NVVMDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn->setAttr(mlir::NVVM::NVVMDialect::getMaxntidAttrName(), b.getDenseI32ArrayAttr({code.block_size, 1, 1}));

  llvm::LLVMContext llctx;
  LlvmDiagnostics llvm_diags(llctx);
  std::unique_ptr<llvm::Module> m = translate(kernel, *module, llctx, diags);
  clock.mark("llvm-ir");
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string err;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, err);
  if (!target) throw Error("tessera: NVPTX target unavailable: " + err);
  // PTX ISA pinned at 9.0: the CUDA 13.0 driver and nvJitLink reject 9.1. A multiply feeding an add
  // is contracted into one fma (one rounding instead of two), as nvcc does by default (--fmad=true).
  llvm::TargetOptions options;
  options.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, code.arch, "+ptx90", options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm) throw Error(fmt::format("tessera: cannot create an NVPTX target machine for {}", code.arch));
  m->setDataLayout(tm->createDataLayout());
  m->setTargetTriple(triple);
  optimize(*m, tm.get(), llvm::OptimizationLevel::O3);
  share_divisors(*m, code.symbol);  // after the optimizer, which would merge the divisions back
  widen_bf16_pairs(*m, code.symbol);
  // A kernel that keeps bf16 values across a reduction widens them again after it: each chunk's
  // work then moves next to its store, so that one chunk is live at a time (see sink_pure_ops.cpp).
  if (rewiden) sink_pure_ops(*m, code.symbol);
  // The split of a program over CTAs, the programs sharing a CTA, or the dynamic shared memory, as
  // a PTX comment for readers of the PTX (the launcher reads GpuCode, or the launch record of a
  // cached cubin: launch_record.h).
  if (code.ctas_per_program > 1) m->appendModuleInlineAsm(fmt::format("{} {}", kCtasPerProgramComment, code.ctas_per_program));
  if (code.programs_per_cta > 1) m->appendModuleInlineAsm(fmt::format("{} {}", kProgramsPerCtaComment, code.programs_per_cta));
  if (code.dynamic_shared_bytes > 0)
    m->appendModuleInlineAsm(fmt::format("{} {}", kDynamicSharedBytesComment, code.dynamic_shared_bytes));
  mark_read_only_noalias(*m, code.symbol);
  add_grid_dependency_wait(*m, code.symbol, gpu_arch(code.arch)->grid_dependency_control);
  skip_programs_past_the_end(kernel, *m, code);
  if (llvm::verifyModule(*m, &llvm::errs()))
    throw Error(fmt::format("tessera: kernel '{}': internal error: invalid LLVM IR", kernel));
  clock.mark("llvm-opt");
  dump.write("ll", to_string(*m));
  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager pm;
    if (tm->addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::AssemblyFile))
      throw Error("tessera: the NVPTX target cannot emit PTX");
    pm.run(*m);
  }
  if (!llvm_diags.errors().empty())
    throw Error(fmt::format("tessera: kernel '{}': the NVPTX code generator rejected the kernel:\n{}", kernel,
                            llvm_diags.errors()));
  code.ptx = std::string(ptx.str());
  clock.mark("ptx");
  dump.write("ptx", code.ptx);
  return code;
}

}  // namespace tessera::detail
