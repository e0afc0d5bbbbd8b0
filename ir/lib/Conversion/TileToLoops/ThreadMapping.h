//===- ThreadMapping.h - element <-> thread map of convert-tile-to-loops --===//
//
// The lowering parameters of `convert-tile-to-loops`, the map from the elements
// of a tile to the threads of a program, and the static plans built on it.
//
// A tile of P elements (row-major) is spread over the T threads of a program
// (on gpu, in S CTAs of T/S threads each; S > 1 only for kernels whose threads
// never exchange data, see chooseCtaSplit): thread t owns
// n = P/T elements in C chunks of v contiguous elements, element (c, j) being
// linear index (c*T + t)*v + j (in a program split over CTAs, each CTA's
// threads share a contiguous part of the tile instead: see Layout), kept at
// private index c*v + j. When P < T,
// thread t owns element t mod P (replicated) at private index 0. The map
// depends only on P and the kernel-wide T and V (v = min(V, n)), so every
// value of one element count shares it (reshape and elementwise ops mixing
// dtypes need no data movement). V is chosen per kernel so that a chunk of the
// narrowest element type is `vector-bytes` wide.
//
// The plans decide, from the map alone, which ops can avoid the scratch
// buffer (thread-local broadcasts, row reductions by warp shuffles) and where
// in the scratch buffer each op exchanges its data; the kernel verifier and
// the lowering both use them.
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_LIB_CONVERSION_TILETOLOOPS_THREADMAPPING_H
#define TESSERA_LIB_CONVERSION_TILETOLOOPS_THREADMAPPING_H

#include "tessera/Dialect/Tile/IR/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>

namespace mlir::tessera::tile {

/// Static shared memory available to a CTA without opt-in.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
/// Shared memory a CTA may use with the opt-in on sm_90 and sm_100a (227 KiB):
/// the default of `max-shared-bytes`.
constexpr int64_t kDefaultMaxSharedBytes = 227 * 1024;
/// Threads of a warp on the gpu target.
constexpr int64_t kWarpSize = 32;
/// Bounds of the block size chosen per kernel (block-size=0).
constexpr int64_t kMinAutoBlockSize = 32;
constexpr int64_t kMaxAutoBlockSize = 512;
/// Elements of the largest tile per thread aimed at by the chosen block size.
constexpr int64_t kAutoElementsPerThread = 32;
/// How many times a tile inside a loop counts in the block size choice.
constexpr int64_t kLoopTileWeight = 4;
/// Threads per CTA of a program split over several CTAs, times the chunks per
/// thread (see chooseCtaSplit): 256 16-byte chunks, 4 KiB per CTA and tile.
constexpr int64_t kSplitCtaThreads = 256;
/// Threads per CTA of small programs that share one CTA (see
/// chooseProgramsPerCta).
constexpr int64_t kSharedCtaThreads = 256;

/// Lowering parameters derived from the pass options (and, for vectorWidth,
/// from the kernel: see chooseVectorWidth).
struct LoweringOptions {
  bool gpu = false;
  int64_t threads = 1;      // T: threads of a program, over all its CTAs
  int64_t ctasPerProgram = 1; // S: CTAs sharing one program (gpu)
  int64_t programsPerCta = 1; // G: programs sharing one CTA (gpu; S = 1)
  /// K: CTAs of one cluster that share a program's K loop (gpu; the kernel's
  /// tile.split_k): each runs all T threads of the program, S = G = 1.
  int64_t splitK = 1;
  int64_t vectorWidth = 4;  // V: elements per chunk (at most)
  int64_t vectorBytes = 16; // widest global access in bytes
  int64_t unrollLimit = 64;
  int64_t fuseAbove = 256; // see lowerFusedElementwise (KernelLowering.h)
  int64_t splitChunks = 2; // chunks per thread of an automatic split
  bool expRangeTest = true; // see lowerExpWithRangeTest (KernelLowering.h)
  bool carriedSums = false; // see planCarriedSums (LowerControlFlow.cpp)
  /// Shared memory a CTA may use (gpu): scratch above kMaxStaticSharedBytes
  /// is dynamic shared memory up to this (see planScratch).
  int64_t maxSharedBytes = kDefaultMaxSharedBytes;

  /// CTAs along the launch grid's x per program (S or K).
  int64_t ctasAlongX() const { return ctasPerProgram * splitK; }
  /// Threads of one program in one CTA.
  int64_t ctaThreads() const { return threads / ctasPerProgram; }
  /// Threads of one CTA (the CUDA block size).
  int64_t blockThreads() const { return ctaThreads() * programsPerCta; }
  /// Threads that execute a shuffle together: a warp, or the whole CTA when it
  /// has fewer threads.
  int64_t warpSize() const { return std::min(ctaThreads(), kWarpSize); }
};

/// How the P elements of a tile are spread over the T threads of a program.
/// Thread t owns elements (c, j), c < chunks, j < vec, at linear index
/// (c*T + t)*vec + j and keeps element (c, j) at private index c*vec + j.
/// When P < T, thread t owns element t mod P (replicated). In a program split
/// over S CTAs of Tc = T/S threads, each CTA owns a contiguous P/S elements:
/// thread t = s*Tc + u (thread u of CTA s) owns linear index
/// s*(P/S) + (c*Tc + u)*vec + j (the same as above when S = 1).
struct Layout {
  int64_t numElements; // P
  int64_t perThread;   // n
  int64_t vec;         // v
  int64_t chunks;      // C
  bool replicated;
  int64_t threads;    // T
  int64_t ctaThreads; // Tc

  /// Linear index of the element thread `t` keeps at private index `k`.
  int64_t linearOf(int64_t t, int64_t k) const;
  /// Private index at which thread `t` keeps linear element `l`, if it owns
  /// it.
  std::optional<int64_t> privateIndexOf(int64_t t, int64_t l) const;
};

/// The layout of a tile of `type` under `opts`.
Layout getLayout(const LoweringOptions &opts, RankedTensorType type);

/// Elements of one slot of a ring of `type` tiles (tile.stream_buffer): each
/// thread keeps its elements of the layout where it copies and reads them,
/// chunk c of thread t at ((c * T) + t) * v, so a warp's accesses to one chunk
/// are contiguous. P elements, or T for a replicated layout.
int64_t ringSlotElements(const LoweringOptions &opts, RankedTensorType type);
/// f32 slots of the scratch through which a tile.split_sum exchanges its
/// partials: for each input, each thread's private elements, element k of
/// thread t at k * T + t after the inputs before it.
int64_t splitSumSlots(const LoweringOptions &opts, SplitSumOp op);
/// Bytes of the barriers of a bulk ring of `slots` slots.
inline int64_t ringBarrierBytes(int64_t slots) { return 2 * 8 * slots; }

/// Whether code over a thread's elements of `layout` is fully unrolled (with
/// constant private indices) rather than a loop over chunks.
bool isUnrolled(const LoweringOptions &opts, const Layout &layout);

/// The block size chosen for `func` with block-size=0: about 32 elements of
/// its largest tile per thread, T = clamp(Pmax / 32, 32, 512), a power of two
/// (a 1 x 8192 row gets 256 threads, a 2048-element tile 64). Measured on an
/// H200 (benchmarks/): against 16 elements per thread, softmax and LayerNorm
/// rows of 8192 ran 1.4-1.5x faster (more programs per SM overlap their
/// load, reduce and store phases), bf16 add 3% faster, the rest the same.
/// A tile inside a loop counts kLoopTileWeight times its elements: the loop
/// repeats the thread's work, so fewer elements per iteration suffice (a
/// 1 x 2048 chunk of a row sum's loop gets 256 threads: 4.55 TB/s over
/// 8192-wide bf16 rows, as the one-pass row sum, against 4.43 at 64 threads;
/// 128 threads ran as fast, 512 at 3.1).
int64_t chooseBlockSize(func::FuncOp func);

/// Whether the programs of `func` store an eighth of the bytes they load or
/// less (a reduction), counting the tiles of its tile.load and tile.store ops,
/// those inside a loop kLoopTileWeight times. On gpu, convert-tile-to-loops
/// marks such a kernel tile.reduction and llvm-load-cache-hints gives its
/// loads no L2 policy. Counted per program rather than per thread: a 1 x 8192
/// row sum is a reduction at any block size, also when it reads its row in a
/// loop of 1 x 2048 chunks.
bool isReduction(func::FuncOp func);

/// The kernel-wide chunk width V: `vectorBytes` of the narrowest element type
/// (i1 excluded) of any tile in `func`, capped by `opts.vectorWidth`.
int64_t chooseVectorWidth(const LoweringOptions &opts, func::FuncOp func);

/// A tile.broadcast whose result elements all come from input elements held by
/// the same thread: no scratch, no barrier.
struct LocalBroadcastPlan {
  enum Kind {
    Identity,   // same shape: the input buffer is the result
    Splat,      // one input element: every result element is input[0]
    SameThread, // T == 1: the input private index is the input linear index
    Table,      // unrolled: result[k] = input[sourceIndex[k]]
  } kind;
  SmallVector<int64_t> sourceIndex;
};
std::optional<LocalBroadcastPlan> planLocalBroadcast(const LoweringOptions &,
                                                     BroadcastOp op);

/// A tile.broadcast (gpu) whose input is a tile.load, through reshapes, used
/// by nothing else, from a kernel argument that no tile.store writes: each
/// thread loads the input elements its result elements need straight from
/// global memory (served by the caches after the first), in the result's
/// layout, at the broadcast's place; the load and the reshapes emit nothing.
/// No scratch and no barrier, where the other broadcasts of a tile spread
/// over several threads exchange it through the scratch buffer between two
/// barriers. Only when the result's innermost dimension is not broadcast and
/// equals the load's (a result chunk then reads contiguous input elements),
/// or is the one broadcast (a column of the input spread along
/// the result's rows, as tile-vector-mma spreads A's row over B's columns; a
/// run of a chunk within a row then reads one input element, loaded once),
/// the result's layout is not replicated, no local plan applies, and the
/// load is in the broadcast's block.
struct BroadcastLoadPlan {
  /// A tile.load, or a tile.stream_take of a bulk ring (whose row-major slot
  /// any thread reads).
  Operation *source;
  SmallVector<ReshapeOp> reshapes; // from the broadcast's input to the load
};
std::optional<BroadcastLoadPlan> planBroadcastLoad(const LoweringOptions &,
                                                   BroadcastOp op);

/// A tile.mma (gpu) of bf16 or f16 operands into f32 on the tensor cores
/// (mma.sync m16n8k16, sm_80 and later): A [M, K] is written to the scratch
/// buffer as rows of K + 8 elements (the 16 bytes of padding put a fragment
/// load's eight rows in distinct banks), B as rows of N + 8 (or, when B is a
/// tile.transpose of X [N, K] used by nothing else, X as rows of K + 8, and
/// the transpose emits nothing), each thread's chunks row by row. After a
/// barrier each warp takes 16 x 16 blocks of the product in turn, loading its
/// A fragments (and B^T's) as 32-bit words and a row-major B's as pairs of
/// 16-bit elements, and writes the products as f32 rows of N + 8; after a
/// second barrier each thread adds its own result elements to the
/// accumulator's. M need not be a multiple of 16: fragment rows past M repeat
/// row M - 1, and the product rows they give are never read. Only for K and N
/// multiples of 16, a program that is one CTA of whole warps, and operands and
/// product that fit the shared memory a CTA may use; other mmas multiply
/// element by element from the scratch buffer.
struct WarpMmaPlan {
  int64_t m, n, k;
  int64_t rowElems;    // K + 8: A's and B^T's rows in the scratch buffer
  int64_t nRowElems;   // N + 8: a row-major B's rows and the product's
  int64_t aBytes, bBytes, outBytes; // each a multiple of 16
  TransposeOp transposedB;          // B = transpose(X): X is written as B^T
  Type stageType; // the operands in the shared rows: f16 or bf16 as they are,
                  // 8-bit floats as f16 (exactly), for m16n8k16 f16 products
  int64_t scratchBytes() const { return aBytes + bBytes + outBytes; }
};
std::optional<WarpMmaPlan> planWarpMma(const LoweringOptions &opts, MmaOp op);
/// True if `op` is the transposed B of an mma with a WarpMmaPlan.
bool isAbsorbedTranspose(const LoweringOptions &opts, TransposeOp op);

/// A tile.reduce along an axis after which all dimensions are 1: the input is
/// R rows of L contiguous elements. Each row is owned by an aligned
/// group of g threads, each owning s = L/g of its elements, so each thread
/// combines its own elements into `numPartials` partials (partial p combines
/// private elements [p*s, p*s + s)), then the group combines them by xor
/// shuffles; groups wider than a warp, and results owned by threads without
/// the row total, go through `rows * warpsPerRow` scratch slots.
struct RowReducePlan {
  int64_t rowLength;   // L
  int64_t rows;        // R
  int64_t group;       // g
  int64_t perPartial;  // s
  int64_t numPartials; // n / s
  int64_t warpsPerRow; // max(1, g / warp size)
  /// When no scratch is needed: for each result private index, the partial
  /// that holds its row total after the shuffles (identity when the result
  /// code is a loop).
  SmallVector<int64_t> partialOfResult;
  bool exchangeFree = false;
  int64_t scratchBytes = 0;
};
std::optional<RowReducePlan> planRowReduce(const LoweringOptions &opts,
                                           ReduceOp op);

/// Where the ops of a kernel exchange data in the scratch buffer. Ops without
/// an entry use the shared region at offset 0 and end with a barrier (so the
/// next op may overwrite it); ops with a private offset run once per program
/// (not inside a loop), own their region and need no trailing barrier.
struct ScratchPlan {
  int64_t totalBytes = 0;
  DenseMap<Operation *, int64_t> privateOffset;
  /// Per bulk ring (tile.stream_buffer bulk), the offset of its barriers: a
  /// full and an empty mbarrier (8 bytes each) per slot, in a region of its
  /// own (an mbarrier is initialized once; slots of different loops share
  /// their area, barriers do not).
  DenseMap<Operation *, int64_t> ringBarrierOffset;
  /// On gpu, a scratch over kMaxStaticSharedBytes is dynamic shared memory:
  /// an external array of unknown size, whose totalBytes the launch provides
  /// (the kernel carries tile.dynamic_shared_bytes).
  bool dynamic = false;
};
/// Plans the scratch of `func`. On gpu, regions are laid out within the
/// static 48 KiB (own regions for row reductions only if all fit, as
/// always); a kernel whose scratch exceeds that is laid out again within
/// `opts.maxSharedBytes` as dynamic shared memory. Fails, with an error on
/// the largest user naming the bytes needed and the limit, beyond that.
FailureOr<ScratchPlan> planScratch(const LoweringOptions &opts,
                                   func::FuncOp func);

/// Whether the threads of `func` never exchange data under `opts`: no
/// reduction, transpose, mma or device call (which may read the CUDA thread
/// id), and only broadcasts within a thread. Its program may then be split
/// over several CTAs: thread t of the program is thread t mod (T/S) of the
/// program's CTA t / (T/S).
bool isExchangeFree(const LoweringOptions &opts, func::FuncOp func);

/// The split chosen for a kernel with block-size=0 (after its T and V), with
/// C = opts.splitChunks chunks per thread in CTAs of Tc = 256 / C threads: if
/// the kernel is exchange-free at T' = Pmax / (C V) threads and T' >= 2 Tc,
/// T' threads in S = T' / Tc CTAs; else T and S = 1 are left alone. CTA s of a
/// program owns the contiguous elements [s * Tc C V, (s + 1) * Tc C V) of each
/// tile of Pmax elements (see Layout): 4 KiB of each tile of the narrowest
/// type. Measured on an H200, against one CTA
/// per program (C = 2, the default, in parentheses C = 1 in CTAs of 256): a
/// 1 GiB bf16 copy in 1x8192 tiles 4.12 -> 4.26 (4.01), in 1-D tiles of 8192
/// 4.11 -> 4.23 (4.27), a bf16 add of 4096-element tiles 4.37 -> 4.39 (4.43),
/// an f32 add 4.35 -> 4.39 (4.38), a fused chain of approximate math
/// 4.33 -> 4.41 (4.01), of accurate math 2.04 -> 2.24 (2.54). CTAs of 8 or
/// 16 KiB per tile were no faster than one CTA per program, CTAs of 2 KiB
/// slower (too short).
void chooseCtaSplit(func::FuncOp func, LoweringOptions &opts);

/// The programs per CTA chosen for a kernel with block-size=0 and
/// ctas-per-program=0 whose programs have T < 256 threads, need no scratch
/// (no exchange through shared memory, hence no barrier) and make no device
/// call (which may read the CUDA thread id): up to G = 256 / T programs
/// share one CTA, program ctaid.x * g + tid.x / T running on threads tid.x
/// mod T, where g = ntid.x / T is the launch's choice (G, or fewer for a grid
/// of fewer than G programs along x: programs_per_cta_of_launch in
/// src/compiler/pipeline.h); otherwise G = 1. The grid then has ceil(X / g)
/// CTAs along x for X programs; X comes as a trailing i32 argument
/// (num_programs along x), and the compiler makes programs at or past X return
/// at once (tessera-skip-programs-past-the-end). Small programs otherwise run
/// into the rate at which an SM starts CTAs: on an H200 a row sum over
/// 1024-wide bf16 rows (a program of one warp) moved 1.69 TB/s against
/// Inductor's 3.34, and 4.40 with eight programs per CTA.
void chooseProgramsPerCta(func::FuncOp func, LoweringOptions &opts,
                          const ScratchPlan &scratch);

} // namespace mlir::tessera::tile

#endif // TESSERA_LIB_CONVERSION_TILETOLOOPS_THREADMAPPING_H
