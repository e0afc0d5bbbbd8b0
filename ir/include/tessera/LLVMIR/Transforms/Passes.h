//===- Passes.h - tessera's passes on LLVM IR -------------------*- C++ -*-===//
//
// LLVM new-pass-manager passes that rewrite a kernel's LLVM IR after the
// translation from the LLVM dialect: the entry points and runtime support
// the target's ABI needs, and rewrites that must follow LLVM's optimizer
// (which would undo them). In the order src/compiler/pipeline.cpp runs them
// (textual name<parameters>: class):
//
//   CPU target, before the optimizer:
//     tessera-packed-wrapper<kernel=K>                  PackedWrapperPass
//     tessera-define-bf16-truncation DefineBF16TruncationPass
//   CPU target, before code generation (after the "ll" dump):
//     tessera-stack-checks                              StackChecksPass
//   GPU targets, before the optimizer:
//     tessera-mark-grid-waits-convergent<kernel=K>      MarkGridWaitsConvergentPass
//     tessera-mark-aligned-asm-convergent<kernel=K>     MarkAlignedAsmConvergentPass
//   GPU targets, after the optimizer:
//     tessera-share-divisors<kernel=K>                  ShareDivisorsPass
//     tessera-widen-bf16-pairs<kernel=K>                WidenBF16PairsPass
//     tessera-sink-pure-ops<kernel=K>                   SinkPureOpsPass
//     tessera-launch-comments<ctas-per-program=S;programs-per-cta=G;
//                             dynamic-shared-bytes=N>   LaunchCommentsPass
//     tessera-mark-read-only-noalias<kernel=K>          MarkReadOnlyNoAliasPass
//     tessera-grid-dependency-wait<kernel=K;[no-]griddepcontrol>
//                                                       GridDependencyWaitPass
//     tessera-skip-programs-past-the-end<kernel=K;threads-per-program=T>
//                                                       SkipProgramsPastTheEndPass
//
// Parameters are the constructors' arguments; K is the kernel's symbol.
// registerPasses(PassBuilder &) makes the names known to a PassBuilder's
// textual pipelines (tessera-llvm-opt -passes=...). Input a pass cannot
// handle (no function K, a kernel without the shape a pass expects, a bad
// parameter) gets an error diagnostic through the module's LLVMContext and
// leaves the module unchanged; no pass aborts.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LLVMIR_TRANSFORMS_PASSES_H
#define TESSERA_LLVMIR_TRANSFORMS_PASSES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/PassManager.h"

#include <string>

namespace llvm {
class PassBuilder;
} // namespace llvm

namespace mlir::tessera::llvmir {

/// Adds `void K_packed(ptr argv)`, which loads parameter i of kernel K from
/// the pointer argv[i] points to and calls K: the CPU launcher's one entry
/// signature for every kernel.
struct PackedWrapperPass : llvm::PassInfoMixin<PackedWrapperPass> {
  explicit PackedWrapperPass(std::string kernel) : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// Defines `bfloat __truncsfbf2(float)` (round to nearest even, NaN to a
/// quiet NaN), which x86 code generation calls and older libgccs lack.
struct DefineBF16TruncationPass
    : llvm::PassInfoMixin<DefineBF16TruncationPass> {
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// Marks every defined function to report its stack frame size
/// ("warn-stack-size"="0") and to probe its stack ("probe-stack"="inline-asm").
struct StackChecksPass : llvm::PassInfoMixin<StackChecksPass> {
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
};

/// Rewrites groups of four or more IEEE f32 divisions of one block by one
/// divisor into one reciprocal and a correctly rounded refinement each.
struct ShareDivisorsPass : llvm::PassInfoMixin<ShareDivisorsPass> {
  explicit ShareDivisorsPass(std::string kernel) : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// Widens bf16 elements of packed 32-bit words by one integer op each.
struct WidenBF16PairsPass : llvm::PassInfoMixin<WidenBF16PairsPass> {
  explicit WidenBF16PairsPass(std::string kernel) : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// Moves pure instructions down to their first use in their block.
struct SinkPureOpsPass : llvm::PassInfoMixin<SinkPureOpsPass> {
  explicit SinkPureOpsPass(std::string kernel) : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// The comment lines LaunchCommentsPass writes into the PTX, each followed by
/// a space and the number.
inline constexpr llvm::StringLiteral kCtasPerProgramComment =
    "// tessera.ctas_per_program";
inline constexpr llvm::StringLiteral kProgramsPerCtaComment =
    "// tessera.programs_per_cta";
inline constexpr llvm::StringLiteral kDynamicSharedBytesComment =
    "// tessera.dynamic_shared_bytes";

/// How a kernel's programs map to CTAs, as the lowering chose it.
struct LaunchShape {
  int ctasPerProgram = 1;
  int programsPerCta = 1;
  int dynamicSharedBytes = 0;
};

/// Appends to the module's inline asm, for readers of the PTX, a comment line
/// per value of `shape` that differs from one program per CTA and no dynamic
/// shared memory.
struct LaunchCommentsPass : llvm::PassInfoMixin<LaunchCommentsPass> {
  explicit LaunchCommentsPass(LaunchShape shape) : shape(shape) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  LaunchShape shape;
};

/// Marks kernel K's pointer parameters that it only reads `noalias`, so that
/// NVPTX loads through them with ld.global.nc.
struct MarkReadOnlyNoAliasPass : llvm::PassInfoMixin<MarkReadOnlyNoAliasPass> {
  explicit MarkReadOnlyNoAliasPass(std::string kernel)
      : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// The inline asm of a wait for the grids a kernel depends on that the kernel
/// places itself (convert-tile-to-loops' lowering of
/// tile.grid_dependency_wait); GridDependencyWaitPass recognizes it by this
/// text.
inline constexpr llvm::StringLiteral kGridDependencyWaitAsm =
    "griddepcontrol.wait;";

/// Before the optimizer: marks kernel K's calls of kGridDependencyWaitAsm
/// convergent, so that no pass copies a wait into the block of the loads
/// before it (where ptxas would schedule those loads after it).
struct MarkGridWaitsConvergentPass
    : llvm::PassInfoMixin<MarkGridWaitsConvergentPass> {
  explicit MarkGridWaitsConvergentPass(std::string kernel)
      : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// Before the optimizer: marks kernel K's calls of aligned inline asm (an
/// instruction all threads of a warp, warpgroup or CTA must execute as the
/// same instruction: `.aligned` in its text, `bar.sync`, `bar.arrive`,
/// `barrier.sync`) convergent, so that no pass copies one into the arms of a
/// branch, where a warp's threads would reach it at different instructions.
struct MarkAlignedAsmConvergentPass
    : llvm::PassInfoMixin<MarkAlignedAsmConvergentPass> {
  explicit MarkAlignedAsmConvergentPass(std::string kernel)
      : kernel(std::move(kernel)) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
};

/// Gives kernel K a new entry block that, with `gridDependencyControl` (sm_90
/// and later), waits for the grids it depends on (griddepcontrol) before
/// branching to the old entry; a kernel that waits itself (a call of
/// kGridDependencyWaitAsm) gets only the launch of its dependents there, and
/// each of its waits ends its block.
struct GridDependencyWaitPass : llvm::PassInfoMixin<GridDependencyWaitPass> {
  GridDependencyWaitPass(std::string kernel, bool gridDependencyControl)
      : kernel(std::move(kernel)),
        gridDependencyControl(gridDependencyControl) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
  bool gridDependencyControl;
};

/// In kernel K, whose CTAs hold several programs of `threadsPerProgram`
/// threads (a power of two), makes the programs at or past the program count
/// (K's last parameter, i32) return right after GridDependencyWaitPass's
/// entry block.
struct SkipProgramsPastTheEndPass
    : llvm::PassInfoMixin<SkipProgramsPastTheEndPass> {
  SkipProgramsPastTheEndPass(std::string kernel, unsigned threadsPerProgram)
      : kernel(std::move(kernel)), threadsPerProgram(threadsPerProgram) {}
  llvm::PreservedAnalyses run(llvm::Module &m, llvm::ModuleAnalysisManager &);
  static bool isRequired() { return true; }
  std::string kernel;
  unsigned threadsPerProgram;
};

/// Makes the passes above known by name to `pb`'s textual pipelines.
void registerPasses(llvm::PassBuilder &pb);

} // namespace mlir::tessera::llvmir

#endif // TESSERA_LLVMIR_TRANSFORMS_PASSES_H
