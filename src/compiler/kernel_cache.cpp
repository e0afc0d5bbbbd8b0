// kernel_cache.cpp: the process cache of compiled kernels (detail::lookup_or_compile, compile
// statistics). A launch's key is its kernel, AST, target and Specialization; concurrent first
// launches compile once (single flight, cache/single_flight.h), consulting the disk
// cache (cubin, PTX and launch record) under a per-key compile lock first. The whole-tiles check
// (whole_tiles.h) decides per launch between the kernel that tests its bounds and the variant for
// whole tiles. On GPU targets the back end (Backend) is part of every key; a tileir kernel's disk
// key also holds tileiras' version.
#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "cache/build_id.h"
#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "cache/single_flight.h"
#include "codegen/mlir_gen.h"
#include "compiler/kernels.h"
#include "compiler/launch_record.h"
#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "compiler/tileir.h"
#include "compiler/tileiras.h"
#include "compiler/variant_search.h"
#include "compiler/whole_tiles.h"
#include "driver/nvjitlink.h"
#include "driver/nvrtc.h"
#include "execution/threads.h"
#include "frontend/ast.h"
#include "frontend/ast_nodes.h"
#include "llvm/ADT/DenseSet.h"
#include "tessera/kernel.h"
#include "tessera/version.h"

namespace tessera {
namespace detail {
namespace {

using Kind = ArgDesc::Kind;

// Outputs the body stores (every program stores its whole tile) and outputs it reads back. Visits
// each node of the DAG once (`seen`).
void collect_output_uses(const Sexp& n, std::vector<bool>& stored, std::vector<bool>& read,
                         llvm::DenseSet<const Sexp*>& seen) {
  if (!seen.insert(&n).second) return;
  if (n.kind == NodeKind::store) stored[StoreNode(n).output()] = true;
  if (n.kind == NodeKind::own) read[OwnNode(n).output()] = true;
  for (const Sexp& c : subnodes(n)) collect_output_uses(c, stored, read, seen);
}

// Collects (input P, output Q) pairs from (load_like TYPE P Q PAD?) nodes, visiting each node once.
void collect_load_like(const Sexp& n, std::vector<std::pair<int64_t, int64_t>>& out, llvm::DenseSet<const Sexp*>& seen) {
  if (!seen.insert(&n).second) return;
  if (n.kind == NodeKind::load_like) out.emplace_back(LoadLikeNode(n).input(), LoadLikeNode(n).output());
  for (const Sexp& c : subnodes(n)) collect_load_like(c, out, seen);
}

// The process-wide cache of compiled kernels. Never destroyed: work in flight at exit may still
// run its code (the exit drain in execution/streams.cpp waits for it after the statics made
// later are gone).
class KernelCache {
 public:
  static KernelCache& get() {
    static KernelCache* cache = new KernelCache();
    return *cache;
  }

  // The compiled kernel a launch runs. Its cache key is the launch's Specialization
  // (specialization.h): its layouts, and its shapes for LaunchOptions::static_shapes. A key other
  // than static holds two variants: the kernel that tests its bounds per program, and the one for
  // whole tiles (compiled with Specialization::whole_tiles), which a launch runs where its
  // WholeTiles check holds and LaunchOptions::whole_tiles is on. The check, made from the AST when
  // the key is first met, is kept beside the variants: a launch takes the lock and looks up its key
  // once.
  std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& r, Target target) {
    const bool fixed = r.options && r.options->static_shapes;
    const bool whole_allowed = !fixed && !(r.options && !r.options->whole_tiles);
    Specialization spec;  // whole_tiles false: the fast key holds both variants
    specialize(r.args, target, fixed, spec);
    Backend backend = target == Target::cpu                ? Backend::nvvm
                      : r.options && r.options->backend ? *r.options->backend
                                                        : default_backend();
    const bool chosen = target != Target::cpu && r.options && r.options->backend;
    if (backend == Backend::tileir) {
      // Tile IR's tensor views assume positive strides: a broadcast (stride-0) view is not one.
      if (std::string why = tileir_unsupported_args(r.kernel, r.args); !why.empty()) {
        if (chosen) throw TileIrUnsupported(why);
        backend = Backend::nvvm;
      } else {
        add_tileir_facts(r.args, spec);
      }
    }
    if (r.options && !(r.options->hints == CompilerHints{})) {
      check_hints(r.kernel, r.options->hints);
      if (target != Target::cpu) spec.hints = r.options->hints;  // the CPU target has no use for them
      if (backend == Backend::nvvm) {  // tileiras' hints: the NVVM backend has no use for them
        spec.hints.cluster_programs = 0;
        spec.hints.tma.reset();
      }
      if (backend == Backend::nvvm && target != Target::cpu &&
          ((spec.hints.stream_stages >= 2 && spec.hints.bulk_streams) || spec.hints.early_frozen_steps > 0))
        spec.frozen = frozen_inputs(r.args);
    }
    // Fast path: the AST text of a Kernel<Fn> instantiation is a constant with a fixed address, so
    // (address, size, name, target, specialization) finds a compiled kernel without hashing the text.
    const FastKeyView fast{r.ast.data(), r.ast.size(), r.kernel, target, backend, &spec};
    std::shared_ptr<const WholeTiles> check;
    {
      std::lock_guard lock(mutex_);
      if (auto it = fast_.find(fast); it != fast_.end()) {
        const FastEntry& e = it->second;
        const bool whole = whole_allowed && whole_tiles_hold(e.check.get(), r.args);
        if (const std::shared_ptr<const Compiled>& c = e.variants[whole]) {
          stats_.memory_hits++;
          return checked(c, chosen, backend);
        }
        check = e.check;
      }
    }
    // The parse, the AST walks and the compile run on a stack of known size (kCompilerStackBytes);
    // the system refusing that thread fails the launch (tessera::Error).
    const std::string compiling = fmt::format("compiling kernel '{}'", r.kernel);
    if (!check && !fixed)
      run_with_stack(
          kCompilerStackBytes,
          [&] { check = std::make_shared<const WholeTiles>(parse_ast(r.kernel, r.ast)); }, compiling);
    const bool whole = whole_allowed && whole_tiles_hold(check.get(), r.args);
    Specialization variant = spec;
    variant.whole_tiles = whole;
    std::string key = fmt::format("{}\n{}\n{}\n{}\n{}", target_name(target), to_string(backend), r.kernel,
                                  variant.key_text(), r.ast);
    // A failed compile is not kept: a later launch tries again (e.g. after fixing the environment).
    bool found = false;
    std::shared_ptr<const Compiled> compiled = compiles_.get(
        key,
        [&] {
          std::shared_ptr<const Compiled> c;
          // A kernel Tile IR cannot express takes the NVVM backend unless the launch chose tileir.
          run_with_stack(
              kCompilerStackBytes,
              [&] {
                try {
                  c = compile(r.kernel, r.ast, variant, target, backend);
                } catch (const TileIrUnsupported& e) {
                  if (chosen) throw;
                  c = compile(r.kernel, r.ast, variant, target, Backend::nvvm, e.what());
                }
              },
              compiling);
          std::lock_guard lock(mutex_);
          FastEntry& e = fast_[FastKey{r.ast.data(), r.ast.size(), std::string(r.kernel), target, backend, spec}];
          if (!e.check) e.check = check;
          e.variants[whole] = c;
          return c;
        },
        &found);
    if (found) {
      std::lock_guard lock(mutex_);
      stats_.memory_hits++;
    }
    return checked(std::move(compiled), chosen, backend);
  }

  // `c`, unless the request chose a back end that did not compile it (a kernel Tile IR cannot
  // express, compiled by the NVVM backend for a launch that did not choose).
  static std::shared_ptr<const Compiled> checked(std::shared_ptr<const Compiled> c, bool chosen, Backend backend) {
    if (chosen && c->backend != backend) throw TileIrUnsupported(c->tileir_unsupported);
    return c;
  }

  CacheStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void clear() {
    compiles_.clear();
    std::lock_guard lock(mutex_);
    fast_.clear();
  }

 private:
  struct FastKeyView {
    const char* ast;
    std::size_t ast_size;
    std::string_view kernel;
    Target target;
    Backend backend;
    const Specialization* spec;
    bool operator==(const FastKeyView& o) const {
      return ast == o.ast && ast_size == o.ast_size && kernel == o.kernel && target == o.target &&
             backend == o.backend && *spec == *o.spec;
    }
  };
  struct FastKey {
    const char* ast;
    std::size_t ast_size;
    std::string kernel;
    Target target;
    Backend backend;
    Specialization spec;
    FastKeyView view() const { return {ast, ast_size, kernel, target, backend, &spec}; }
  };
  static FastKeyView view_of(const FastKeyView& k) { return k; }
  static FastKeyView view_of(const FastKey& k) { return k.view(); }
  struct FastHash {
    using is_transparent = void;
    template <class K>
    std::size_t operator()(const K& key) const {
      FastKeyView k = view_of(key);
      std::size_t h = std::hash<const void*>()(k.ast) ^ (k.ast_size * 0x9e3779b97f4a7c15ull);
      h ^= std::hash<std::string_view>()(k.kernel) + 0x9e3779b9 + (h << 6) + (h >> 2);
      h ^= k.spec->hash() + 0x9e3779b9 + (h << 6) + (h >> 2);
      return h ^ static_cast<std::size_t>(k.target) ^ (static_cast<std::size_t>(k.backend) << 8);
    }
  };
  struct FastEq {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return view_of(a) == view_of(b);
    }
  };
  // What a fast key holds: the kernel's whole-tiles check (null for static shapes) and the
  // variants compiled so far, [0] the one that tests its bounds (or the static one), [1] the one
  // for whole tiles.
  struct FastEntry {
    std::shared_ptr<const WholeTiles> check;
    std::array<std::shared_ptr<const Compiled>, 2> variants;
  };

  // Whether every tile of the launch is whole (`check` null: never), over the grid of its first
  // output (check_args rejects launches whose outputs disagree).
  static bool whole_tiles_hold(const WholeTiles* check, std::span<const ArgDesc> args) {
    if (!check) return false;
    auto out = std::find_if(args.begin(), args.end(), [](const ArgDesc& a) { return a.kind == Kind::out; });
    return out != args.end() && check->holds(args, partition_grid(*out).dims);
  }

  std::shared_ptr<const Compiled> compile(std::string_view kernel, std::string_view ast_text,
                                          const Specialization& spec, Target target, Backend backend,
                                          std::string tileir_unsupported = "") {
    auto c = std::make_shared<Compiled>();
    c->backend = backend;
    c->tileir_unsupported = std::move(tileir_unsupported);
    c->text = std::make_unique<std::string>(ast_text);
    c->ast = parse_ast(kernel, *c->text);
    c->spec = spec;
    c->code.label = std::make_shared<const std::string>(fmt::format("kernel '{}'", kernel));
    std::vector<bool> stored(c->ast.params.size()), read(c->ast.params.size());
    llvm::DenseSet<const Sexp*> seen;
    collect_load_like(*c->ast.body, c->load_likes, seen);
    seen.clear();
    collect_output_uses(*c->ast.body, stored, read, seen);
    c->code.params.resize(c->ast.params.size());
    for (std::size_t i = 0; i < c->code.params.size(); ++i) {
      c->code.params[i].overwritten = c->ast.params[i].kind == ParamInfo::Kind::out && stored[i] && !read[i];
      c->code.params[i].aligned =
          spec.layout(i) == ArgLayout::aligned || spec.layout(i) == ArgLayout::aligned_columns;
      c->code.params[i].frozen = spec.frozen_input(i);
    }
    if (target == Target::cpu) {
      c->cpu = compile_cpu(kernel, c->ast, c->spec);
      set_launch_code(*c);
      std::lock_guard lock(mutex_);
      stats_.compiles++;
      return c;
    }
    const std::string arch(target_name(target));
    c->code.target = gpu_arch(target);
    std::vector<DeviceFunctionUse> calls = device_functions(kernel, c->ast);
    c->code.linked = !calls.empty();
    bool uses_nvrtc = std::any_of(calls.begin(), calls.end(), [](const DeviceFunctionUse& f) { return !f.is_ptx; });
    // A tileir kernel's key names the back end and tileiras' version (beside the specialization, so
    // that the NVVM backend's keys stay as they were).
    const bool tileir = backend == Backend::tileir;
    const std::string tileiras = tileir ? require_tileiras(kernel, arch) : "";
    const std::string spec_key =
        tileir ? fmt::format("{}\nbackend tileir {}", spec.key_text(), tileiras_version(tileiras)) : spec.key_text();
    // self_build_id(): cubins of one build of the compiler are never served to another.
    const CacheKeyMaterial key{std::string(kernel), sha256_hex(ast_text), arch, spec_key,
                               TESSERA_VERSION_STRING, self_build_id(), llvm_version(), nvjitlink_version(),
                               uses_nvrtc ? nvrtc_version() : ""};
    // While TESSERA_DUMP_DIR is set, a kernel the disk cache holds is compiled all the same, so
    // that its stages are written; the new cubin then replaces the cached one. Otherwise a miss
    // takes the key's compile lock, held until the cubin is stored, so that of several processes
    // compiling the kernel at once one compiles and the others load its cubin.
    // An entry is the cubin, its PTX and its launch record (launch_record.h); one whose record does
    // not parse or names another target is recompiled.
    DiskCache disk(DiskCache::default_dir());
    std::optional<std::vector<char>> cubin, ptx;
    std::optional<LaunchRecord> record;
    int bad_records = 0;
    CompileLock compiling;
    auto load_entry = [&] {
      cubin = disk.load(key, "cubin");
      ptx = cubin ? disk.load(key, "ptx") : std::nullopt;
      std::optional<std::vector<char>> launch = ptx ? disk.load(key, "launch") : std::nullopt;
      record = launch ? parse_launch_record(std::string_view(launch->data(), launch->size())) : std::nullopt;
      if (launch && (!record || record->arch != arch)) {
        record.reset();
        ++bad_records;
      }
      return cubin && ptx && record;
    };
    if (dump_dir().empty() && !load_entry()) {
      compiling = disk.lock_for_compile(key);
      load_entry();
    }
    {
      std::lock_guard lock(mutex_);
      stats_.disk_corrupt += disk.stats().corrupt + bad_records;
    }
    if (cubin && ptx && record) {
      apply_launch_record(*record, c->gpu);
      c->gpu.symbol = kernel_symbol(kernel);
      c->gpu.ptx.assign(ptx->begin(), ptx->end());
      c->gpu.cubin = std::move(*cubin);
      c->from_disk_cache = true;
      set_launch_code(*c);
      std::lock_guard lock(mutex_);
      stats_.disk_hits++;
      return c;
    }
    c->gpu = tileir ? tileir_gpu_code(kernel, c->ast, c->spec, arch, tileiras)
                    : compile_gpu_code(kernel, c->ast, c->spec, calls, arch);
    const std::string launch = to_json(launch_record_of(c->gpu));
    disk.store(key, "launch", std::span<const char>(launch.data(), launch.size()));
    disk.store(key, "ptx", std::span<const char>(c->gpu.ptx.data(), c->gpu.ptx.size()));
    disk.store(key, "cubin", std::span<const char>(c->gpu.cubin.data(), c->gpu.cubin.size()));
    set_launch_code(*c);
    std::lock_guard lock(mutex_);
    stats_.compiles++;
    return c;
  }

  SingleFlight<std::shared_ptr<const Compiled>> compiles_;  // by full key
  std::mutex mutex_;  // fast_ and stats_
  std::unordered_map<FastKey, FastEntry, FastHash, FastEq> fast_;
  CacheStats stats_;
};

}  // namespace

std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& r, Target target) {
  return KernelCache::get().lookup_or_compile(r, target);
}

}  // namespace detail

CacheStats cache_stats() { return detail::KernelCache::get().stats(); }
void clear_memory_cache() { detail::KernelCache::get().clear(); }

}  // namespace tessera
