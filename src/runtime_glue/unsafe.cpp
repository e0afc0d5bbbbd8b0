// unsafe.cpp: unsafe CUDA C++ / PTX kernels (include/tessera/unsafe.h). CUDA C++ goes through
// NVRTC to PTX (relocatable when device code is linked in), everything through nvJitLink to a
// cubin; the result is cached in the process (single flight) and on disk (compiled once among
// processes too, under the key's compile lock), keyed by every input and the toolchain versions.
// A launch takes the borrows of its tessera tensors like any other (submit_work) and passes one
// 8-byte parameter per argument.
#include <fmt/format.h>

#include <chrono>
#include <future>
#include <unordered_map>

#include "cache_key.h"
#include "compiler/kernels.h"
#include "device_link.h"
#include "disk_cache.h"
#include "execution.h"
#include "graph_capture.h"
#include "nvjitlink.h"
#include "cuda_compiler.h"
#include "gpu_arch.h"
#include "tessera/version.h"
#include "unsafe_kernels.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

std::string arch_of(const UnsafeKernelSpec& spec, Target target) {
  if (!is_gpu(target))
    throw Error(fmt::format("tessera: unsafe kernel '{}' runs on GPUs only (target {})", spec.name,
                            target_name(target)));
  return std::string(target_name(target));
}

// What the kernel's cubin depends on. No build ID or LLVM version: tessera's own compiler plays
// no part in it.
CacheKeyMaterial material_of(const UnsafeKernelSpec& spec, const std::string& arch) {
  CacheKeyBuilder source;
  source.add(spec.is_ptx ? "ptx" : "cuda").add(spec.source);
  bool needs_nvrtc = !spec.is_ptx;
  for (const auto& d : spec.link) needs_nvrtc = needs_nvrtc || d.kind == unsafe::DeviceCode::Kind::cuda;
  source.add(static_cast<std::int64_t>(spec.options.size()));
  for (const auto& o : spec.options) source.add(o);
  source.add(static_cast<std::int64_t>(spec.link.size()));
  for (const auto& d : spec.link) source.add(d.kind == unsafe::DeviceCode::Kind::ptx ? "ptx" : "cuda").add(d.text);
  return {spec.name, source.hex(), arch, "unsafe", TESSERA_VERSION_STRING, "", "", nvjitlink_version(),
          needs_nvrtc ? nvrtc_version() : ""};
}

std::shared_ptr<const UnsafeCompiled> compile(const UnsafeKernelSpec& spec, const std::string& arch,
                                              const CacheKeyMaterial& key) {
  auto c = std::make_shared<UnsafeCompiled>();
  c->arch = arch;
  c->target = gpu_arch(arch);
  c->linked = !spec.link.empty();
  c->label = std::make_shared<const std::string>(fmt::format("unsafe kernel '{}'", spec.name));
  DiskCache disk(DiskCache::default_dir());
  std::optional<std::vector<char>> cubin, ptx, symbol;
  auto load_entry = [&] {
    cubin = disk.load(key, "cubin");
    ptx = cubin ? disk.load(key, "ptx") : std::nullopt;
    symbol = ptx ? disk.load(key, "symbol") : std::nullopt;
    return cubin && ptx && symbol;
  };
  CompileLock compiling;  // held until stored: concurrent processes compile the kernel once
  if (!load_entry()) {
    compiling = disk.lock_for_compile(key);
    load_entry();
  }
  if (cubin && ptx && symbol) {
    c->cubin = std::move(*cubin);
    c->ptx.assign(ptx->begin(), ptx->end());
    c->symbol.assign(symbol->begin(), symbol->end());
    c->from_disk_cache = true;
    return c;
  }
  const bool relocatable = !spec.link.empty();
  if (spec.is_ptx) {
    c->ptx = spec.source;
    c->symbol = spec.name;
  } else {
    std::vector<std::string> options = spec.options;
    if (relocatable) options.push_back("-rdc=true");
    std::vector<std::string> names{spec.name};
    NvrtcResult r = cuda_to_ptx(spec.source, spec.name, arch, names, options);
    c->ptx = std::move(r.ptx);
    c->symbol = r.lowered_names.at(0);
  }
  if (relocatable) {
    std::vector<DeviceCodeInput> code;
    for (const auto& d : spec.link) code.push_back({d.kind == unsafe::DeviceCode::Kind::ptx, d.text, d.name});
    try {
      c->cubin = link_device_code(c->ptx, spec.name, code, arch, spec.options);
    } catch (const Error& e) {
      throw Error(fmt::format("tessera: unsafe kernel '{}': {}", spec.name, e.what()));
    }
  } else {
    c->cubin = ptx_to_cubin(c->ptx, arch).cubin;
  }
  disk.store(key, "ptx", std::span<const char>(c->ptx.data(), c->ptx.size()));
  disk.store(key, "symbol", std::span<const char>(c->symbol.data(), c->symbol.size()));
  disk.store(key, "cubin", std::span<const char>(c->cubin.data(), c->cubin.size()));
  return c;
}

class UnsafeCache {
 public:
  static UnsafeCache& get() {
    static UnsafeCache* cache = new UnsafeCache();  // never destroyed, like the kernel cache
    return *cache;
  }
  std::shared_ptr<const UnsafeCompiled> lookup_or_compile(const UnsafeKernelSpec& spec, const std::string& arch) {
    CacheKeyMaterial material = material_of(spec, arch);
    std::string key = material.key();
    std::shared_future<std::shared_ptr<const UnsafeCompiled>> future;
    std::promise<std::shared_ptr<const UnsafeCompiled>> promise;
    bool owner = false;
    {
      std::lock_guard lock(mutex_);
      auto it = entries_.find(key);
      if (it != entries_.end()) {
        future = it->second;
      } else {
        future = promise.get_future().share();
        entries_.emplace(key, future);
        owner = true;
      }
    }
    if (!owner) return future.get();
    try {
      promise.set_value(compile(spec, arch, material));
    } catch (...) {
      promise.set_exception(std::current_exception());
      std::lock_guard lock(mutex_);
      entries_.erase(key);
    }
    return future.get();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_future<std::shared_ptr<const UnsafeCompiled>>> entries_;
};

class UnsafeWork final : public Work {
 public:
  UnsafeWork(const UnsafeLaunchRequest& r, std::shared_ptr<const UnsafeCompiled> compiled)
      : r_(r), compiled_(std::move(compiled)) {}

  std::function<void()> cpu_task() override { throw Error("tessera: unsafe kernels run on GPUs only"); }

  void enqueue_gpu(CudaDriver& driver, CUstream stream) override {
    std::vector<int64_t> addresses(r_.args.size(), 0);
    for (std::size_t i = 0; i < r_.args.size(); ++i)
      if (r_.args[i].kind != Kind::scalar)
        addresses[i] = static_cast<int64_t>(device_address(driver, *r_.args[i].storage));
    std::vector<int64_t> slots = unsafe_slots(r_.args, addresses);
    std::vector<void*> params;
    for (auto& s : slots) params.push_back(&s);
    const auto& g = r_.grid;
    CUfunction fn =
        compiled_->loaded.function(driver, compiled_->image(driver), compiled_->symbol, g.shared_bytes);
    tessera::launch(fn, {g.blocks.x, g.blocks.y, g.blocks.z}, {g.threads.x, g.threads.y, g.threads.z}, g.shared_bytes, stream,
           params.data());
  }

  std::shared_ptr<const void> keep_alive() const override { return compiled_; }

 private:
  const UnsafeLaunchRequest& r_;
  std::shared_ptr<const UnsafeCompiled> compiled_;
};

}  // namespace

std::shared_ptr<const UnsafeCompiled> unsafe_lookup_or_compile(const UnsafeKernelSpec& spec, Target target) {
  return UnsafeCache::get().lookup_or_compile(spec, arch_of(spec, target));
}

std::vector<int64_t> unsafe_slots(std::span<const ArgDesc> args, std::span<const int64_t> addresses) {
  std::vector<int64_t> slots(args.size(), 0);
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].kind == Kind::scalar)
      std::memcpy(&slots[i], args[i].scalar.data(), sizeof(int64_t));
    else
      slots[i] = addresses[i] + args[i].offset * static_cast<int64_t>(dtype_size(args[i].dtype));
  }
  return slots;
}

CompletionPtr submit_unsafe(const UnsafeLaunchRequest& r, Target target) {
  if (GraphCapture* capture = current_capture()) {
    capture->record_unsafe(r, target);
    return nullptr;
  }
  auto compiled = unsafe_lookup_or_compile(*r.spec, target);
  const auto& g = r.grid;
  if (g.blocks.x == 0 || g.blocks.y == 0 || g.blocks.z == 0)
    return nullptr;  // nothing to run (like an empty tessera grid)
  // Exclusive borrows must be exclusive: no other argument may name the same tensor.
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    if (r.args[i].kind != Kind::out) continue;
    for (std::size_t j = 0; j < r.args.size(); ++j)
      if (j != i && r.args[j].kind != Kind::scalar && r.args[j].storage == r.args[i].storage)
        fail(r.spec->name, fmt::format("unsafe::out parameter {} aliases parameter {}: an exclusive borrow must not "
                                       "be passed twice",
                                       i, j));
  }
  if (!CudaDriver::get_if_available())
    fail(r.spec->name, fmt::format("cannot run on {}: no usable GPU ({})", target_name(target),
                                   CudaDriver::unavailable_reason()));
  Submission sub;
  sub.label = compiled->label;
  sub.gpu = true;
  sub.options = r.options;
  sub.wait = r.wait;
  for (const ArgDesc& a : r.args)
    if (a.kind != Kind::scalar) sub.uses.push_back({a.storage.get(), a.kind == Kind::out});
  UnsafeWork work(r, std::move(compiled));
  return submit_work(sub, work);
}

CompiledArtifact compile_unsafe(const UnsafeKernelSpec& spec, Target target) {
  auto c = unsafe_lookup_or_compile(spec, target);
  CompiledArtifact a;
  a.target = c->arch;
  a.ptx = c->ptx;
  a.cubin = c->cubin;
  a.from_disk_cache = c->from_disk_cache;
  return a;
}

}  // namespace tessera::detail
