// test_unsafe.cpp: the local opt-out (unsafe.h): CUDA C++ / PTX kernels with explicit grids.
//
// Without a GPU: CUDA C++ compiles through NVRTC to PTX and a cubin for sm_90 and sm_100a; device
// functions in CUDA C++ and in PTX link in through nvJitLink; compile errors and missing device
// functions are reported with the tool's log; the CPU target and aliasing exclusive borrows are
// rejected. On a GPU ([gpu]): a scatter with atomics, ordering with tessera kernels through the
// borrows it takes, a linked device function, raw device pointers, and an unsafe kernel in a graph
// with a Scalar updated between replays.
#include "execution_helpers.h"

#include "driver/nvrtc.h"
#include "driver/nvjitlink.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

const char* kScatterAdd = R"(
extern "C" __global__ void scatter_add(float* out, const float* src, const int* idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&out[idx[i]], src[i]);
}
)";

const char* kUsesDeviceFunction = R"(
extern "C" __device__ float twice_plus(float x, float b);
extern "C" __global__ void apply(float* out, const float* in, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = twice_plus(in[i], b);
}
)";

const char* kDeviceFunctionCuda = R"(
extern "C" __device__ float twice_plus(float x, float b) { return 2.0f * x + b; }
)";

// The same device function written in PTX.
std::string device_function_ptx(const std::string& arch) {
  return detail::cuda_to_ptx(kDeviceFunctionCuda, "twice_plus", arch, {}, std::vector<std::string>{"-rdc=true"}).ptx;
}

}  // namespace

TEST_CASE("an unsafe CUDA C++ kernel compiles to PTX and a cubin without a GPU", "[unsafe]") {
  if (!toolchain_present()) return;
  auto k = unsafe_cuda_kernel("scatter_add", kScatterAdd);
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    CompiledArtifact a = k.compile(t);
    CHECK(a.ptx.find(".entry scatter_add") != std::string::npos);
    CHECK(a.ptx.find("atom.global.add.f32") != std::string::npos);
    REQUIRE(a.cubin.size() > 4);
    CHECK(std::string(a.cubin.data() + 1, 3) == "ELF");
  }
  // C++ names are found through NVRTC's name expressions.
  auto templated = unsafe::cuda_kernel("fill<float>", R"(
    template <class T> __global__ void fill(T* out, T v, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) out[i] = v;
    }
    template __global__ void fill<float>(float*, float, int);
  )");
  CHECK(templated.compile(Target::sm_90).ptx.find(".entry _Z4fillIfEvPT_S0_i") != std::string::npos);
}

TEST_CASE("device functions in CUDA C++ or PTX are linked into an unsafe kernel", "[unsafe]") {
  if (!toolchain_present()) return;
  auto with_cuda = unsafe::cuda_kernel("apply", kUsesDeviceFunction, {unsafe::DeviceCode::cuda(kDeviceFunctionCuda)});
  CompiledArtifact a = with_cuda.compile(Target::sm_90);
  CHECK(a.ptx.find(".extern .func") != std::string::npos);  // the call is resolved by the link
  CHECK_FALSE(a.cubin.empty());
  auto with_ptx = unsafe::cuda_kernel("apply", kUsesDeviceFunction,
                                      {unsafe::DeviceCode::ptx(device_function_ptx("sm_90"), "twice_plus.ptx")});
  CHECK_FALSE(with_ptx.compile(Target::sm_90).cubin.empty());
  // A kernel given as PTX, calling the device function from CUDA C++.
  auto ptx_kernel = unsafe::ptx_kernel("apply", detail::cuda_to_ptx(kUsesDeviceFunction, "apply", "sm_90", {},
                                                            std::vector<std::string>{"-rdc=true"})
                                                    .ptx,
                                       {unsafe::DeviceCode::cuda(kDeviceFunctionCuda)});
  CHECK_FALSE(ptx_kernel.compile(Target::sm_90).cubin.empty());
}

TEST_CASE("unsafe kernel compile and link errors carry the tool's log", "[unsafe][errors]") {
  if (!toolchain_present()) return;
  auto broken = unsafe::cuda_kernel("broken", R"(extern "C" __global__ void broken(float* p) { p[0] = undeclared; })");
  CHECK_THROWS_WITH(broken.compile(Target::sm_90), Contains("NVRTC failed to compile 'broken.cu'") &&
                                                       Contains("undeclared"));
  auto unresolved = unsafe::cuda_kernel("apply", kUsesDeviceFunction, {unsafe::DeviceCode::cuda("// nothing here\n")});
  CHECK_THROWS_WITH(unresolved.compile(Target::sm_90), Contains("nvJitLink") && Contains("twice_plus"));
  auto misnamed = unsafe::cuda_kernel("nope", kScatterAdd);
  CHECK_THROWS_WITH(misnamed.compile(Target::sm_90), Contains("nope"));
}

TEST_CASE("unsafe kernels run on GPUs only and take exclusive borrows", "[unsafe][errors]") {
  auto k = unsafe::cuda_kernel("scatter_add", kScatterAdd);
  Tensor<float, 1> out({8}), src({8});
  Tensor<int32_t, 1> idx({8});
  LaunchOptions cpu = on(Target::cpu);
  CHECK_THROWS_WITH(k.launch(cpu, {.blocks = {1}}, unsafe::out(out), unsafe::in(src), unsafe::in(idx), 8),
                    Contains("runs on GPUs only"));
  CHECK_THROWS_WITH(k.compile(Target::cpu), Contains("runs on GPUs only"));
  if (!toolchain_present()) return;
  LaunchOptions gpu = on(Target::sm_90);
  CHECK_THROWS_WITH(k.launch(gpu, {.blocks = {1}}, unsafe::out(out), unsafe::in(out), unsafe::in(idx), 8),
                    Contains("unsafe::out parameter 0 aliases parameter 1"));
}

TEST_CASE("an unsafe scatter with atomics, ordered with tessera kernels by its borrows", "[gpu][unsafe]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const int n = 100000, bins = 64;
  auto x = iota_tensor(n);
  Tensor<float, 1> src({n}), hist({bins});
  Tensor<int32_t, 1> idx({n});
  for (int i = 0; i < n; ++i) idx(i) = (i * 7) % bins;
  auto scatter = unsafe_cuda_kernel("scatter_add", kScatterAdd);
  Target t = Target::sm_90;
  // src is written by a tessera kernel in flight; the scatter reads it, a tessera kernel reads hist.
  auto w = add_one_kernel().launch_async(on(t), src.partition<1024>(), x);
  auto s = scatter.launch_async(on(t), {.blocks = {(n + 255) / 256}, .threads = {256}}, unsafe::out(hist),
                                unsafe::in(src), unsafe::in(idx), n);
  Tensor<float, 1> hist2({bins});
  add_one_kernel().launch(on(t), hist2.partition<64>(), hist);
  std::vector<double> want(bins, 0.0);
  for (int i = 0; i < n; ++i) want[(i * 7) % bins] += i + 1.0;
  // f32 atomics add in any order.
  for (int b = 0; b < bins; ++b) CHECK(std::as_const(hist2)(b) == Approx(want[b] + 1).epsilon(1e-4));
  CHECK(w.ready());
  CHECK(s.ready());
}

TEST_CASE("an unsafe kernel calls a linked device function and takes raw pointers", "[gpu][unsafe][interop]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const int n = 1000;
  auto in = iota_tensor(n);
  Tensor<float, 1> out({n});
  auto apply = unsafe::cuda_kernel("apply", kUsesDeviceFunction, {unsafe::DeviceCode::cuda(kDeviceFunctionCuda)});
  apply.launch(on(Target::sm_90), {.blocks = {(n + 127) / 128}}, unsafe::out(out), unsafe::in(in), 0.5f, n);
  CHECK(std::as_const(out)(10) == 20.5f);
  // The same through raw device pointers, lent by explicit borrows and ordered by hand.
  Tensor<float, 1> out2({n});
  Stream s = Stream::create();
  {
    auto dst = borrow_for_device(out2, s);
    auto srcp = borrow_for_device(std::as_const(in), s);
    LaunchOptions o = on(Target::sm_90);
    o.stream = s;
    apply.launch_async(o, {.blocks = {(n + 127) / 128}}, unsafe::device_ptr(static_cast<float*>(dst.device_ptr())),
                       unsafe::device_ptr(static_cast<const float*>(srcp.device_ptr())), 1.0f, n)
        .detach();
  }  // the borrows end: an event on s
  CHECK(std::as_const(out2)(10) == 21.0f);
}

TEST_CASE("an unsafe kernel in a graph, with a Scalar updated between replays", "[gpu][unsafe][graph]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const int n = 4096;
  auto in = iota_tensor(n);
  Tensor<float, 1> mid({n}), out({n});
  Scalar<float> b(0.0f);
  auto apply = unsafe::cuda_kernel("apply", kUsesDeviceFunction, {unsafe::DeviceCode::cuda(kDeviceFunctionCuda)});
  Graph g(Target::sm_90);
  {
    auto recording = g.capture();
    apply.launch({.blocks = {n / 128}}, unsafe::out(mid), unsafe::in(in), b, n);
    add_one_kernel().launch(out.partition<128>(), mid);
  }
  for (int step = 0; step < 4; ++step) {
    b.set(static_cast<float>(step));
    g.replay();
    CHECK(std::as_const(out)(3) == 6.0f + static_cast<float>(step) + 1.0f);
  }
}
