// launch.h: how work is scheduled: targets, streams, events, launch options, launch handles and
// graph-updatable scalars. The rules (docs/execution-model.md):
//
//  - A launch reads its inputs (shared) and writes its outputs (exclusive). A launch that uses a
//    tensor still in use by earlier work is ordered after that work automatically: after the last
//    writer of each tensor it reads, after the last writer and every reader of each tensor it
//    writes. No host synchronisation is needed between launches.
//  - Host access to a tensor (Tensor::data(), operator(), to_vector, fill, ...) waits for the work
//    that uses it, or throws tessera::Error in strict mode (set_strict_host_access, or
//    LaunchOptions::strict_host_access for one launch).
//  - Memory is never freed while work still uses it: a Tensor, a LaunchHandle or the library may
//    be destroyed at any time; the free is deferred until the work has completed.
//
//   auto h = k.launch_async(z.partition<128>(), x, y);  // z borrowed exclusively, x and y shared
//   auto w = k2.launch_async(v.partition<128>(), z);     // ordered after h (reads z)
//   w.wait();                                            // or let the handles go: they wait
//   Tensor<float, 1> r = k.launch_async(std::move(t).partition<128>(), x).get();  // t moved in, back out
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/detail/storage.h"
#include "tessera/dtype.h"
#include "tessera/errors.h"

namespace tessera {

// Where a kernel runs (or, for compile-only use, what it is compiled for): the CPU, or a GPU
// architecture (A100 sm_80; RTX 30xx, A10, A40 sm_86; L4, L40S, RTX 40xx sm_89; H100, H200 sm_90;
// B200 sm_100a; RTX 50xx, RTX PRO 6000 sm_120). default_target() picks the GPU's own.
enum class Target { cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120 };

// How a kernel is compiled for a GPU target: nvvm, tessera's own lowering (tile IR -> NVVM -> PTX),
// or tileir, NVIDIA's tileiras on the kernel as CUDA Tile IR bytecode (docs/compiler.md, "Tile IR
// backend"; needs tileiras, scripts/install-tileiras.sh, and a kernel Tile IR can express). The
// CPU target has one back end and ignores this.
enum class Backend { nvvm, tileir };

namespace detail {
class StreamImpl;
}  // namespace detail

// An in-order queue of work: a CUstream on the GPU, a worker thread on the CPU target (both made
// on first use). Work on one stream runs in submission order; work on different streams may
// overlap. Launches without a stream use a pool of four streams: a launch that depends on work in
// flight on a pool stream goes to that stream (a chain stays on one stream), independent launches
// rotate over the pool. Copies share the stream.
class Stream {
 public:
  // No stream: launches given this choose one from the pool.
  Stream() = default;
  // A new stream of tessera's own.
  static Stream create();
  // A foreign CUstream (e.g. PyTorch's current stream): tessera launches on it, orders its work
  // with events and never destroys it. The CUDA context must be device 0's primary context.
  static Stream from_cuda(void* cu_stream);

  explicit operator bool() const { return impl_ != nullptr; }
  // A number unique in the process (0 for no stream): the queue of the completions of its work.
  std::uint64_t id() const;
  // Waits until all work submitted to this stream has finished.
  void synchronize() const;
  // The CUstream (made on first use). Throws without a GPU.
  void* cuda_stream() const;

  const std::shared_ptr<detail::StreamImpl>& impl() const { return impl_; }

 private:
  explicit Stream(std::shared_ptr<detail::StreamImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::StreamImpl> impl_;
};

// The completion of a launch or replay, for ordering other work after it (LaunchOptions::after)
// or waiting on the host. An empty Event is always ready.
class Event {
 public:
  Event() = default;
  explicit Event(detail::CompletionPtr c) : c_(std::move(c)) {}
  bool ready() const { return !c_ || c_->done(); }
  // Blocks until the work has finished; throws tessera::Error if it failed.
  void wait() const {
    if (c_) c_->wait();
  }
  const detail::CompletionPtr& completion() const { return c_; }

 private:
  detail::CompletionPtr c_;
};

// Choices the compiler otherwise makes itself, fixed for a launch (the options of tessera::autotune
// can carry them, to search over them). 0 leaves a choice to the compiler. The tensor-core GEMM
// kernels read them (docs/compiler.md, "Tensor cores"); other kernels, the CPU target and the
// tileir back end ignore them. Each distinct set is one more compile, cached like the others.
struct CompilerHints {
  // Shared-memory stages of a tensor-core GEMM's load pipeline, 2 to 8 (fewer where they do not fit
  // the GPU's shared memory). The compiler's choice: on sm_90 as many as fit, at most 6; with
  // mma.sync 3, or 2 where 3 do not fit.
  int pipeline_stages = 0;
  // Rows of programs a tensor-core GEMM walks together before moving along the columns, so that
  // their tiles of A and B meet in L2: 1 to 64. A persistent sm_90 GEMM's CTAs take programs in
  // that order; an mma.sync GEMM's CTAs, launched in order, map to programs in it. Which program
  // owns which tile does not change. The compiler's choice: 8 on sm_90's wgmma; the launch's
  // order on mma.sync (program ids are the CTA's ids).
  int group_rows = 0;
  // Programs (CTAs) to keep resident per SM, 1 to 32: each thread's registers are capped to fit
  // them. The tileir backend passes it to tileiras (CUDA Tile IR's occupancy hint); the NVVM
  // backend caps kernels it lowers element by element (not the tensor-core GEMMs) at the threads
  // it chose or `threads`, keeps a K loop's carried row sums in one register per chunk, and
  // unrolls streaming loops less while the capped kernel would spill (it may still spill, e.g.
  // with early_frozen_steps); it then tries no other thread count or register budget. The
  // compiler's choice: 0 (the NVVM backend caps registers itself where that fits more programs
  // without spilling: docs/compiler.md).
  int occupancy = 0;
  // The tileir backend's hints to tileiras (CUDA Tile IR's optimization hints, written for the
  // architecture it compiles for); the NVVM backend does not read them. Programs per cluster
  // (Tile IR's num_cta_in_cga), 1, 2, 4, 8 or 16: tileiras may then share data between the
  // programs of a cluster. The compiler's choice: 0.
  int cluster_programs = 0;
  // Whether tileiras may move tiles with the TMA engine (Tile IR's allow_tma, on every load and
  // store). The compiler's choice: unset.
  std::optional<bool> tma;
  // Slots of a ring into which the NVVM backend copies the tiles a K loop streams ahead (tiles of 8
  // KiB or more per iteration from a read-only, 16-byte aligned tensor, copied into shared memory
  // with cp.async while earlier ones are consumed), 2 to 8, fewer where the rings of a loop would
  // take more than 64 KiB; 1 loads them into registers. The compiler's choice: 1 (on the H200 the
  // engine's matrix-vector products ran slower from rings: docs/performance.md).
  int stream_stages = 0;
  // With stream_stages of 2 or more, on sm_90 and newer: bulk rings instead, filled by one warp's
  // cp.async.bulk per row and completed on mbarriers, the vector chunks the loop broadcasts
  // included, up to 112 KiB per loop; the first tiles of frozen inputs (Tensor::freeze) are copied
  // before the kernel waits for the grids it depends on. Experimental: on the H200 the engine's
  // products ran slower this way than from registers (docs/performance.md, sessions 33 and 34).
  // Other targets ignore it. The compiler's choice: false.
  bool bulk_streams = false;
  // Threads of one program for kernels the NVVM backend lowers element by element (not the
  // wgmma GEMMs, whose warpgroups are their own; the CPU target and the tileir backend do
  // not read it), a power of two from 32 to 1024: each thread then keeps the tile's
  // elements / threads of every tile, so fewer threads give each more rows of a tile that a loop
  // broadcasts a vector over (a matrix-vector product reads the vector once per row group of a
  // thread). The compiler's choice: 0 (about 32 elements of the largest tile per thread, tiles in
  // loops counted four times, 32 to 512 threads; and the variants of docs/compiler.md). An
  // mma.sync GEMM takes 128 or 256 (4 or 8 warps) where its tile allows them (at most 128
  // accumulators per thread: BM x BN up to 16384 on 4 warps) and otherwise, like other values,
  // keeps the compiler's choice (4 to 8 warps: BM x BN / 4096 for bf16 and f16 with BK up to 64,
  // BM x BN / 2048 for the others).
  int threads = 0;
  // CTAs of one cluster that share a program's K loop, 2, 4 or 8, on sm_90 and newer with the NVVM
  // backend (other targets and backends ignore it): each runs 1/S of the loop's iterations and
  // rank 0 adds their partial sums and runs the rest of the program. Kernels lowered element by
  // element or onto mma.sync split every program, so a product of few long rows (or few 16-row
  // tiles) keeps S times the CTAs in flight. The wgmma GEMMs (sm_90a) run persistent clusters and
  // split only the programs of their last round, where there are no more of them than clusters: a
  // product of fewer tiles than clusters splits them all, and one whose last round would leave
  // most SMs idle ends it in about 1/S of a program's time. Only a kernel with one K loop whose
  // carried tiles are f32 sums that start at zero, and that writes nothing before its loop, is
  // split (tile-split-k-loop), or a GEMM kernel that takes a tensor-core lowering; others run as
  // they are. The compiler's choice: 0 (none).
  int split_k = 0;
  // K-loop iterations, 1 to 4, whose tiles of frozen inputs (Tensor::freeze) a kernel the NVVM
  // backend lowers element by element loads into registers before it waits for the grids it
  // depends on, on sm_90 and newer, where launches are programmatic: those weight tiles are then in
  // flight while the kernel before it ends. Only kernels compiled for whole tiles (the default
  // LaunchOptions::whole_tiles, where the launch's tiles are whole) with a K loop reading a frozen
  // input take it (tile-load-settled-before-wait); others run as they are. A chain of products
  // gains 2-11%, the Qwen3 engine's decode step, with its attention kernels, did not
  // (docs/performance.md, session 42). The compiler's choice: 0 (none).
  int early_frozen_steps = 0;
  // The wgmma GEMMs (sm_90a, NVVM backend) with their two consumer warpgroups taking the CTA's
  // programs in turn, each multiplying all rows of its own, so that one's epilogue (a bias and an
  // activation, the stores) runs beside the other's products; otherwise both multiply every
  // program, 64 rows each, and the tensor cores wait while they run its epilogue. Only tiles of at
  // most 128 x 128 with bf16 or f16 inputs take it, without split_k (each warpgroup then holds a
  // whole tile's accumulators); the epilogue's tiles of other arguments (a residual) are then read
  // from global memory rather than through TMA, and a last round is not run in halves. Other
  // kernels, targets and backends ignore it. The compiler's choice: false.
  bool ping_pong = false;
  bool operator==(const CompilerHints&) const = default;
};

struct LaunchOptions {
  std::optional<Target> target;    // default: default_target()
  Stream stream;                   // default: the pool
  std::vector<Event> after;        // work to order after besides what the tensors imply
  bool strict_host_access = false; // host access to this launch's tensors in flight throws
  // Compile the kernel for this launch's exact shapes, strides, view offsets and grid (as
  // torch.compile(dynamic=False) does): index arithmetic folds to constants, and where every tile
  // of the launch is whole, the bounds tests and the edge code go away. Each distinct set of
  // shapes is one more compile (and one more disk-cache entry).
  bool static_shapes = false;
  // Where every tile this launch reads or writes lies wholly inside its tensor (decided on the
  // host from the kernel's index expressions, the shapes, the scalars and the grid), run a variant
  // of the kernel compiled for such launches: no bounds tests, no edge code. A kernel launched both
  // with whole and with ragged tiles is compiled once for each. Off: the kernel that tests.
  bool whole_tiles = true;
  // The GPU back end (Backend): default default_backend().
  std::optional<Backend> backend;
  // Choices fixed for this launch instead of the compiler's (CompilerHints).
  CompilerHints hints;
};

// Process-wide strict host access: host access to a tensor in use by work in flight throws
// tessera::Error (naming the work) instead of waiting. Off by default.
void set_strict_host_access(bool strict);
bool strict_host_access();

// Waits until all work submitted so far in this process has finished (every stream).
void synchronize();

namespace detail {
// Waits, swallowing errors: for destructors.
void wait_quietly(const CompletionPtr& c) noexcept;
// How many dead tensors' memory is waiting for work in flight before it is freed (for tests).
std::size_t retired_count();
}  // namespace detail

// The handle of an asynchronous launch or graph replay. It shares the work's completion and, for
// outputs passed by value (std::move(t).partition<...>()), owns those tensors until the work is
// done: get() waits and gives them back. Destroying a handle waits for the work (errors are then
// dropped: call wait() to see them). Result is void, one Tensor, or a std::tuple of Tensors.
template <class Result = void>
class [[nodiscard]] LaunchHandle {
  using Held = std::conditional_t<std::is_void_v<Result>, std::monostate, std::optional<Result>>;

 public:
  LaunchHandle() = default;
  explicit LaunchHandle(detail::CompletionPtr done) requires std::is_void_v<Result> : done_(std::move(done)) {}
  template <class R = Result>
    requires(!std::is_void_v<R>)
  LaunchHandle(detail::CompletionPtr done, R result) : done_(std::move(done)), result_(std::move(result)) {}

  LaunchHandle(LaunchHandle&&) noexcept = default;
  LaunchHandle& operator=(LaunchHandle&& other) noexcept {
    if (this != &other) {
      detail::wait_quietly(done_);
      done_ = std::move(other.done_);
      result_ = std::move(other.result_);
    }
    return *this;
  }
  LaunchHandle(const LaunchHandle&) = delete;
  LaunchHandle& operator=(const LaunchHandle&) = delete;
  ~LaunchHandle() { detail::wait_quietly(done_); }

  // Whether the work has finished. Never blocks.
  bool ready() const { return !done_ || done_->done(); }
  // Blocks until the work has finished; throws tessera::Error if it failed.
  void wait() const {
    if (done_) done_->wait();
  }
  // For LaunchOptions::after.
  Event event() const { return Event(done_); }

  // Waits, then returns the outputs this launch owned.
  Result get() && {
    wait();
    if constexpr (!std::is_void_v<Result>) {
      if (!result_) throw Error("tessera::LaunchHandle::get: the handle holds no outputs (default-constructed, or already taken by get() or detach())");
      Result r = std::move(*result_);
      result_.reset();
      done_.reset();
      return r;
    } else {
      done_.reset();
    }
  }
  // Lets the work run on without waiting for it and returns the owned outputs at once. Safe: the
  // tensors stay tracked, so host access to them waits for (or, strict, rejects) the work in
  // flight, and nothing is freed before it ends; but errors of the work are not reported.
  Result detach() && {
    done_.reset();
    if constexpr (!std::is_void_v<Result>) {
      if (!result_) throw Error("tessera::LaunchHandle::detach: the handle holds no outputs (default-constructed, or already taken by get() or detach())");
      Result r = std::move(*result_);
      result_.reset();
      return r;
    }
  }

 private:
  detail::CompletionPtr done_;
  [[no_unique_address]] Held result_{};
};

namespace detail {
// The shared value of a Scalar.
struct ScalarCell {
  std::atomic<std::uint64_t> bits{0};
};
}  // namespace detail

// A scalar kernel argument whose value can change without re-capturing a graph: a launch reads its
// value when it is submitted, a graph replay reads it at every replay (e.g. a decode position).
// Copies share the value.
template <class T>
  requires(std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
class Scalar {
  static_assert(sizeof(T) <= 8);

 public:
  explicit Scalar(T value = T{}) : cell_(std::make_shared<detail::ScalarCell>()) { set(value); }
  void set(T value) {
    std::uint64_t b = 0;
    std::memcpy(&b, &value, sizeof(T));
    cell_->bits.store(b, std::memory_order_relaxed);
  }
  T get() const {
    std::uint64_t b = cell_->bits.load(std::memory_order_relaxed);
    T v;
    std::memcpy(&v, &b, sizeof(T));
    return v;
  }
  const std::shared_ptr<detail::ScalarCell>& cell() const { return cell_; }

 private:
  std::shared_ptr<detail::ScalarCell> cell_;
};

}  // namespace tessera
