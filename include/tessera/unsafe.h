// unsafe.h: the local opt-out. A kernel written in CUDA C++ (compiled with NVRTC) or PTX, launched
// with an explicit grid, that may take raw device pointers and do anything CUDA allows: scatter
// and gather stores, atomics, shared memory. Its name says what it is:
//
//   auto scatter = tessera::unsafe::cuda_kernel("scatter_add", R"(
//     extern "C" __global__ void scatter_add(float* out, const float* src, const int* idx, int n) {
//       int i = blockIdx.x * blockDim.x + threadIdx.x;
//       if (i < n) atomicAdd(&out[idx[i]], src[i]);
//     })");
//   scatter.launch({.blocks = {(n + 127) / 128}, .threads = {128}},
//                  tessera::unsafe::out(y), tessera::unsafe::in(x), tessera::unsafe::in(idx), n);
//
// What stays safe: tessera tensors are passed as explicit borrows, out(t) (exclusive, the kernel
// gets T*) or in(t) (shared, const T*), and the launch takes those borrows like any other: it is
// ordered after the work in flight on them, host access waits for it, nothing is freed early. The
// kernel's memory accesses are not checked (it may write through an in() pointer or out of bounds:
// that is the opt-out). Raw device pointers (unsafe::device_ptr) are not tracked at all; order
// work on them with LaunchOptions::after. Numbers and tessera::Scalar are passed by value.
//
// Device functions in CUDA C++ or PTX can be linked in (nvJitLink): declare them `extern "C"
// __device__` in the kernel and pass their code in `link`; the kernel is then compiled as
// relocatable device code. GPU targets only; compile() works without a GPU. (Tile kernels call
// such functions elementwise through tessera::cuda_function / ptx_function: expr/call_expr.h.)
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/kernel.h"
#include "tessera/launch.h"
#include "tessera/tensor.h"

namespace tessera::unsafe {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
};
// Blocks of threads, and dynamic shared memory per block (above 48 KiB is opted into).
struct LaunchGrid {
  Dim3 blocks;
  Dim3 threads{128};
  unsigned shared_bytes = 0;
};

// Code linked into an unsafe kernel: CUDA C++ (compiled with NVRTC as relocatable code) or PTX.
struct DeviceCode {
  enum class Kind { cuda, ptx };
  Kind kind = Kind::cuda;
  std::string text;
  std::string name = "device_code";  // in error messages
  static DeviceCode cuda(std::string source, std::string name = "device_code.cu") {
    return {Kind::cuda, std::move(source), std::move(name)};
  }
  static DeviceCode ptx(std::string ptx, std::string name = "device_code.ptx") {
    return {Kind::ptx, std::move(ptx), std::move(name)};
  }
};

// An exclusive borrow of a tensor for an unsafe kernel: the kernel gets a T* to its first element.
template <class T, int Rank>
struct OutArg {
  Tensor<T, Rank>* tensor;
};
// A shared borrow of a tensor for an unsafe kernel: the kernel gets a const T*.
template <class T, int Rank>
struct InArg {
  const Tensor<T, Rank>* tensor;
};
template <class T, int Rank>
OutArg<T, Rank> out(Tensor<T, Rank>& t) {
  return {&t};
}
template <class T, int Rank>
InArg<T, Rank> in(const Tensor<T, Rank>& t) {
  return {&t};
}
// A raw device pointer, passed as is and not tracked.
template <class T>
struct DevicePtr {
  T* ptr;
};
template <class T>
DevicePtr<T> device_ptr(T* p) {
  return {p};
}

}  // namespace tessera::unsafe

namespace tessera::detail {

// What an unsafe kernel is made of; compiled once per GPU architecture (libtessera).
struct UnsafeKernelSpec {
  std::string name;  // the __global__ function (a name expression for C++ names) or PTX .entry
  bool is_ptx = false;
  std::string source;
  std::vector<unsafe::DeviceCode> link;
  std::vector<std::string> options;  // NVRTC options
};

struct UnsafeLaunchRequest {
  std::shared_ptr<const UnsafeKernelSpec> spec;
  unsafe::LaunchGrid grid;
  std::span<const ArgDesc> args;  // tensors: out/in (rank 0 descriptors); values: scalar
  const LaunchOptions* options = nullptr;
  bool wait = true;
};

CompletionPtr submit_unsafe(const UnsafeLaunchRequest& request, Target target);
CompiledArtifact compile_unsafe(const UnsafeKernelSpec& spec, Target target);

template <class T, int Rank>
ArgDesc unsafe_arg(const unsafe::OutArg<T, Rank>& a) {
  return tensor_arg(ArgDesc::Kind::out, *a.tensor);
}
template <class T, int Rank>
ArgDesc unsafe_arg(const unsafe::InArg<T, Rank>& a) {
  return tensor_arg(ArgDesc::Kind::in, *a.tensor);
}
template <class T>
ArgDesc unsafe_arg(const unsafe::DevicePtr<T>& p) {
  ArgDesc a;
  a.kind = ArgDesc::Kind::scalar;
  static_assert(sizeof(p.ptr) == 8);
  std::memcpy(a.scalar.data(), &p.ptr, 8);
  return a;
}
template <class T>
ArgDesc unsafe_arg(const Scalar<T>& s) {
  return to_arg(s);
}
template <class T>
  requires(std::is_arithmetic_v<T> || std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
ArgDesc unsafe_arg(const T& v) {
  return to_arg(v);
}
template <class A>
ArgDesc unsafe_arg(const A&) {
  static_assert(sizeof(A) == 0,
                "tessera::unsafe: pass tensors as unsafe::out(t) or unsafe::in(t), raw device pointers as "
                "unsafe::device_ptr(p), scalars as numbers or tessera::Scalar");
  return {};
}

}  // namespace tessera::detail

namespace tessera::unsafe {

class CudaKernel {
 public:
  explicit CudaKernel(std::shared_ptr<const detail::UnsafeKernelSpec> spec) : spec_(std::move(spec)) {}
  const std::string& name() const { return spec_->name; }

  template <class... Args>
    requires(!detail::leads_with_options<Args...>)
  void launch(const LaunchGrid& grid, Args&&... args) const {
    submit(LaunchOptions{}, grid, true, args...);
  }
  template <class... Args>
  void launch(const LaunchOptions& options, const LaunchGrid& grid, Args&&... args) const {
    submit(options, grid, true, args...);
  }
  template <class... Args>
    requires(!detail::leads_with_options<Args...>)
  LaunchHandle<> launch_async(const LaunchGrid& grid, Args&&... args) const {
    return LaunchHandle<>(submit(LaunchOptions{}, grid, false, args...));
  }
  template <class... Args>
  LaunchHandle<> launch_async(const LaunchOptions& options, const LaunchGrid& grid, Args&&... args) const {
    return LaunchHandle<>(submit(options, grid, false, args...));
  }
  // PTX and cubin for a GPU target, without running (no GPU needed).
  CompiledArtifact compile(Target target) const { return detail::compile_unsafe(*spec_, target); }

 private:
  template <class... Args>
  detail::CompletionPtr submit(const LaunchOptions& options, const LaunchGrid& grid, bool wait,
                               const Args&... args) const {
    std::array<detail::ArgDesc, sizeof...(Args)> descs{detail::unsafe_arg(args)...};
    Target target = options.target ? *options.target : default_target();
    return detail::submit_unsafe({spec_, grid, descs, &options, wait}, target);
  }

  std::shared_ptr<const detail::UnsafeKernelSpec> spec_;
};

// A kernel in CUDA C++: `name` is its __global__ function (extern "C", or a C++ name expression
// such as "axpy<float>"), `source` the translation unit, `link` device code it calls, `options`
// more NVRTC options (e.g. "-use_fast_math").
inline CudaKernel cuda_kernel(std::string name, std::string source, std::vector<DeviceCode> link = {},
                              std::vector<std::string> options = {}) {
  return CudaKernel(std::make_shared<const detail::UnsafeKernelSpec>(
      detail::UnsafeKernelSpec{std::move(name), false, std::move(source), std::move(link), std::move(options)}));
}
// A kernel in PTX: `name` is its .entry.
inline CudaKernel ptx_kernel(std::string name, std::string ptx, std::vector<DeviceCode> link = {}) {
  return CudaKernel(std::make_shared<const detail::UnsafeKernelSpec>(
      detail::UnsafeKernelSpec{std::move(name), true, std::move(ptx), std::move(link), {}}));
}

}  // namespace tessera::unsafe

namespace tessera {
// The same as unsafe::cuda_kernel, spelled so that the opt-out shows at the definition.
inline unsafe::CudaKernel unsafe_cuda_kernel(std::string name, std::string source,
                                             std::vector<unsafe::DeviceCode> link = {},
                                             std::vector<std::string> options = {}) {
  return unsafe::cuda_kernel(std::move(name), std::move(source), std::move(link), std::move(options));
}
}  // namespace tessera
