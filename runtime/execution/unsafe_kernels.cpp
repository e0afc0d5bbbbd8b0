// unsafe_kernels.cpp: unsafe CUDA C++ / PTX kernels (include/tessera/unsafe.h). CUDA C++ goes
// through NVRTC to PTX (relocatable when device code is linked in), everything through nvJitLink
// to a cubin; the result is cached in the process (single flight) and on disk (compiled once among
// processes too, under the key's compile lock), keyed by every input and the toolchain versions.
// A launch fills in a launch plan (launch_plan.h: one 8-byte parameter per argument) and takes the
// borrows of its tessera tensors like any other (submit_launch), or is recorded into the graph
// being captured.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "cache/single_flight.h"
#include "driver/device_link.h"
#include "driver/gpu_arch.h"
#include "driver/nvjitlink.h"
#include "driver/nvrtc.h"
#include "execution/graph_capture.h"
#include "execution/launch_plan.h"
#include "tessera/errors.h"
#include "tessera/unsafe.h"
#include "tessera/version.h"

namespace tessera::detail {
namespace {

using Kind = ArgDesc::Kind;

struct UnsafeCompiled {
  std::string arch;
  std::string ptx;          // the kernel's PTX (before linking)
  std::vector<char> cubin;  // linked
  bool from_disk_cache = false;
  KernelCode code;          // ArgumentAbi::pointer over the cubin and PTX above
};

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
  KernelCode& code = c->code;
  code.label = std::make_shared<const std::string>(fmt::format("unsafe kernel '{}'", spec.name));
  code.abi = ArgumentAbi::pointer;
  code.checks_overlap = false;
  code.deferrable = false;
  code.target = gpu_arch(arch);
  code.linked = !spec.link.empty();
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
    code.symbol.assign(symbol->begin(), symbol->end());
    c->from_disk_cache = true;
    code.cubin = c->cubin;
    code.ptx = c->ptx;
    return c;
  }
  const bool relocatable = !spec.link.empty();
  if (spec.is_ptx) {
    c->ptx = spec.source;
    code.symbol = spec.name;
  } else {
    std::vector<std::string> options = spec.options;
    if (relocatable) options.push_back("-rdc=true");
    std::vector<std::string> names{spec.name};
    NvrtcResult r = cuda_to_ptx(spec.source, spec.name, arch, names, options);
    c->ptx = std::move(r.ptx);
    code.symbol = r.lowered_names.at(0);
  }
  if (relocatable) {
    std::vector<DeviceCodeInput> inputs;
    for (const auto& d : spec.link) inputs.push_back({d.kind == unsafe::DeviceCode::Kind::ptx, d.text, d.name});
    try {
      c->cubin = link_device_code(c->ptx, spec.name, inputs, arch, spec.options);
    } catch (const Error& e) {
      throw Error(fmt::format("tessera: unsafe kernel '{}': {}", spec.name, e.what()));
    }
  } else {
    c->cubin = ptx_to_cubin(c->ptx, arch).cubin;
  }
  disk.store(key, "ptx", std::span<const char>(c->ptx.data(), c->ptx.size()));
  disk.store(key, "symbol", std::span<const char>(code.symbol.data(), code.symbol.size()));
  disk.store(key, "cubin", std::span<const char>(c->cubin.data(), c->cubin.size()));
  code.cubin = c->cubin;
  code.ptx = c->ptx;
  return c;
}

// The process cache of unsafe kernels, keyed by their disk-cache key. Never destroyed, like the
// kernel cache: work in flight at exit may still use a kernel.
SingleFlight<std::shared_ptr<const UnsafeCompiled>>& unsafe_cache() {
  static auto* cache = new SingleFlight<std::shared_ptr<const UnsafeCompiled>>();
  return *cache;
}

std::shared_ptr<const UnsafeCompiled> lookup_or_compile(const UnsafeKernelSpec& spec, Target target) {
  const std::string arch = arch_of(spec, target);
  CacheKeyMaterial material = material_of(spec, arch);
  return unsafe_cache().get(material.key(), [&] { return compile(spec, arch, material); });
}

}  // namespace

CompletionPtr submit_unsafe(const UnsafeLaunchRequest& r, Target target) {
  GraphCapture* capture = current_capture();
  if (capture) {
    target = capture->target_for(r.options, target, r.spec->name);
    if (!is_gpu(target))
      throw Error(fmt::format("tessera: unsafe kernel '{}' cannot be recorded into a graph for the CPU target",
                              r.spec->name));
  }
  auto compiled = lookup_or_compile(*r.spec, target);
  const auto& g = r.grid;
  LaunchPlan plan;
  plan.code = &compiled->code;
  plan.programs.dims = {g.blocks.x, g.blocks.y, g.blocks.z};
  plan.grid = {g.blocks.x, g.blocks.y, g.blocks.z};
  plan.block = {g.threads.x, g.threads.y, g.threads.z};
  plan.shared_bytes = g.shared_bytes;
  plan.owner = std::move(compiled);
  if (capture) {
    capture->record(r.spec->name, std::move(plan), r.args);
    return nullptr;
  }
  if (plan.empty()) return nullptr;  // nothing to run (like an empty tessera grid)
  // Exclusive borrows must be exclusive: no other argument may name the same tensor.
  for (std::size_t i = 0; i < r.args.size(); ++i) {
    if (r.args[i].kind != Kind::out) continue;
    if (r.args[i].storage && r.args[i].storage->frozen())
      throw Error(fmt::format("tessera: kernel '{}': unsafe::out parameter {} is frozen (Tensor::freeze made it "
                              "read-only)",
                              r.spec->name, i));
    for (std::size_t j = 0; j < r.args.size(); ++j)
      if (j != i && r.args[j].kind != Kind::scalar && r.args[j].storage == r.args[i].storage)
        throw Error(fmt::format("tessera: kernel '{}': unsafe::out parameter {} aliases parameter {}: an exclusive "
                                "borrow must not be passed twice",
                                r.spec->name, i, j));
  }
  if (!CudaDriver::get_if_available())
    throw Error(fmt::format("tessera: kernel '{}': cannot run on {}: no usable GPU ({})", r.spec->name,
                            target_name(target), CudaDriver::unavailable_reason()));
  return submit_launch(plan, r.args, r.options, r.wait, nullptr);
}

CompiledArtifact compile_unsafe(const UnsafeKernelSpec& spec, Target target) {
  auto c = lookup_or_compile(spec, target);
  CompiledArtifact a;
  a.target = c->arch;
  a.ptx = c->ptx;
  a.cubin = c->cubin;
  a.from_disk_cache = c->from_disk_cache;
  return a;
}

}  // namespace tessera::detail
