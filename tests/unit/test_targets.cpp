// test_targets.cpp: the GPU targets (runtime/driver/gpu_arch.h). Which target a device of each compute
// capability runs by default and how it loads code compiled for another (cubin, PTX compiled by
// the driver, or an error); TESSERA_TARGET takes every target's name; kernels compile to a cubin
// for every target, with the wait for prerequisite grids only where the target has griddepcontrol.
// On a GPU ([gpu]), kernels compiled for an older architecture run through their PTX, synchronous,
// asynchronous, in a graph and unsafe, with the right results. gpu_multiprocessor_count answers the
// device's SMs, or 0 without one.
#include "execution_helpers.h"

#include "example_kernels.h"
#include "driver/cuda_driver.h"
#include "driver/gpu_arch.h"
#include "scoped_env.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;
using detail::DeviceLoad;

TEST_CASE("each compute capability gets the newest target it runs", "[targets]") {
  CHECK(detail::default_gpu_target(80) == Target::sm_80);   // A100
  CHECK(detail::default_gpu_target(86) == Target::sm_86);   // RTX 30xx, A10, A40
  CHECK(detail::default_gpu_target(87) == Target::sm_86);   // Jetson Orin: the sm_86 cubin runs
  CHECK(detail::default_gpu_target(89) == Target::sm_89);   // L4, L40S, RTX 40xx
  CHECK(detail::default_gpu_target(90) == Target::sm_90);   // H100, H200
  CHECK(detail::default_gpu_target(100) == Target::sm_100a);  // B200
  CHECK(detail::default_gpu_target(103) == Target::sm_90);  // not sm_100a's: sm_90's PTX
  CHECK(detail::default_gpu_target(120) == Target::sm_120);  // RTX 50xx
  CHECK(detail::default_gpu_target(121) == Target::sm_120);
  CHECK(detail::default_gpu_target(130) == Target::sm_120);  // newer than the table: PTX
  CHECK(detail::default_gpu_target(75) == std::nullopt);     // Turing: too old
}

// The SM count users size work by: the device's, or 0 without a GPU (never an exception).
TEST_CASE("gpu_multiprocessor_count is the device's SMs, 0 without a GPU", "[targets]") {
  const int sms = gpu_multiprocessor_count();
  if (!gpu_available()) {
    CHECK(sms == 0);
    return;
  }
  CHECK(sms == detail::CudaDriver::get().multiprocessor_count());
  CHECK(sms > 0);
}

TEST_CASE("a device runs a target's cubin, its PTX, or neither", "[targets]") {
  auto load = [](Target t, int cc) { return detail::device_load(*detail::gpu_arch(t), cc); };
  CHECK(load(Target::sm_90, 90) == DeviceLoad::cubin);
  CHECK(load(Target::sm_80, 86) == DeviceLoad::cubin);  // same major version, newer minor
  CHECK(load(Target::sm_86, 80) == DeviceLoad::none);   // older device
  CHECK(load(Target::sm_80, 90) == DeviceLoad::ptx);    // newer major version: the driver compiles
  CHECK(load(Target::sm_90, 120) == DeviceLoad::ptx);
  CHECK(load(Target::sm_100a, 100) == DeviceLoad::cubin);
  CHECK(load(Target::sm_100a, 103) == DeviceLoad::none);  // architecture-specific
  CHECK(load(Target::sm_100a, 120) == DeviceLoad::none);
  CHECK(load(Target::sm_120, 90) == DeviceLoad::none);
  // Only sm_90 and newer have griddepcontrol.
  for (const detail::GpuArch& a : detail::gpu_archs())
    CHECK(a.grid_dependency_control == (a.compute_capability >= 90));
}

TEST_CASE("TESSERA_TARGET takes the name of every target", "[targets]") {
  test_env::EnvGuard env;
  for (Target t : {Target::cpu, Target::sm_80, Target::sm_86, Target::sm_89, Target::sm_90, Target::sm_100a,
                   Target::sm_120}) {
    const std::string name(to_string(t));
    env.set("TESSERA_TARGET", name.c_str());
    CHECK(default_target() == t);
    CHECK(detail::target_named(name) == t);
  }
  env.set("TESSERA_TARGET", "sm_75");
  CHECK_THROWS_WITH(default_target(), Contains("TESSERA_TARGET='sm_75' is not one of cpu, sm_80, sm_86"));
}

namespace {

bool is_elf(const std::vector<char>& b) { return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'; }

auto scale_kernel() {
  return kernel("targets_scale", [](auto out, auto x) { return out.store(x.load_like(out) * c<2> + c<1>); });
}

const char* kFill = R"(
extern "C" __global__ void targets_fill(float* out, float v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v;
}
)";

}  // namespace

TEST_CASE("kernels compile to a cubin for every GPU target, waiting for prerequisites where the target can",
          "[targets][compile]") {
  Tensor<float, 1> x({1000}), z({1000});
  Tensor<float, 2> m({10, 1000}), s({10, 1000});
  for (const detail::GpuArch& a : detail::gpu_archs()) {
    INFO(a.name);
    CompiledArtifact art = scale_kernel().compile(a.target, z.partition<128>(), x);
    CHECK(art.target == a.name);
    CHECK(art.ptx.find(".target " + std::string(a.name)) != std::string::npos);
    CHECK(is_elf(art.cubin));
    CHECK((art.ptx.find("griddepcontrol.wait;") != std::string::npos) == a.grid_dependency_control);
    CHECK(is_elf(examples::softmax().compile(a.target, s.partition<1, 1024>(), m).cubin));
  }
}

static void older_targets_run_through_ptx(Target gpu) {
  // Every target older than the GPU's own whose cubin it cannot run: its PTX is compiled by the
  // driver at the first launch.
  const int cc = detail::gpu_arch(gpu)->compute_capability;
  int tried = 0;
  for (const detail::GpuArch& a : detail::gpu_archs()) {
    if (detail::device_load(a, cc) != DeviceLoad::ptx) continue;
    INFO(a.name);
    ++tried;
    const int64_t n = 5000;
    auto x = iota_tensor(n);
    Tensor<float, 1> y({n}), z({n});
    scale_kernel().launch(on(a.target), y.partition<1024>(), x);  // y = 2x + 1
    auto h = scale_kernel().launch_async(on(a.target), z.partition<128>(), y);  // z = 2y + 1, async
    h.wait();
    CHECK(std::as_const(z)(n - 1) == 4.0f * (n - 1) + 3.0f);
    Graph g(a.target);
    {
      auto recording = g.capture();
      scale_kernel().launch(on(a.target), y.partition<1024>(), z);  // y = 2z + 1
      scale_kernel().launch(on(a.target), z.partition<128>(), y);   // z = 2y + 1: a full edge
    }
    g.replay();
    CHECK(std::as_const(z)(7) == 4.0f * (4.0f * 7 + 3.0f) + 3.0f);
    if (toolchain_present()) {
      auto fill = unsafe::cuda_kernel("targets_fill", kFill);
      fill.launch(on(a.target), {.blocks = {(n + 127) / 128}}, unsafe::out(z), 0.25f, static_cast<int>(n));
      CHECK(std::as_const(z)(n - 1) == 0.25f);
    }
  }
  if (tried == 0) WARN("no target older than this GPU's runs through PTX: nothing to try");
}

TEST_CASE("kernels for an older architecture run on the GPU through their PTX", "[gpu][targets]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  test_env::EnvGuard env;  // PTX is the NVVM backend's (the tileir backend makes cubins only)
  env.set("TESSERA_BACKEND", "nvvm");
  older_targets_run_through_ptx(default_target());
}

TEST_CASE("a kernel for a newer architecture than the GPU's is refused at launch", "[gpu][targets][errors]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const int cc = detail::gpu_arch(default_target())->compute_capability;
  for (const detail::GpuArch& a : detail::gpu_archs()) {
    if (detail::device_load(a, cc) != DeviceLoad::none) continue;
    INFO(a.name);
    Tensor<float, 1> x({100}), z({100});
    CHECK_THROWS_WITH(scale_kernel().launch(on(a.target), z.partition<128>(), x),
                      Contains("kernel 'targets_scale'") && Contains("which runs neither its cubin nor its PTX"));
  }
}
