// gpu_arch.h: the GPU architectures tessera compiles for, what each offers the code generator and
// the runtime, and how a device runs code compiled for one of them. The facts are those of the
// CUDA programming guide's table of compute capabilities and of the PTX ISA's target list.
//
// Rules (CUDA's compatibility model):
//  - a cubin for sm_XY runs on a device of the same major version X and a minor version >= Y; a
//    cubin for an architecture-specific target (sm_100a) runs only on that compute capability;
//  - PTX for sm_XY (not architecture-specific) runs on any device of compute capability >= XY:
//    the driver compiles it when the module is loaded.
// default_gpu_target picks, for a device, the known target whose cubin it runs, else (a device
// newer than this table) the newest known target below it, run through its PTX.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "tessera/launch.h"

namespace tessera::detail {

struct GpuArch {
  Target target;
  std::string_view name;        // "sm_90": the PTX .target and nvJitLink's -arch
  int compute_capability;       // major * 10 + minor: 90
  bool arch_specific;           // sm_100a: its cubin and PTX run only on that compute capability
  bool grid_dependency_control; // griddepcontrol and programmatic launches (sm_90 and newer)
  int max_shared_bytes;         // shared memory a block may opt into (the SM's less 1 KiB)
  int threads_per_sm;           // resident threads per SM at most
  int blocks_per_sm;            // resident blocks per SM at most
  int shared_per_sm;            // shared memory per SM (1 KiB of it reserved per resident block)
  int registers_per_sm = 65536;
  // The architecture-specific target of the same GPU whose instructions a kernel for this target
  // may use ("sm_90a": wgmma, setmaxnreg; the tensor-core lowering), empty if none. Code compiled
  // for it runs only on this compute capability; gpu_arch(name) finds it, gpu_archs() does not
  // list it (it is not a target a user names).
  std::string_view arch_specific_variant = {};
};

inline bool is_gpu(Target target) { return target != Target::cpu; }

// Every GPU target, oldest first.
std::span<const GpuArch> gpu_archs();
// The architecture of a GPU target; nullptr for Target::cpu.
const GpuArch* gpu_arch(Target target);
// The architecture named `name` ("sm_90", or an arch_specific_variant: "sm_90a"); nullptr when
// there is none.
const GpuArch* gpu_arch(std::string_view name);

// How a device of compute capability `device_cc` runs code compiled for `arch`.
enum class DeviceLoad {
  cubin,  // the cubin (the same architecture, or a newer minor version of its major one)
  ptx,    // the PTX, compiled by the driver (a newer device)
  none,   // neither (an older device, or another one than an architecture-specific target's)
};
DeviceLoad device_load(const GpuArch& arch, int device_cc);

// The target a device of compute capability `device_cc` runs by default (see the rules above);
// std::nullopt for a device older than the oldest target (sm_80).
std::optional<Target> default_gpu_target(int device_cc);

// "cpu", "sm_90", ...
std::string_view target_name(Target target);
// The target named `name`, or std::nullopt.
std::optional<Target> target_named(std::string_view name);
// "cpu, sm_80, sm_86, ...": the names a user may give.
std::string_view target_names();

}  // namespace tessera::detail
