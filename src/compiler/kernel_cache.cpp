// kernel_cache.cpp: the process cache of compiled kernels (detail::lookup_or_compile, compile
// statistics). A launch's key is its kernel, AST, layout letters and target; concurrent first
// launches compile once (single flight, cache/single_flight.h), consulting the disk
// cache (cubin, PTX and launch record) under a per-key compile lock first. The whole-tiles check
// (whole_tiles.h) decides per launch between the kernel that tests its bounds and the variant for
// whole tiles.
#include <fmt/format.h>
#include <fmt/ranges.h>

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
#include "compiler/variant_search.h"
#include "compiler/whole_tiles.h"
#include "driver/nvjitlink.h"
#include "driver/nvrtc.h"
#include "execution/threads.h"
#include "frontend/ast.h"
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
  if (!n.is_list || !seen.insert(&n).second) return;
  auto mark = [](std::vector<bool>& v, int64_t p) {
    if (p >= 0 && p < static_cast<int64_t>(v.size())) v[p] = true;
  };
  if (n.head() == "store" && n.items.size() == 3) mark(stored, n[1].as_int());
  // (own DTYPE [DIMS] Q PAD?): the output index follows the tile type (docs/ast-format.md).
  if (n.head() == "own" && unpadded_size(n) == 4) mark(read, n[3].as_int());
  for (const Sexp& c : n.children()) collect_output_uses(c, stored, read, seen);
}

// The layout letter of each argument (see KernelAst::layouts). Our device and host allocations
// are at least 64-byte aligned; a view's offset into its storage and foreign device memory are
// checked (the latter on GPU targets).
std::string layouts_of(std::span<const ArgDesc> args, Target target) {
  std::string s;
  for (const ArgDesc& a : args) {
    if (a.kind == Kind::scalar) {
      s += '-';
      continue;
    }
    if (a.strides[a.rank - 1] != 1) {
      s += 's';
      continue;
    }
    bool aligned = (a.offset * dtype_size(a.dtype)) % 16 == 0;
    if (is_gpu(target) && a.storage->foreign_device())
      aligned = aligned && a.storage->mirror->address() % 16 == 0;
    for (int d = 0; d + 1 < a.rank; ++d) aligned = aligned && (a.strides[d] * dtype_size(a.dtype)) % 16 == 0;
    s += aligned ? 'a' : 'c';
  }
  return s;
}

// "|" and the text of the arguments' shapes (see parse_static_shapes), appended to their layout
// letters in the cache key of a launch with LaunchOptions::static_shapes. The grid is that of the
// first output (check_args rejects launches whose outputs disagree).
std::string static_shapes_of(std::span<const ArgDesc> args) {
  std::string s = "|";
  const ArgDesc* first_out = nullptr;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (i) s += ';';
    if (a.kind == Kind::scalar) {
      s += '-';
      continue;
    }
    const auto rank = static_cast<std::size_t>(a.rank);
    s += fmt::format("{}:{}:{}", a.offset, fmt::join(a.shape.begin(), a.shape.begin() + rank, "x"),
                     fmt::join(a.strides.begin(), a.strides.begin() + rank, "x"));
    if (a.kind == Kind::out && !first_out) first_out = &a;
  }
  // tile.grid counts at least one program per axis (an empty launch runs none anyway).
  std::array<int64_t, 3> grid = first_out ? partition_grid(*first_out).dims : std::array<int64_t, 3>{1, 1, 1};
  for (int64_t& g : grid) g = std::max<int64_t>(g, 1);
  return s + fmt::format("@{}", fmt::join(grid, ","));
}

// Collects (input P, output Q) pairs from (load_like TYPE P Q PAD?) nodes, visiting each node once.
void collect_load_like(const Sexp& n, std::vector<std::pair<int64_t, int64_t>>& out, llvm::DenseSet<const Sexp*>& seen) {
  if (!n.is_list || !seen.insert(&n).second) return;
  if (n.head() == "load_like" && unpadded_size(n) == 5) out.emplace_back(n[3].as_int(), n[4].as_int());
  for (const Sexp& c : n.children()) collect_load_like(c, out, seen);
}

// Appended to the layout letters in the cache key of a launch whose tiles are all whole
// (LaunchOptions::whole_tiles): the kernel is compiled with tile.whole_tiles.
constexpr std::string_view kWholeTilesMark = "/whole";

// The process-wide cache of compiled kernels. Never destroyed: work in flight at exit may still
// run its code (the exit drain in execution/streams.cpp waits for it after the statics made
// later are gone).
class KernelCache {
 public:
  static KernelCache& get() {
    static KernelCache* cache = new KernelCache();
    return *cache;
  }

  // The compiled kernel a launch runs. Its cache key is the launch's layout letters, then "|" and
  // its shapes for LaunchOptions::static_shapes. A key other than static holds two variants: the
  // kernel that tests its bounds per program, and the one for whole tiles (compiled with
  // kWholeTilesMark appended to the key), which a launch runs where its WholeTiles check holds and
  // LaunchOptions::whole_tiles is on. The check, made from the AST when the key is first met, is
  // kept beside the variants: a launch takes the lock and looks up its key once.
  std::shared_ptr<const Compiled> lookup_or_compile(const LaunchRequest& r, Target target) {
    const bool fixed = r.options && r.options->static_shapes;
    const bool whole_allowed = !fixed && !(r.options && !r.options->whole_tiles);
    std::string layouts = layouts_of(r.args, target);
    if (fixed) layouts += static_shapes_of(r.args);
    // Fast path: the AST text of a Kernel<Fn> instantiation is a constant with a fixed address, so
    // (address, size, name, layouts, target) finds a compiled kernel without hashing the text.
    const FastKeyView fast{r.ast.data(), r.ast.size(), r.kernel, layouts, target};
    std::shared_ptr<const WholeTiles> check;
    {
      std::lock_guard lock(mutex_);
      if (auto it = fast_.find(fast); it != fast_.end()) {
        const FastEntry& e = it->second;
        const bool whole = whole_allowed && whole_tiles_hold(e.check.get(), r.args);
        if (const std::shared_ptr<const Compiled>& c = e.variants[whole]) {
          stats_.memory_hits++;
          return c;
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
          [&] { check = std::make_shared<const WholeTiles>(r.kernel, parse_ast(r.kernel, r.ast)); }, compiling);
    const bool whole = whole_allowed && whole_tiles_hold(check.get(), r.args);
    const std::string variant = whole ? layouts + std::string(kWholeTilesMark) : layouts;
    std::string key = fmt::format("{}\n{}\n{}\n{}", target_name(target), r.kernel, variant, r.ast);
    // A failed compile is not kept: a later launch tries again (e.g. after fixing the environment).
    bool found = false;
    std::shared_ptr<const Compiled> compiled = compiles_.get(
        key,
        [&] {
          std::shared_ptr<const Compiled> c;
          run_with_stack(kCompilerStackBytes, [&] { c = compile(r.kernel, r.ast, variant, target); }, compiling);
          std::lock_guard lock(mutex_);
          FastEntry& e = fast_[FastKey{r.ast.data(), r.ast.size(), std::string(r.kernel), layouts, target}];
          if (!e.check) e.check = check;
          e.variants[whole] = c;
          return c;
        },
        &found);
    if (found) {
      std::lock_guard lock(mutex_);
      stats_.memory_hits++;
    }
    return compiled;
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
    std::string_view layouts;
    Target target;
    bool operator==(const FastKeyView&) const = default;
  };
  struct FastKey {
    const char* ast;
    std::size_t ast_size;
    std::string kernel;
    std::string layouts;
    Target target;
    FastKeyView view() const { return {ast, ast_size, kernel, layouts, target}; }
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
      h ^= std::hash<std::string_view>()(k.layouts) + 0x9e3779b9 + (h << 6) + (h >> 2);
      return h ^ static_cast<std::size_t>(k.target);
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
                                          const std::string& layouts, Target target) {
    auto c = std::make_shared<Compiled>();
    c->text = std::make_unique<std::string>(ast_text);
    c->ast = parse_ast(kernel, *c->text);
    // The layout letters, then "|" and the launch's shapes for LaunchOptions::static_shapes, or
    // kWholeTilesMark for a launch whose tiles are all whole.
    std::string_view letters = layouts;
    if (letters.ends_with(kWholeTilesMark)) {
      letters.remove_suffix(kWholeTilesMark.size());
      c->ast.whole_tiles = true;
    }
    std::size_t bar = letters.find('|');
    c->ast.layouts = std::string(letters.substr(0, bar));
    if (bar != std::string_view::npos) parse_static_shapes(kernel, letters.substr(bar + 1), c->ast);
    c->code.label = std::make_shared<const std::string>(fmt::format("kernel '{}'", kernel));
    std::vector<bool> stored(c->ast.params.size()), read(c->ast.params.size());
    naming_kernel(kernel, [&] {
      llvm::DenseSet<const Sexp*> seen;
      collect_load_like(*c->ast.body, c->load_likes, seen);
      seen.clear();
      collect_output_uses(*c->ast.body, stored, read, seen);
    });
    c->overwrites.resize(c->ast.params.size());
    for (std::size_t i = 0; i < c->overwrites.size(); ++i)
      c->overwrites[i] = c->ast.params[i].kind == ParamInfo::Kind::out && stored[i] && !read[i];
    if (target == Target::cpu) {
      c->cpu = compile_cpu(kernel, c->ast);
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
    // self_build_id(): cubins of one build of the compiler are never served to another.
    const CacheKeyMaterial key{std::string(kernel), sha256_hex(ast_text), arch, layouts, TESSERA_VERSION_STRING,
                               self_build_id(), llvm_version(), nvjitlink_version(),
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
    c->gpu = compile_gpu_code(kernel, c->ast, calls, arch);
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
