// gpu_arch.cpp: the table of GPU targets and the compatibility rules of gpu_arch.h.
#include "driver/gpu_arch.h"

#include <array>

namespace tessera::detail {
namespace {

// Per-block shared memory opt-in, threads, blocks and shared memory per SM from the programming
// guide's table of compute capabilities.
constexpr std::array<GpuArch, 6> kArchs{{
    {Target::sm_80, "sm_80", 80, false, false, 163 * 1024, 2048, 32, 164 * 1024},
    {Target::sm_86, "sm_86", 86, false, false, 99 * 1024, 1536, 16, 100 * 1024},
    {Target::sm_89, "sm_89", 89, false, false, 99 * 1024, 1536, 24, 100 * 1024},
    {Target::sm_90, "sm_90", 90, false, true, 227 * 1024, 2048, 32, 228 * 1024, 65536, "sm_90a"},
    {Target::sm_100a, "sm_100a", 100, true, true, 227 * 1024, 2048, 32, 228 * 1024},
    {Target::sm_120, "sm_120", 120, false, true, 99 * 1024, 1536, 32, 100 * 1024},
}};

// The architecture-specific variants (GpuArch::arch_specific_variant), each the same GPU as its target.
constexpr std::array<GpuArch, 1> kVariants{{
    {Target::sm_90, "sm_90a", 90, true, true, 227 * 1024, 2048, 32, 228 * 1024},
}};

}  // namespace

std::span<const GpuArch> gpu_archs() { return kArchs; }

const GpuArch* gpu_arch(Target target) {
  for (const GpuArch& a : kArchs)
    if (a.target == target) return &a;
  return nullptr;
}

const GpuArch* gpu_arch(std::string_view name) {
  for (const GpuArch& a : kArchs)
    if (a.name == name) return &a;
  for (const GpuArch& a : kVariants)
    if (a.name == name) return &a;
  return nullptr;
}

DeviceLoad device_load(const GpuArch& arch, int device_cc) {
  if (device_cc == arch.compute_capability) return DeviceLoad::cubin;
  if (arch.arch_specific || device_cc < arch.compute_capability) return DeviceLoad::none;
  return device_cc / 10 == arch.compute_capability / 10 ? DeviceLoad::cubin : DeviceLoad::ptx;
}

std::optional<Target> default_gpu_target(int device_cc) {
  // The newest target whose cubin the device runs; else the newest whose PTX it runs.
  const GpuArch* best = nullptr;
  for (DeviceLoad want : {DeviceLoad::cubin, DeviceLoad::ptx}) {
    for (const GpuArch& a : kArchs)
      if (device_load(a, device_cc) == want) best = &a;
    if (best) return best->target;
  }
  return std::nullopt;
}

std::string_view target_name(Target target) {
  if (target == Target::cpu) return "cpu";
  const GpuArch* a = gpu_arch(target);
  return a ? a->name : "?";
}

std::optional<Target> target_named(std::string_view name) {
  if (name == "cpu") return Target::cpu;
  for (const GpuArch& a : kArchs)
    if (a.name == name) return a.target;
  return std::nullopt;
}

std::string_view target_names() { return "cpu, sm_80, sm_86, sm_89, sm_90, sm_100a, sm_120"; }

}  // namespace tessera::detail
