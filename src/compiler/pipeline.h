// pipeline.h: the compiler's stages, from a kernel's serialized AST to runnable code.
//
//   to_tile_ir -> to_loops -> to_llvm_dialect -> to_llvm_ir -> optimize -> (cpu) to_object, ORC JIT
//                                                                         -> (gpu) to_ptx -> cubin
// (pipeline.cpp lists each stage's passes; docs/compiler.md says why each runs.) The interface
// hides MLIR and LLVM types so the launcher (and everything users include) never sees them. When
// TESSERA_DUMP_DIR is set every stage is written there as <symbol>.<target>.<stage>. Invalid
// kernels and targets are rejected with tessera::Error before LLVM could abort.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "compiler/specialization.h"
#include "execution/launch_plan.h"
#include "frontend/ast.h"

namespace tessera::detail {

// Records the wall time of consecutive stages (the compile stages of pipeline.cpp and tileir.cpp),
// appended to `out` (none when null) in milliseconds.
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

// A kernel JIT-compiled for the host. run() calls it once for one program; argv holds one pointer
// per flattened parameter (launch_plan.h's memref ABI) followed by pid0..2 and nprog0..2 (int32), then the
// program's workspace as five int64: its address twice, 0, workspace_bytes(), 1 (a 64-byte aligned
// block that no other program uses meanwhile; ignored by a kernel that needs none).
class CpuKernel {
 public:
  virtual ~CpuKernel() = default;
  virtual void run(void** argv) const = 0;
  // Bytes of workspace a program needs: its private arrays that a thread's stack cannot hold
  // (tile-cpu-workspace); 0 if none.
  virtual std::size_t workspace_bytes() const = 0;
  // Bytes of stack a program needs below the caller's frame: the frames the code generator laid
  // out for the kernel's functions, together (see compile_cpu), and kCpuCallStackBytes for the
  // library functions it calls (libm).
  virtual std::size_t stack_bytes() const = 0;
};

// Stack allowed for the library functions a CPU program calls (libm's exp, log, ...).
inline constexpr std::size_t kCpuCallStackBytes = std::size_t{64} << 10;
// Largest frame a CPU kernel may have: compile_cpu rejects a kernel whose functions' frames exceed
// it (tile-cpu-workspace keeps its private arrays to 128 KiB; the rest is the code generator's).
inline constexpr std::size_t kMaxCpuFrameBytes = std::size_t{16} << 20;

// The bytes of streaming loads an unrolled loop iteration may read (tile-unroll-streaming-loops'
// bytes-in-flight) in a kernel's first compile; variant_search.cpp may try half of it.
inline constexpr int kUnrollBytes = 128 * 1024;

struct GpuCode {
  std::string arch;          // "sm_90", "sm_100a"
  // The architecture-specific target the code was compiled for when it uses that target's
  // instructions (the tensor-core lowering: "sm_90a", GpuArch::arch_specific_variant); empty: arch.
  std::string isa;
  std::string ptx;
  std::vector<char> cubin;   // empty if only PTX was requested
  // The cubin is ptxas' whole-program compile of the PTX for isa (ptxas.h), which the GPU loads
  // instead of the PTX; otherwise code with an isa loads its PTX (nvJitLink's cubin, if any, is
  // for artifacts and dumps).
  bool whole_program_cubin = false;
  int block_size = 128;      // threads per CTA
  int ctas_per_program = 1;  // CTAs that run one program together (grid x is multiplied by it)
  int programs_per_cta = 1;  // programs that share one CTA (grid x is divided by it, rounded up)
  int dynamic_shared_bytes = 0;  // dynamic shared memory per CTA (scratch over 48 KiB), 0 if none
  bool persistent = false;   // at most one CTA per SM, running programs in turn (tile.persistent)
  bool mma_sync = false;     // lowered to mma.sync code (tile.mma_sync): one CTA per program, no variants
  std::vector<TensorMapSpec> tensor_maps;  // TMA tensor maps after the parameters (tile.tensor_maps)
  bool versioned = false;    // the body has a copy for programs wholly in bounds, taken first
  bool static_shapes = false;  // compiled for one launch's shapes (LaunchOptions::static_shapes)
  bool whole_tiles = false;    // compiled for launches whose tiles are all whole (no edge code)
  bool exchange_free = false;  // its threads never exchange data (tile.exchange_free)
  int reduces = 0;             // tile.reduce ops in the kernel's tile IR (a row sum 1, softmax 2)
  bool exp_range_test = true;      // lowered with convert-tile-to-loops' exp-range-test
  bool has_exp_range_tests = false;  // and the lowering emitted such a test
  bool rewiden = false;     // lowered after tile-rewiden-after-reduce
  bool rewidened = false;   // and that pass changed the kernel (tile.rewidened); else no PTX
  int unroll_bytes = kUnrollBytes;  // tile-unroll-streaming-loops' bytes-in-flight
  bool unrolled_streams = false;  // and that pass unrolled a loop (tile.unrolled_streams)
  std::string symbol;        // the PTX entry name
  // The architecture the code is linked for: isa, else arch.
  const std::string& link_arch() const { return isa.empty() ? arch : isa; }
  // Wall time of each stage in milliseconds, in order ("context", "tile-ir", "loops", "llvm-dialect",
  // "llvm-ir", "llvm-opt", "ptx"; the launcher adds "cubin", and "plain-exp", "fewer-threads",
  // "register-cap", "fewer-in-flight", "rewiden" and "more-threads" when it compiles variants; "plain-exp" runs beside the others, from the first
  // variant's PTX to the comparison).
  std::vector<std::pair<std::string, double>> stage_ms;
};

// Threads per program on GPU targets before per-kernel block sizes (kept for code that has no
// PTX at hand; compile_ptx chooses the block size per kernel).
inline constexpr int kGpuBlockSize = 128;

// The directory TESSERA_DUMP_DIR names, or "" when it is unset or empty (stages are then not
// written).
std::string dump_dir();

// The block size of a kernel compiled by compile_ptx, read from its PTX (`.maxntid T, 1, 1`), as
// the raw-launch benchmarks do; kGpuBlockSize if the directive is missing.
int block_size_of_ptx(std::string_view ptx);

// compile_ptx marks in the PTX (for readers of dumps) how programs map to CTAs and the dynamic
// shared memory (tessera-launch-comments); the launcher takes them from GpuCode, or from the launch
// record beside a cached cubin (launch_record.h), never from these comments. The CTAs per program
// read from the PTX (the comment line `// tessera.ctas_per_program S`, present when S > 1); 1
// without it.
int ctas_per_program_of_ptx(std::string_view ptx);
// Likewise the programs per CTA (`// tessera.programs_per_cta G`, present when G > 1).
int programs_per_cta_of_ptx(std::string_view ptx);
// Likewise the dynamic shared memory per CTA (`// tessera.dynamic_shared_bytes N`, present when the
// kernel's scratch exceeds the 48 KiB of static shared memory, see Conversion/Passes.td); 0 without
// it.
int dynamic_shared_bytes_of_ptx(std::string_view ptx);
// The shared memory one CTA may use on `arch` with the opt-in (cuFuncSetAttribute's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES): 227 KiB on sm_90 and sm_100a; 48 KiB (what
// needs no opt-in) for an architecture not in the table.
int max_shared_bytes_of_arch(std::string_view arch);
// The programs that share one CTA in a launch of `programs_along_x` programs along x of a kernel
// compiled with G = `programs_per_cta`: G, or for fewer programs the next power of two of their
// number (a launch of one program runs one program's threads), so that a small grid does not
// start threads for programs it lacks. The launcher's rule, also read by the raw-driver baselines
// of the benchmarks (benchmarks/raw_launch.h).
int64_t programs_per_cta_of_launch(int64_t programs_per_cta, int64_t programs_along_x);

// Compiles `ast`, specialized as `spec` says (specialization.h), for the host.
std::unique_ptr<CpuKernel> compile_cpu(std::string_view kernel, const KernelAst& ast, const Specialization& spec);
// Lowers `ast`, specialized as `spec` says, to PTX for `arch`; the caller turns it into a cubin (nvJitLink) so that the cache sits
// between the two. `block_size` 0 lets the lowering choose (about 32 elements of the largest tile
// per thread); else a power of two up to 1024.
// `exp_range_test` is convert-tile-to-loops' option of that name (see Conversion/Passes.td);
// `rewiden` runs tile-rewiden-after-reduce before the lowering, and if that pass changes nothing
// the result has no PTX (rewidened false): the compile stops after the LLVM dialect.
// `unroll_bytes` is tile-unroll-streaming-loops' bytes-in-flight.
GpuCode compile_ptx(std::string_view kernel, const KernelAst& ast, const Specialization& spec, std::string_view arch,
                    int block_size = 0, bool exp_range_test = true, bool rewiden = false,
                    int unroll_bytes = kUnrollBytes);
// The stack a kernel's compile runs on (the launcher starts it on a StackThread of this size,
// execution/threads.h). Measured at the nesting the front end accepts (kMaxAstDepth,
// frontend/ast.h): a chain of 4088 scalar adds compiled (cpu and gpu) with 2 MiB, not 1; 4088
// chained tile ops and 1300 nested loops with 8 MiB (the largest tried).
// AddressSanitizer's redzones make every frame several times larger, so an instrumented build
// reserves more (a thread's stack is only committed as it is touched).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kCompilerStackBytes = std::size_t{256} << 20;
#else
inline constexpr std::size_t kCompilerStackBytes = std::size_t{32} << 20;
#endif

// The memory a compile (compile_cpu, compile_ptx) requires to be free before it starts, else it
// throws std::bad_alloc: MLIR does not check all its allocations (see pipeline.cpp).
inline constexpr std::size_t kCompileMemoryBytes = std::size_t{256} << 20;
inline constexpr std::size_t kCompileMemoryPerAstByte = 1024;

// The LLVM version string, for cache keys.
std::string llvm_version();

// Every compile runs with LLVM's fatal-error and bad-alloc handlers installed: an LLVM fatal error
// (report_fatal_error) becomes a tessera::Error naming the kernel, an allocation failure inside
// LLVM std::bad_alloc, instead of exiting or aborting the process. For tests: raises one of them
// (out_of_memory: the allocation failure) as if while compiling `kernel`.
[[noreturn]] void raise_llvm_error(std::string_view kernel, bool out_of_memory);

}  // namespace tessera::detail
