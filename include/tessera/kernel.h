// kernel.h: defining and launching tile kernels.
//
//   auto add = tessera::kernel("add", [](auto out, auto x, auto y) {
//     return out.store(x.load_like(out) + y.load_like(out));
//   });
//   add.launch(z.partition<128>(), x, y);   // z: output, x and y: read-only inputs
//
// launch() maps each host argument to a placeholder type (a Partition or OwnedPartition to an
// output, a Tensor to a read-only input, a number or a tessera::Scalar to a scalar), instantiates
// the lambda with them to record the kernel's AST at compile time (kernel_ast.h) and hands that
// constant text plus the run-time sizes, strides and storages to the library, which compiles once
// per specialization and target, orders the launch after the work in flight on its tensors and
// runs the grid. launch() waits for it; launch_async() returns a LaunchHandle (launch.h). The
// lambda body is never executed on the host.
//
//   add.launch(z.partition<128>(), x, y);                      // synchronous
//   auto h = add.launch_async(z.partition<128>(), x, y);       // asynchronous, h.wait()
//   add.launch({.target = Target::cpu, .stream = s}, ...);     // with LaunchOptions
//   Tensor<float, 1> r = add.launch(std::move(t).partition<128>(), x, y);  // t moved in and back
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/dsl.h"
#include "tessera/errors.h"
#include "tessera/launch.h"
#include "tessera/tensor.h"

namespace tessera {

// What compile() produced for one kernel and target.
struct CompiledArtifact {
  std::string target;      // "cpu", "sm_90", "sm_100a"
  Backend backend = Backend::nvvm;  // GPU targets: the back end that compiled it
  std::string ptx;         // GPU targets only (none from the tileir backend)
  std::vector<char> cubin; // GPU targets only
  bool from_disk_cache = false;
  // Compile time by stage in milliseconds, of the compile that produced it (empty when it was
  // loaded from the disk cache).
  std::vector<std::pair<std::string, double>> stage_ms;
};

// Counters of the process-wide kernel caches, for tests and benchmarks.
struct CacheStats {
  int64_t compiles = 0;       // kernels compiled by the MLIR pipeline in this process
  int64_t memory_hits = 0;    // launches/compiles served by the in-process cache
  int64_t disk_hits = 0;      // compiles served by the on-disk cache
  int64_t disk_corrupt = 0;   // corrupt disk entries dropped and recompiled
};
CacheStats cache_stats();
// Drops every compiled kernel from the in-process cache (the disk cache is kept). Kernels in
// use by a launch in flight stay alive until it ends.
void clear_memory_cache();
// Whether a usable CUDA GPU (driver and device) is present. Never throws.
bool gpu_available();
// The streaming multiprocessors of the GPU launches use (132 on an H100 SXM or H200), 0 without a
// GPU: what a caller needs to size work in rounds of the GPU's CTAs. Never throws.
int gpu_multiprocessor_count();
// The target launches use: TESSERA_TARGET if set (cpu, sm_80, sm_86, sm_89, sm_90, sm_100a,
// sm_120), else the GPU's own if one is present, else cpu. The GPU's own is the newest target whose
// cubin it runs (sm_86 on an sm_87 GPU); on a GPU newer than every target, the newest target,
// whose PTX the driver compiles for it. Throws tessera::Error on a GPU older than sm_80.
Target default_target();
// "cpu", "sm_90", ...: the spelling TESSERA_TARGET takes.
std::string_view to_string(Target target);
// Every GPU target, oldest first.
std::span<const Target> gpu_targets();
// The back end GPU launches use: TESSERA_BACKEND if set (nvvm or tileir), else nvvm. Throws
// tessera::Error for another value.
Backend default_backend();
// "nvvm", "tileir": the spelling TESSERA_BACKEND takes.
std::string_view to_string(Backend backend);
// Whether this machine can compile through `backend`: nvvm always, tileir where tileiras is found
// (TESSERA_TILEIRAS or its install location, scripts/install-tileiras.sh).
bool backend_available(Backend backend);

namespace detail {

// One kernel argument as the library sees it.
struct ArgDesc {
  enum class Kind : uint8_t { out, in, scalar };
  Kind kind = Kind::in;
  DType dtype = DType::f32;
  int rank = 0;
  std::array<int64_t, 4> shape{};
  std::array<int64_t, 4> strides{};
  int64_t offset = 0;                   // elements from the storage's start to element 0 (views)
  std::array<int64_t, 4> tile{};
  std::shared_ptr<Storage> storage;     // the tensor's memory (outputs and inputs)
  std::array<std::byte, 8> scalar{};    // the value of a scalar argument
  std::shared_ptr<ScalarCell> cell;     // a tessera::Scalar: read at submission and at each replay
};

struct LaunchRequest {
  std::string_view kernel;  // the user's name for the kernel
  std::string_view ast;     // the serialized AST (docs/ast-format.md)
  std::span<const ArgDesc> args;
  double* elapsed_ms = nullptr;  // if set: receives the kernel's run time (GPU events / host clock)
  const LaunchOptions* options = nullptr;
  bool wait = true;  // a synchronous launch: returns when the kernel has finished
};

// Submits the launch after the work its tensors are in use by; returns its completion, already
// waited for if request.wait (then errors are thrown here). While a graph is being captured on
// this thread the launch is recorded into it instead and nullptr is returned.
CompletionPtr submit(const LaunchRequest& request, Target target);
// submit() with wait = true.
void launch(const LaunchRequest& request, Target target);
CompiledArtifact compile(const LaunchRequest& request, Target target);
// compile() without the artifact: what a launch would compile, compiled and cached.
void prepare(const LaunchRequest& request, Target target);

template <class... A>
inline constexpr bool leads_with_options = false;
template <class A0, class... A>
inline constexpr bool leads_with_options<A0, A...> = std::is_same_v<std::remove_cvref_t<A0>, LaunchOptions>;

template <int I, class A>
struct param_for;
template <int I, class T, int Rank, int... Tile>
struct param_for<I, Partition<T, Rank, Tile...>> {
  using type = OutParam<I, dtype_v<T>, Rank, Tile...>;
};
template <int I, class T, int Rank, int... Tile>
struct param_for<I, OwnedPartition<T, Rank, Tile...>> {
  using type = OutParam<I, dtype_v<T>, Rank, Tile...>;
};
template <int I, class T>
struct param_for<I, Scalar<T>> {
  using type = ScalarParam<I, dtype_v<T>>;
};
template <int I, class T, int Rank>
struct param_for<I, Tensor<T, Rank>> {
  using type = InParam<I, dtype_v<T>, Rank>;
};
template <int I, class T>
  requires(std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
struct param_for<I, T> {
  using type = ScalarParam<I, dtype_v<T>>;
};

template <class T, int Rank>
ArgDesc tensor_arg(ArgDesc::Kind kind, const Tensor<T, Rank>& t) {
  ArgDesc a;
  a.kind = kind;
  a.dtype = dtype_v<T>;
  a.rank = Rank;
  for (int d = 0; d < Rank; ++d) {
    a.shape[d] = t.shape(d);
    a.strides[d] = t.strides()[d];
  }
  a.offset = t.storage_offset();
  a.storage = t.storage();
  if (!a.storage) throw Error("tessera: a moved-from tensor was passed to a launch");
  return a;
}
template <class T, int Rank, int... Tile>
ArgDesc to_arg(const Partition<T, Rank, Tile...>& p) {
  ArgDesc a = tensor_arg(ArgDesc::Kind::out, p.tensor());
  for (int d = 0; d < Rank; ++d) a.tile[d] = p.tile[d];
  return a;
}
template <class T, int Rank, int... Tile>
ArgDesc to_arg(const OwnedPartition<T, Rank, Tile...>& p) {
  ArgDesc a = tensor_arg(ArgDesc::Kind::out, p.tensor());
  for (int d = 0; d < Rank; ++d) a.tile[d] = p.tile[d];
  return a;
}
template <class T, int Rank>
ArgDesc to_arg(const Tensor<T, Rank>& t) {
  return tensor_arg(ArgDesc::Kind::in, t);
}
template <class T>
ArgDesc to_arg(const Scalar<T>& s) {
  ArgDesc a;
  a.kind = ArgDesc::Kind::scalar;
  a.dtype = dtype_v<T>;
  T v = s.get();
  std::memcpy(a.scalar.data(), &v, sizeof(T));
  a.cell = s.cell();
  return a;
}

// The outputs a launch owns (OwnedPartition arguments), as a tuple of Tensors.
template <class A>
inline constexpr bool is_owned_partition = false;
template <class T, int Rank, int... Tile>
inline constexpr bool is_owned_partition<OwnedPartition<T, Rank, Tile...>> = true;

template <class A>
auto owned_tuple(A&& a) {
  if constexpr (is_owned_partition<std::remove_cvref_t<A>>) {
    static_assert(!std::is_lvalue_reference_v<A>,
                  "tessera: pass a named OwnedPartition with std::move: the launch takes the tensor");
    return std::tuple(std::move(a).take());
  } else {
    return std::tuple<>();
  }
}
template <class Tuple>
struct result_of_tuple {
  using type = Tuple;
};
template <>
struct result_of_tuple<std::tuple<>> {
  using type = void;
};
template <class T>
struct result_of_tuple<std::tuple<T>> {
  using type = T;
};
// What a launch with these arguments gives back: void, one Tensor, or a tuple of Tensors.
template <class... Args>
using owned_result_t =
    typename result_of_tuple<decltype(std::tuple_cat(owned_tuple(std::declval<Args>())...))>::type;
template <class T>
  requires(std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
ArgDesc to_arg(const T& v) {
  ArgDesc a;
  a.kind = ArgDesc::Kind::scalar;
  a.dtype = dtype_v<T>;
  static_assert(sizeof(T) <= 8);
  std::memcpy(a.scalar.data(), &v, sizeof(T));
  return a;
}

}  // namespace detail

// The compile that Kernel::prepare does for one launch, with the launch's arguments described at
// once (dtypes, shapes, strides, tiles; a compile reads no tensor's data) and the compile itself
// left to compile() or tessera::compile_all. A warm-up gathers those of many launches, whose
// views may be gone by then, and compiles them on threads: Kernel::pending_compile.
class PendingCompile {
 public:
  const std::string& kernel() const { return kernel_; }
  // Compiles (and on the GPU, loads) what the launch would run, as Kernel::prepare.
  void compile() const {
    detail::LaunchRequest r{kernel_, ast_, args_};
    r.options = &options_;
    detail::prepare(r, options_.target.value_or(default_target()));
  }

 private:
  template <class Fn>
  friend class Kernel;
  PendingCompile(std::string kernel, std::string_view ast, std::vector<detail::ArgDesc> args,
                 const LaunchOptions& options)
      : kernel_(std::move(kernel)), ast_(ast), args_(std::move(args)), options_(options) {}

  std::string kernel_;
  std::string_view ast_;  // a compile-time constant (Kernel::ast)
  std::vector<detail::ArgDesc> args_;
  LaunchOptions options_;
};

// Runs every compile on up to `threads` threads (0: one per hardware thread; 1: in order on the
// caller's thread) and returns when all have ended. Compiles of the same kernel and
// specialization run once (the others wait for it and share it). If any throws, the exception of
// the first in `compiles`' order to throw is rethrown after all have ended.
void compile_all(std::span<const PendingCompile> compiles, unsigned threads = 0);

template <class Fn>
class Kernel {
  static_assert(std::is_empty_v<Fn>, "tessera: a kernel lambda must not capture anything");

 public:
  Kernel(std::string name, Fn) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  // Runs the kernel over the grid of its output partitions and returns when it has finished
  // (after the work in flight on its tensors). Returns the outputs moved in, if any.
  template <class... Args>
    requires(!detail::leads_with_options<Args...>)
  detail::owned_result_t<Args...> launch(Args&&... args) const {
    return submit(LaunchOptions{}, true, nullptr, std::forward<Args>(args)...).get();
  }
  template <class... Args>
  detail::owned_result_t<Args...> launch(const LaunchOptions& options, Args&&... args) const {
    return submit(options, true, nullptr, std::forward<Args>(args)...).get();
  }
  template <class... Args>
  detail::owned_result_t<Args...> launch_on(Target target, Args&&... args) const {
    LaunchOptions options;
    options.target = target;
    return submit(options, true, nullptr, std::forward<Args>(args)...).get();
  }
  // Submits the kernel and returns at once; the handle waits for it (launch.h). The outputs are
  // borrowed exclusively (or owned, when moved in) and the inputs shared until it has finished.
  template <class... Args>
    requires(!detail::leads_with_options<Args...>)
  LaunchHandle<detail::owned_result_t<Args...>> launch_async(Args&&... args) const {
    return submit(LaunchOptions{}, false, nullptr, std::forward<Args>(args)...);
  }
  template <class... Args>
  LaunchHandle<detail::owned_result_t<Args...>> launch_async(const LaunchOptions& options, Args&&... args) const {
    return submit(options, false, nullptr, std::forward<Args>(args)...);
  }
  // Like launch_on, and returns how long the kernel ran in milliseconds: on a GPU measured with
  // events recorded around the kernel alone, on the CPU target by the host clock.
  template <class... Args>
  double launch_timed(Target target, Args&&... args) const {
    LaunchOptions options;
    options.target = target;
    return launch_timed(options, std::forward<Args>(args)...);
  }
  // The same with options, e.g. on a given stream (where earlier work can keep the GPU busy while
  // the host submits, so that the submission is not part of the time).
  template <class... Args>
  double launch_timed(const LaunchOptions& options, Args&&... args) const {
    static_assert(std::is_void_v<detail::owned_result_t<Args...>>,
                  "tessera: launch_timed takes borrowed outputs (t.partition<...>())");
    double ms = 0;
    submit(options, true, &ms, std::forward<Args>(args)...).get();
    return ms;
  }
  // Compiles for `target` without running (no GPU needed for sm_90 / sm_100a).
  template <class... Args>
  CompiledArtifact compile(Target target, Args&&... args) const {
    LaunchOptions options;
    options.target = target;
    return compile(options, std::forward<Args>(args)...);
  }
  // The same for a launch with `options` (its target, else default_target(), static_shapes and
  // whole_tiles): the code that launch would run.
  template <class... Args>
  CompiledArtifact compile(const LaunchOptions& options, Args&&... args) const {
    auto descs = make_args(args...);
    detail::LaunchRequest r{name_, ast<Args...>(), descs};
    r.options = &options;
    return detail::compile(r, options.target.value_or(default_target()));
  }
  // Compiles what a launch with `options` and these arguments would run, into the process's and
  // the disk's caches, without running it or making an artifact: a warm-up before timing, or
  // compiles spread over threads (tessera::autotune). On a GPU target with a GPU present, the code
  // is also loaded onto it, so that the driver's compile of PTX (sm_90a's tensor-core GEMMs) is
  // done here too, not at the first launch.
  template <class... Args>
  void prepare(const LaunchOptions& options, Args&&... args) const {
    auto descs = make_args(args...);
    detail::LaunchRequest r{name_, ast<Args...>(), descs};
    r.options = &options;
    detail::prepare(r, options.target.value_or(default_target()));
  }
  // prepare() of a launch with `options` and these arguments, described now and compiled later
  // (PendingCompile::compile, tessera::compile_all): the arguments need not outlive it.
  template <class... Args>
  PendingCompile pending_compile(const LaunchOptions& options, Args&&... args) const {
    auto descs = make_args(args...);
    return PendingCompile(name_, ast<Args...>(), std::vector<detail::ArgDesc>(descs.begin(), descs.end()), options);
  }
  // The kernel's serialized AST for these argument types: a compile-time constant.
  template <class... Args>
  static constexpr std::string_view ast() {
    return ast_impl<Args...>(std::index_sequence_for<Args...>{});
  }

 private:
  template <class... Args, std::size_t... I>
  static constexpr std::string_view ast_impl(std::index_sequence<I...>) {
    return detail::kernel_ast<Fn, typename detail::param_for<int(I), std::remove_cvref_t<Args>>::type...>::view();
  }
  template <class... Args>
  static std::array<detail::ArgDesc, sizeof...(Args)> make_args(const Args&... args) {
    return {detail::to_arg(args)...};
  }
  template <class... Args>
  LaunchHandle<detail::owned_result_t<Args...>> submit(const LaunchOptions& options, bool wait, double* ms,
                                                       Args&&... args) const {
    auto descs = make_args(args...);
    Target target = options.target ? *options.target : default_target();
    detail::CompletionPtr done = detail::submit({name_, ast<Args...>(), descs, ms, &options, wait}, target);
    if (wait) done.reset();  // finished (errors were thrown): the handle need not wait again
    using R = detail::owned_result_t<Args...>;
    if constexpr (std::is_void_v<R>) {
      return LaunchHandle<R>(std::move(done));
    } else {
      auto owned = std::tuple_cat(detail::owned_tuple(std::forward<Args>(args))...);
      if constexpr (std::tuple_size_v<decltype(owned)> == 1)
        return LaunchHandle<R>(std::move(done), std::move(std::get<0>(owned)));
      else
        return LaunchHandle<R>(std::move(done), std::move(owned));
    }
  }

  std::string name_;
};

// Defines a kernel named `name` (used in error messages, dumps and the cache) from a generic lambda.
template <class Fn>
Kernel<Fn> kernel(std::string name, Fn fn) {
  return Kernel<Fn>(std::move(name), fn);
}

}  // namespace tessera
