// autotune.h: a launch that chooses among kernels computing the same output with different tiles,
// by timing each on the launch's own tensors the first time it meets a problem.
//
//   auto mm = tessera::autotune("matmul",
//                               tessera::tile_option<128, 256>(matmul<128, 256, 64>()),
//                               tessera::tile_option<128, 128>(matmul<128, 128, 64>()));
//   tessera::TuningResult r = mm.launch(y, a, b, bias);  // y: the output, partitioned by the chosen
//                                                        // option's tile; a, b, bias: read-only
//
// Each option is a kernel, the tile its output is partitioned into and, optionally, the compiler's
// choices it fixes (CompilerHints: pipeline stages, the programs' grouped order, tileiras' hints)
// and the GPU back end it compiles with, so that a search covers those too:
//
//   tessera::tile_option<128, 256>(matmul<128, 256, 64>(), tessera::Backend::tileir)
//
// Every option's kernel takes the same arguments (the output first) and must compute the same
// values, and no two options may have the same kernel, hints and back end (the record names the
// options by them). An option whose back end cannot take the launch (tileiras not installed, or a
// kernel Tile IR cannot express) throws, and is skipped like any option that throws. Which option is fastest depends on the problem:
// the target, the GPU, the back end and each argument's dtype, shape, strides and view offset
// (scalars by dtype, not value). The first launch of a problem tunes:
//
//  - the output is copied aside (a tessera kernel, ordered like any launch);
//  - the options are compiled and loaded onto the GPU at once, each on a thread of its own (the
//    driver's compile of PTX included);
//  - each option is launched once (to warm the caches), then timed over up to kTuningRuns launches
//    or kTuningBudgetMs of kernel time (GPU events around the kernel; the host clock on the CPU
//    target), its time the median;
//  - an option that throws tessera::Error (a tile needing more shared memory than the GPU has) is
//    skipped; if every option throws, the launch throws, naming the tuner and each option's error;
//  - the output is restored from its copy (so a kernel that reads its output, y = y + a b, sees it
//    as the caller left it), and the fastest option runs as the launch.
//
// The choice is kept in the process and in the disk cache beside the cubins (metadata.json of the
// entry says what was chosen and each option's time), so a later process with the same problem and
// the same build of tessera launches the choice without tuning. With TESSERA_DUMP_DIR set, each
// tuning writes <name>.<target>.tuning.json there. TESSERA_AUTOTUNE=0 turns tuning off: launches
// take the first option and record nothing. Tuning runs kernels, so while a graph is being captured
// on this thread a problem not tuned yet takes the first option (launch once before capturing).
// A tuned launch is synchronous (it returns when the kernel has finished), like Kernel::launch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <future>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tessera/kernel.h"

namespace tessera {

// What a tuned launch ran, and why.
struct TuningResult {
  enum class Source {
    timed,   // this launch timed every option
    memory,  // an earlier launch of this process tuned the problem
    disk,    // the disk cache held the choice (another process, or this one before clear_tuning())
    off,     // no tuning (TESSERA_AUTOTUNE=0, or a graph capture): the first option
  };
  int index = 0;       // the option launched, in the order given to autotune()
  std::string kernel;  // its kernel's name
  // Each option's median time in milliseconds when the problem was tuned; a negative entry is an
  // option that threw. Empty for Source::off.
  std::vector<double> ms;
  Source source = Source::off;
};

// Launches of an autotuned kernel time this many runs per option at most...
inline constexpr int kTuningRuns = 10;
// ...and stop earlier once an option's runs have taken this much kernel time.
inline constexpr double kTuningBudgetMs = 100.0;

// Forgets the choices this process made or loaded (the disk cache keeps them): for tests.
void clear_tuning();

// A kernel, the tile its output is partitioned into for it, the compiler's choices it fixes
// (CompilerHints: its set fields replace the launch's) and the back end it compiles with (unset:
// the launch's).
template <class Fn, int... Tile>
struct TileOption {
  Kernel<Fn> kernel;
  CompilerHints hints;
  std::optional<Backend> backend;
};
template <int... Tile, class Fn>
TileOption<Fn, Tile...> tile_option(Kernel<Fn> kernel, CompilerHints hints = {}) {
  return {std::move(kernel), hints, std::nullopt};
}
template <int... Tile, class Fn>
TileOption<Fn, Tile...> tile_option(Kernel<Fn> kernel, Backend backend, CompilerHints hints = {}) {
  return {std::move(kernel), hints, backend};
}

namespace detail {

// One option as the tuning record names it.
struct TuningOptionDesc {
  std::string kernel;
  std::string_view ast;  // the option's AST for this launch's argument types
  std::string tile;      // "128x256"
  CompilerHints hints;
  std::optional<Backend> backend;
};

// `options` with the set fields of `hints` and `backend` in place of its own.
inline LaunchOptions with_choices(LaunchOptions options, const CompilerHints& hints, std::optional<Backend> backend) {
  if (hints.pipeline_stages) options.hints.pipeline_stages = hints.pipeline_stages;
  if (hints.group_rows) options.hints.group_rows = hints.group_rows;
  if (hints.occupancy) options.hints.occupancy = hints.occupancy;
  if (hints.cluster_programs) options.hints.cluster_programs = hints.cluster_programs;
  if (hints.tma) options.hints.tma = hints.tma;
  if (hints.stream_stages) options.hints.stream_stages = hints.stream_stages;
  if (hints.threads) options.hints.threads = hints.threads;
  if (hints.split_k) options.hints.split_k = hints.split_k;
  if (hints.early_frozen_steps) options.hints.early_frozen_steps = hints.early_frozen_steps;
  if (hints.bulk_streams) options.hints.bulk_streams = true;
  if (hints.ping_pong) options.hints.ping_pong = true;
  if (backend) options.backend = backend;
  return options;
}

// A launch's problem: what its choice depends on.
struct TuningProblem {
  std::string_view tuner;
  Target target = Target::cpu;
  Backend backend = Backend::nvvm;
  std::vector<TuningOptionDesc> options;
  std::vector<ArgDesc> args;  // the output first; its tile is not part of the problem
};

// Whether TESSERA_AUTOTUNE allows tuning (anything but "0").
bool autotune_enabled();
// Whether launches on this thread are being recorded into a graph.
bool capturing_graph();
// The choice made for `problem` in this process or stored in the disk cache (source memory or
// disk), or nullopt.
std::optional<TuningResult> find_tuning(const TuningProblem& problem);
// Keeps `result` for `problem` in this process and in the disk cache, and writes it to
// TESSERA_DUMP_DIR when that is set. Never throws for I/O errors.
void keep_tuning(const TuningProblem& problem, const TuningResult& result);
// The error of a tuned launch whose every option threw.
[[noreturn]] void fail_every_option(const TuningProblem& problem, const std::vector<std::string>& errors);

// out <- in, element by element, for tensors of one shape (the tuner's copy of its output).
inline auto tuning_copy_kernel() {
  return kernel("tessera_tuning_copy", [](auto out, auto in) { return out.store(in.load_like(out)); });
}
template <class T, int Rank, std::size_t... I>
void tuning_copy(Tensor<T, Rank>& to, const Tensor<T, Rank>& from, const LaunchOptions& options,
                 std::index_sequence<I...>) {
  tuning_copy_kernel().launch(options, to.template partition<(I + 1 < Rank ? 1 : 256)...>(), from);
}
template <class T, int Rank>
void tuning_copy(Tensor<T, Rank>& to, const Tensor<T, Rank>& from, const LaunchOptions& options) {
  tuning_copy(to, from, options, std::make_index_sequence<Rank>{});
}

template <int... Tile>
std::string tile_text() {
  std::string s;
  ((s += (s.empty() ? "" : "x") + std::to_string(Tile)), ...);
  return s;
}

}  // namespace detail

template <class... Options>
class Autotuned {
  static_assert(sizeof...(Options) >= 1, "tessera::autotune: give at least one option");

 public:
  Autotuned(std::string name, Options... options) : name_(std::move(name)), options_(std::move(options)...) {}
  const std::string& name() const { return name_; }

  // Launches the problem's choice (tuning it first if it has none): `out` is the output, passed
  // unpartitioned, the rest as the options' kernels take them. Returns what ran.
  template <class T, int Rank, class... Args>
  TuningResult launch(Tensor<T, Rank>& out, const Args&... args) const {
    return launch(LaunchOptions{}, out, args...);
  }
  template <class T, int Rank, class... Args>
  TuningResult launch(const LaunchOptions& options, Tensor<T, Rank>& out, const Args&... args) const {
    detail::TuningProblem problem = describe(options, out, args...);
    std::optional<TuningResult> known = detail::find_tuning(problem);
    if (!known && (!detail::autotune_enabled() || detail::capturing_graph()))
      known = TuningResult{0, problem.options[0].kernel, {}, TuningResult::Source::off};
    if (!known) {
      known = tune(options, problem, out, args...);
      detail::keep_tuning(problem, *known);
    }
    run(std::make_index_sequence<sizeof...(Options)>{}, known->index, options, out, args...);
    return *known;
  }

 private:
  template <class T, int Rank, class... Args>
  detail::TuningProblem describe(const LaunchOptions& options, Tensor<T, Rank>& out, const Args&... args) const {
    detail::TuningProblem p;
    p.tuner = name_;
    p.target = options.target.value_or(default_target());
    p.backend = options.backend.value_or(default_backend());
    std::apply(
        [&](const auto&... option) {
          (p.options.push_back(describe_option<T, Rank, Args...>(option)), ...);
        },
        options_);
    detail::ArgDesc o = detail::tensor_arg(detail::ArgDesc::Kind::out, out);
    p.args = {o, detail::to_arg(args)...};
    return p;
  }
  template <class T, int Rank, class... Args, class Fn, int... Tile>
  static detail::TuningOptionDesc describe_option(const TileOption<Fn, Tile...>& option) {
    static_assert(sizeof...(Tile) == Rank, "tessera::tile_option: the tile must have one size per output dimension");
    return {option.kernel.name(), Kernel<Fn>::template ast<Partition<T, Rank, Tile...>, Args...>(),
            detail::tile_text<Tile...>(), option.hints, option.backend};
  }

  // Times every option (see the file comment) with the output saved and restored around it.
  template <class T, int Rank, class... Args>
  TuningResult tune(const LaunchOptions& options, const detail::TuningProblem& problem, Tensor<T, Rank>& out,
                    const Args&... args) const {
    Tensor<T, Rank> saved(out.shape());
    detail::tuning_copy(saved, out, options);
    TuningResult result{0, "", std::vector<double>(sizeof...(Options), -1.0), TuningResult::Source::timed};
    std::vector<std::string> errors(sizeof...(Options));
    // The options compile at once, each on a thread of its own (compiles dominate a first launch);
    // an option that fails to compile fails again, and is recorded, when it is timed below.
    std::vector<std::future<void>> compiles;
    std::apply(
        [&](const auto&... option) { (compiles.push_back(std::async(std::launch::async, [&] { compile_option(option, options, out, args...); })), ...); },
        options_);
    for (std::future<void>& c : compiles) c.get();
    std::size_t i = 0;
    std::apply(
        [&](const auto&... option) {
          ((time_option(option, options, result.ms[i], errors[i], out, args...), ++i), ...);
        },
        options_);
    detail::tuning_copy(out, saved, options);
    for (std::size_t j = 0; j < result.ms.size(); ++j)
      if (result.ms[j] >= 0 && (result.ms[result.index] < 0 || result.ms[j] < result.ms[result.index]))
        result.index = static_cast<int>(j);
    if (result.ms[result.index] < 0) detail::fail_every_option(problem, errors);
    result.kernel = problem.options[result.index].kernel;
    return result;
  }
  template <class Fn, int... Tile, class T, int Rank, class... Args>
  static void compile_option(const TileOption<Fn, Tile...>& option, const LaunchOptions& options, Tensor<T, Rank>& out,
                             const Args&... args) noexcept {
    try {
      option.kernel.prepare(detail::with_choices(options, option.hints, option.backend), out.template partition<Tile...>(), args...);
    } catch (...) {
    }
  }
  template <class Fn, int... Tile, class T, int Rank, class... Args>
  static void time_option(const TileOption<Fn, Tile...>& option, const LaunchOptions& options, double& median_ms,
                          std::string& error, Tensor<T, Rank>& out, const Args&... args) {
    try {
      const LaunchOptions hinted = detail::with_choices(options, option.hints, option.backend);
      auto once = [&] { return option.kernel.launch_timed(hinted, out.template partition<Tile...>(), args...); };
      once();  // compiles, and warms the caches
      std::vector<double> ms;
      double total = 0;
      while (static_cast<int>(ms.size()) < kTuningRuns && total < kTuningBudgetMs) {
        ms.push_back(once());
        total += ms.back();
      }
      std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
      median_ms = ms[ms.size() / 2];
    } catch (const Error& e) {
      error = e.what();
    }
  }

  template <std::size_t... I, class T, int Rank, class... Args>
  void run(std::index_sequence<I...>, int index, const LaunchOptions& options, Tensor<T, Rank>& out,
           const Args&... args) const {
    ((static_cast<int>(I) == index ? launch_option(std::get<I>(options_), options, out, args...) : void()), ...);
  }
  template <class Fn, int... Tile, class T, int Rank, class... Args>
  static void launch_option(const TileOption<Fn, Tile...>& option, const LaunchOptions& options, Tensor<T, Rank>& out,
                            const Args&... args) {
    option.kernel.launch(detail::with_choices(options, option.hints, option.backend), out.template partition<Tile...>(), args...);
  }

  std::string name_;
  std::tuple<Options...> options_;
};

// An autotuned launch named `name` (the tuning record's name) over `options` (tile_option(...)).
template <class... Options>
Autotuned<Options...> autotune(std::string name, Options... options) {
  return Autotuned<Options...>(std::move(name), std::move(options)...);
}

}  // namespace tessera
