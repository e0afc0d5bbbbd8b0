// launcher.cpp: detail::launch and detail::compile, the library side of Kernel::launch/compile.
//
// A launch (1) checks the arguments against the kernel's AST (kinds, dtypes, ranks, shapes of
// tiles loaded "like" an output, grid agreement between outputs, aliasing of outputs with anything
// else, borrows already held), (2) finds the compiled kernel in the process cache (single flight:
// concurrent first launches compile once) or compiles it, consulting the disk cache for cubins,
// and (3) runs the grid and returns when every program has finished; the borrows it took are
// released then. Everything here is plain C++: MLIR and LLVM stay behind pipeline.h.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <atomic>
#include <cstdlib>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cache_key.h"
#include "codegen/mlir_gen.h"
#include "compiler/pipeline.h"
#include "cuda_driver.h"
#include "device_memory.h"
#include "disk_cache.h"
#include "frontend/ast.h"
#include "nvjitlink.h"
#include "tessera/kernel.h"
#include "tessera/version.h"

namespace tessera {
namespace detail {
namespace {

using Kind = ArgDesc::Kind;

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::out: return "output";
    case Kind::in: return "input";
    case Kind::scalar: return "scalar";
  }
  return "?";
}
std::string_view kind_name(ParamInfo::Kind k) {
  switch (k) {
    case ParamInfo::Kind::out: return "output";
    case ParamInfo::Kind::in: return "input";
    case ParamInfo::Kind::scalar: return "scalar";
  }
  return "?";
}
std::string shape_str(const ArgDesc& a) {
  return fmt::format("[{}]", fmt::join(a.shape.begin(), a.shape.begin() + a.rank, " "));
}

std::string target_str(Target t) {
  switch (t) {
    case Target::cpu: return "cpu";
    case Target::sm_90: return "sm_90";
    case Target::sm_100a: return "sm_100a";
  }
  return "?";
}

// Writes the cubin next to the other stages when TESSERA_DUMP_DIR is set (see pipeline.h).
void dump_cubin(const GpuCode& code) {
  const char* dir = std::getenv("TESSERA_DUMP_DIR");
  if (!dir || !*dir) return;
  std::string path = fmt::format("{}/{}.{}.cubin", dir, code.symbol, code.arch);
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(code.cubin.data(), 1, code.cubin.size(), f);
    std::fclose(f);
  }
}

// Everything compiled for one (kernel, AST, target).
struct Compiled {
  KernelAst ast;                      // parsed once; views into `text`
  std::unique_ptr<std::string> text;  // owns the AST text the views point into
  std::unique_ptr<CpuKernel> cpu;
  GpuCode gpu;
  bool from_disk_cache = false;
  mutable LoadedKernel loaded;  // the cubin in the GPU's context, loaded at the first GPU launch
};

// The process-wide cache of compiled kernels (the one explicit global of the library).
class KernelCache {
 public:
  static KernelCache& get() {
    static KernelCache cache;
    return cache;
  }

  std::shared_ptr<const Compiled> lookup_or_compile(std::string_view kernel, std::string_view ast,
                                                    const std::string& layouts, Target target) {
    std::string key = fmt::format("{}\n{}\n{}\n{}", target_str(target), kernel, layouts, ast);
    std::shared_future<std::shared_ptr<const Compiled>> future;
    std::promise<std::shared_ptr<const Compiled>> promise;
    bool owner = false;
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        future = it->second;
        stats_.memory_hits++;
      } else {
        future = promise.get_future().share();
        entries_.emplace(key, future);
        owner = true;
      }
    }
    if (!owner) return future.get();  // rethrows the compile error, if any
    try {
      auto compiled = compile(kernel, ast, layouts, target);
      promise.set_value(compiled);
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard lock(mutex_);
      entries_.erase(key);  // a later launch may try again (e.g. after fixing the environment)
    }
    return future.get();
  }

  CacheStats stats() {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  void clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
  }

 private:
  std::shared_ptr<const Compiled> compile(std::string_view kernel, std::string_view ast_text,
                                          const std::string& layouts, Target target) {
    auto c = std::make_shared<Compiled>();
    c->text = std::make_unique<std::string>(ast_text);
    c->ast = parse_ast(kernel, *c->text);
    c->ast.layouts = layouts;
    if (target == Target::cpu) {
      c->cpu = compile_cpu(kernel, c->ast);
      std::lock_guard lock(mutex_);
      stats_.compiles++;
      return c;
    }
    std::string arch = target_str(target);
    std::string key = make_cache_key({"tessera", TESSERA_VERSION_STRING, "llvm", llvm_version(), "nvjitlink",
                                      nvjitlink_version(), arch, kernel, layouts, ast_text});
    DiskCache disk(DiskCache::default_dir());
    auto cubin = disk.load(key, "cubin");
    auto ptx = cubin ? disk.load(key, "ptx") : std::nullopt;
    {
      std::lock_guard lock(mutex_);
      stats_.disk_corrupt += disk.stats().corrupt;
    }
    if (cubin && ptx) {
      c->gpu.arch = arch;
      c->gpu.symbol = kernel_symbol(kernel);
      c->gpu.block_size = kGpuBlockSize;
      c->gpu.ptx.assign(ptx->begin(), ptx->end());
      c->gpu.cubin = std::move(*cubin);
      c->from_disk_cache = true;
      std::lock_guard lock(mutex_);
      stats_.disk_hits++;
      return c;
    }
    c->gpu = compile_ptx(kernel, c->ast, arch);
    auto t0 = std::chrono::steady_clock::now();
    CubinResult linked = ptx_to_cubin(c->gpu.ptx, arch);
    c->gpu.cubin = std::move(linked.cubin);
    c->gpu.stage_ms.emplace_back("cubin",
                                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    dump_cubin(c->gpu);
    disk.store(key, "ptx", std::span<const char>(c->gpu.ptx.data(), c->gpu.ptx.size()));
    disk.store(key, "cubin", std::span<const char>(c->gpu.cubin.data(), c->gpu.cubin.size()));
    std::lock_guard lock(mutex_);
    stats_.compiles++;
    return c;
  }

  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const Compiled>>> entries_;
  CacheStats stats_;
};

[[noreturn]] void fail(std::string_view kernel, const std::string& what) {
  throw Error(fmt::format("tessera: kernel '{}': {}", kernel, what));
}

// The layout letter of each argument (see KernelAst::layouts). Device and host allocations are
// at least 64-byte aligned and tensors start at their allocation.
std::string layouts_of(std::span<const ArgDesc> args) {
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
    bool aligned = reinterpret_cast<uintptr_t>(a.data) % 16 == 0;
    for (int d = 0; d + 1 < a.rank; ++d) aligned = aligned && (a.strides[d] * dtype_size(a.dtype)) % 16 == 0;
    s += aligned ? 'a' : 'c';
  }
  return s;
}

// Collects (input P, output Q) pairs from (load_like TYPE P Q) nodes.
void collect_load_like(const Sexp& n, std::vector<std::pair<int64_t, int64_t>>& out) {
  if (!n.is_list) return;
  if (n.head() == "load_like" && n.items.size() == 5) out.emplace_back(n[3].as_int(), n[4].as_int());
  for (const Sexp& c : n.items) collect_load_like(c, out);
}

struct Grid {
  std::array<int64_t, 3> dims{1, 1, 1};
  int64_t count() const { return dims[0] * dims[1] * dims[2]; }
};

// Checks the arguments against the kernel; returns the launch grid.
Grid check_args(std::string_view kernel, const KernelAst& ast, std::span<const ArgDesc> args) {
  if (args.size() != ast.params.size())
    fail(kernel, fmt::format("expected {} arguments, got {}", ast.params.size(), args.size()));
  Grid grid;
  int first_out = -1;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    const ParamInfo& p = ast.params[i];
    if (kind_name(a.kind) != kind_name(p.kind) || a.dtype != p.dtype ||
        (a.kind != Kind::scalar && a.rank != p.rank))
      fail(kernel, fmt::format("parameter {}: expected {} {} of rank {}, got {} {} of rank {}", i, kind_name(p.kind),
                               dtype_name(p.dtype), p.rank, kind_name(a.kind), dtype_name(a.dtype), a.rank));
    if (a.kind != Kind::out) continue;
    if (a.rank > 3) fail(kernel, fmt::format("parameter {}: outputs have rank 1 to 3 (one grid axis per dim)", i));
    Grid g;
    for (int d = 0; d < a.rank; ++d) {
      if (a.tile[d] <= 0) fail(kernel, fmt::format("parameter {}: tile sizes must be positive", i));
      g.dims[d] = (a.shape[d] + a.tile[d] - 1) / a.tile[d];
    }
    if (first_out < 0) {
      first_out = static_cast<int>(i);
      grid = g;
    } else if (g.dims != grid.dims) {
      fail(kernel, fmt::format("output parameter {} has grid [{}] but output parameter {} has grid [{}]; all outputs "
                               "of a launch must have the same grid",
                               i, fmt::join(g.dims, " "), first_out, fmt::join(grid.dims, " ")));
    }
  }
  if (first_out < 0) fail(kernel, "a kernel needs at least one output partition");
  // Outputs are exclusive: no other argument may name the same memory.
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind != Kind::out) continue;
    for (std::size_t j = 0; j < args.size(); ++j) {
      if (j == i || args[j].kind == Kind::scalar || args[j].storage != args[i].storage) continue;
      fail(kernel, fmt::format("output parameter {} aliases {} parameter {}: an output must not be passed twice or "
                               "also read as an input",
                               i, kind_name(args[j].kind), j));
    }
  }
  std::vector<std::pair<int64_t, int64_t>> likes;
  collect_load_like(*ast.body, likes);
  for (auto [p, q] : likes) {
    const ArgDesc& in = args[p];
    const ArgDesc& out = args[q];
    if (in.rank != out.rank || !std::equal(in.shape.begin(), in.shape.begin() + in.rank, out.shape.begin()))
      fail(kernel, fmt::format("input parameter {} has shape {} but is loaded like output parameter {} of shape {}; "
                               "they must have the same shape",
                               p, shape_str(in), q, shape_str(out)));
  }
  return grid;
}

// Holds the launch's borrows: outputs exclusively, inputs shared. Released on destruction.
class Borrows {
 public:
  Borrows(std::string_view kernel, std::span<const ArgDesc> args) {
    try {
      for (std::size_t i = 0; i < args.size(); ++i) {
        const ArgDesc& a = args[i];
        if (a.kind == Kind::scalar) continue;
        Storage& s = *a.storage;
        if (a.kind == Kind::out) {
          int expected = 0;
          if (s.readers.load() != 0 || !s.writers.compare_exchange_strong(expected, 1))
            fail(kernel, fmt::format("output parameter {} is in use by another launch in flight", i));
          taken_.push_back({&s, true});
        } else {
          s.readers.fetch_add(1);
          if (s.writers.load() != 0) {
            s.readers.fetch_sub(1);
            fail(kernel, fmt::format("input parameter {} is being written by another launch in flight", i));
          }
          taken_.push_back({&s, false});
        }
      }
    } catch (...) {
      release();
      throw;
    }
  }
  ~Borrows() { release(); }

 private:
  void release() {
    for (auto [s, write] : taken_) (write ? s->writers : s->readers).fetch_sub(1);
    taken_.clear();
  }
  std::vector<std::pair<Storage*, bool>> taken_;
};

// The flattened parameter list of a lowered kernel: per tensor (allocated ptr, aligned ptr,
// offset, sizes[rank], strides[rank]) as MLIR's memref descriptor; per scalar its value.
// `pointers` (if given) replaces each tensor's host pointer, e.g. by its device address.
std::vector<int64_t> flatten_args(std::span<const ArgDesc> args, std::span<const int64_t> pointers = {}) {
  std::vector<int64_t> slots;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const ArgDesc& a = args[i];
    if (a.kind == Kind::scalar) {
      int64_t v = 0;
      std::memcpy(&v, a.scalar.data(), sizeof(v));
      slots.push_back(v);
      continue;
    }
    int64_t p = pointers.empty() ? reinterpret_cast<int64_t>(a.data) : pointers[i];
    slots.push_back(p);
    slots.push_back(p);
    slots.push_back(0);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.shape[d]);
    for (int d = 0; d < a.rank; ++d) slots.push_back(a.strides[d]);
  }
  return slots;
}

void run_cpu(const CpuKernel& k, std::span<const ArgDesc> args, const Grid& grid) {
  // Make the host copies current (a GPU launch may have written them last).
  for (const ArgDesc& a : args) {
    if (a.kind == Kind::out) a.storage->host_for_write();
    if (a.kind == Kind::in) a.storage->host_for_read();
  }
  const std::vector<int64_t> base = flatten_args(args);
  const int64_t programs = grid.count();
  if (programs == 0) return;
  unsigned workers = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), 16));
  if (programs < 64) workers = 1;
  auto work = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> slots = base;
    std::array<int32_t, 6> ids{0, 0, 0, static_cast<int32_t>(grid.dims[0]), static_cast<int32_t>(grid.dims[1]),
                               static_cast<int32_t>(grid.dims[2])};
    std::vector<void*> argv;
    for (auto& s : slots) argv.push_back(&s);
    for (auto& id : ids) argv.push_back(&id);
    for (int64_t p = begin; p < end; ++p) {
      ids[0] = static_cast<int32_t>(p % grid.dims[0]);
      ids[1] = static_cast<int32_t>((p / grid.dims[0]) % grid.dims[1]);
      ids[2] = static_cast<int32_t>(p / (grid.dims[0] * grid.dims[1]));
      k.run(argv.data());
    }
  };
  if (workers == 1) return work(0, programs);
  std::vector<std::thread> threads;
  int64_t chunk = (programs + workers - 1) / workers;
  for (unsigned w = 0; w < workers; ++w) {
    int64_t b = w * chunk, e = std::min(programs, b + chunk);
    if (b < e) threads.emplace_back(work, b, e);
  }
  for (auto& t : threads) t.join();
}

void run_gpu(std::string_view kernel, const Compiled& c, std::span<const ArgDesc> args, const Grid& grid,
             double* elapsed_ms) {
  CudaDriver* driver = CudaDriver::get_if_available();
  if (!driver)
    fail(kernel, fmt::format("cannot run on {}: no usable GPU ({}); use TESSERA_TARGET=cpu",
                             c.gpu.arch, CudaDriver::unavailable_reason()));
  if (driver->arch() != c.gpu.arch)
    fail(kernel, fmt::format("compiled for {} but the GPU is {}", c.gpu.arch, driver->arch()));
  if (grid.count() == 0) return;
  std::vector<int64_t> device_ptrs(args.size(), 0);
  for (std::size_t i = 0; i < args.size(); ++i)
    if (args[i].kind != Kind::scalar)
      device_ptrs[i] = static_cast<int64_t>(ensure_on_device(*driver, *args[i].storage));
  std::vector<int64_t> slots = flatten_args(args, device_ptrs);
  std::vector<void*> params;
  for (auto& s : slots) params.push_back(&s);
  CUfunction fn = c.loaded.function(*driver, c.gpu.cubin, c.gpu.symbol);
  launch_and_wait(*driver, kernel, fn, grid.dims, c.gpu.block_size, params.data(), elapsed_ms);
  for (const ArgDesc& a : args)
    if (a.kind == Kind::out) mark_written_on_device(*a.storage);
}

}  // namespace

void launch(const LaunchRequest& r, Target target) {
  auto compiled = KernelCache::get().lookup_or_compile(r.kernel, r.ast, layouts_of(r.args), target);
  Grid grid = check_args(r.kernel, compiled->ast, r.args);
  Borrows borrows(r.kernel, r.args);
  if (target == Target::cpu) {
    auto t0 = std::chrono::steady_clock::now();
    run_cpu(*compiled->cpu, r.args, grid);
    if (r.elapsed_ms)
      *r.elapsed_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return;
  }
  run_gpu(r.kernel, *compiled, r.args, grid, r.elapsed_ms);
}

CompiledArtifact compile(const LaunchRequest& r, Target target) {
  auto compiled = KernelCache::get().lookup_or_compile(r.kernel, r.ast, layouts_of(r.args), target);
  check_args(r.kernel, compiled->ast, r.args);
  CompiledArtifact a;
  a.target = target_str(target);
  a.ptx = compiled->gpu.ptx;
  a.cubin = compiled->gpu.cubin;
  a.from_disk_cache = compiled->from_disk_cache;
  a.stage_ms = compiled->gpu.stage_ms;
  return a;
}

}  // namespace detail

CacheStats cache_stats() { return detail::KernelCache::get().stats(); }
void clear_memory_cache() { detail::KernelCache::get().clear(); }

Target default_target() {
  if (const char* t = std::getenv("TESSERA_TARGET"); t && *t) {
    std::string_view s(t);
    if (s == "cpu") return Target::cpu;
    if (s == "sm_90") return Target::sm_90;
    if (s == "sm_100a") return Target::sm_100a;
    throw Error(fmt::format("tessera: TESSERA_TARGET='{}' is not one of cpu, sm_90, sm_100a", s));
  }
  return gpu_available() ? Target::sm_90 : Target::cpu;
}

}  // namespace tessera
