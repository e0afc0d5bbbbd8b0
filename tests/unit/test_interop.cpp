// test_interop.cpp: tessera beside foreign code (interop.h, Tensor::from_device, Stream::from_cuda).
//
// On the CPU: explicit borrows by host code are exclusive or shared like launches; while one is
// open, conflicting launches, host access and a second exclusive borrow are refused with an error
// (a double exclusive borrow); a borrow waits for tessera's work in flight; from_device checks its
// arguments and calls the release callback once. On a GPU ([gpu]): foreign device memory (plain and
// strided) read and written by tessera kernels without copies, the release callback after the last
// work, launches on a foreign detail::CUstream, and foreign work on a borrowed tensor ordered with tessera's.
#include "execution_helpers.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "driver/cuda_driver.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

TEST_CASE("an open exclusive host borrow refuses every other use until it ends", "[cpu][interop][borrow]") {
  auto x = iota_tensor(100);
  Tensor<float, 1> t({100}), z({100});
  auto copy = copy_kernel();
  {
    ForeignBorrow b = borrow_for_host(t);  // exclusive
    static_cast<float*>(b.host_ptr())[0] = 42.0f;
    CHECK_THROWS_WITH(copy.launch_on(Target::cpu, z.partition<128>(), t),
                      Contains("kernel 'exec_copy' uses a tensor borrowed by a foreign exclusive borrow (host), which "
                               "has not ended"));
    CHECK_THROWS_WITH(copy.launch_on(Target::cpu, t.partition<128>(), x), Contains("has not ended"));
    CHECK_THROWS_WITH(borrow_for_host(t), Contains("already borrowed by a foreign exclusive borrow"));
    CHECK_THROWS_WITH(borrow_for_host(std::as_const(t)), Contains("already borrowed"));
    CHECK_THROWS_WITH(std::as_const(t)(0), Contains("host read of a tensor borrowed by"));
  }
  copy.launch_on(Target::cpu, z.partition<128>(), t);
  CHECK(std::as_const(z)(0) == 42.0f);
}

TEST_CASE("shared host borrows coexist with readers; writers are refused while one is open",
          "[cpu][interop][borrow]") {
  auto x = iota_tensor(100);
  Tensor<float, 1> z({100});
  auto copy = copy_kernel();
  ForeignBorrow r1 = borrow_for_host(std::as_const(x));
  ForeignBorrow r2 = borrow_for_host(x, Access::read);
  CHECK(static_cast<const float*>(r1.host_ptr())[7] == 7.0f);
  copy.launch_on(Target::cpu, z.partition<128>(), x);  // another reader: fine
  CHECK(std::as_const(x)(3) == 3.0f);                 // host reads too
  CHECK_THROWS_WITH(copy.launch_on(Target::cpu, x.partition<128>(), z), Contains("a foreign shared borrow (host)"));
  CHECK_THROWS_WITH(x.fill(1.0f), Contains("host write of a tensor borrowed by"));
  CHECK_THROWS_WITH(borrow_for_host(x), Contains("already borrowed"));
  r1.end();
  CHECK_THROWS_WITH(r1.host_ptr(), Contains("has ended"));
  r2.end();
  x.fill(1.0f);
  copy.launch_on(Target::cpu, x.partition<128>(), z);
  CHECK(std::as_const(x)(99) == 99.0f);
}

TEST_CASE("a host borrow waits for tessera's work in flight on the tensor", "[cpu][interop][borrow]") {
  auto gate = make_gate();
  auto x = iota_tensor(300, 5);
  Tensor<float, 1> t({300});
  auto h = copy_kernel().launch_async(after_gate(gate), t.partition<128>(), x);
  std::thread opener([gate] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    gate->open();
  });
  {
    ForeignBorrow b = borrow_for_host(t);  // waits for the launch writing t
    CHECK(h.ready());
    CHECK(static_cast<float*>(b.host_ptr())[299] == 304.0f);
  }
  opener.join();
}

TEST_CASE("from_device checks its arguments and calls the release callback once", "[cpu][interop]") {
  int released = 0;
  void* fake = reinterpret_cast<void*>(std::uintptr_t{0x10000});
  CHECK_THROWS_WITH((Tensor<float, 1>::from_device(nullptr, {4})), Contains("null device pointer"));
  CHECK_THROWS_WITH((Tensor<float, 2>::from_device(fake, {2, 2}, std::array<int64_t, 2>{-1, 1})),
                    Contains("negative stride"));
  {
    auto t = Tensor<float, 2>::from_device(fake, {3, 4}, std::array<int64_t, 2>{8, 2}, [&] { ++released; });
    CHECK_FALSE(t.contiguous());
    CHECK(t.storage()->bytes() == (2 * 8 + 3 * 2 + 1) * sizeof(float));
    CHECK(t.storage()->foreign_device());
    Tensor<float, 2> moved = std::move(t);
    CHECK(released == 0);
  }
  CHECK(released == 1);
  if (!gpu_available()) {
    auto t = Tensor<float, 1>::from_device(fake, {4});
    CHECK_THROWS_WITH(std::as_const(t)(0), Contains("no CUDA GPU"));
  }
}

TEST_CASE("foreign device memory is read and written by tessera kernels without copies", "[gpu][interop]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  detail::CudaDriver& d = detail::CudaDriver::get();
  const int64_t n = 10000;
  std::vector<float> host(n);
  for (int64_t i = 0; i < n; ++i) host[i] = static_cast<float>(i);
  detail::DeviceBuffer in_buf(d, n * sizeof(float)), out_buf(d, n * sizeof(float)), strided_buf(d, 2 * n * sizeof(float));
  in_buf.upload(std::span<const float>(host));
  std::vector<float> interleaved(2 * n, -1.0f);
  for (int64_t i = 0; i < n; ++i) interleaved[2 * i] = static_cast<float>(3 * i);
  strided_buf.upload(std::span<const float>(interleaved));
  // Those copies ran on the legacy default stream; tessera's streams do not synchronize with it.
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
  std::atomic<int> released{0};
  {
    auto in = Tensor<float, 1>::from_device(reinterpret_cast<void*>(in_buf.ptr()), {n}, std::nullopt,
                                            [&] { released++; });
    auto out = Tensor<float, 1>::from_device(reinterpret_cast<void*>(out_buf.ptr()), {n}, std::nullopt,
                                             [&] { released++; });
    auto strided = Tensor<float, 1>::from_device(reinterpret_cast<void*>(strided_buf.ptr()), {n},
                                                 std::array<int64_t, 1>{2}, [&] { released++; });
    add_kernel().launch_async(on(Target::sm_90), out.partition<128>(), in, strided).detach();
  }  // the tensors go while the kernel may still run: the callbacks wait for it
  synchronize();
  CHECK(released == 3);
  std::vector<float> got(n);
  out_buf.download(std::span<float>(got));
  CHECK(got[0] == 0.0f);
  CHECK(got[n - 1] == static_cast<float>(4 * (n - 1)));
}

TEST_CASE("tessera launches on a foreign CUDA stream, beside foreign work on borrowed tensors", "[gpu][interop]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  detail::CudaDriver& d = detail::CudaDriver::get();
  d.make_current();
  detail::CUstream raw = nullptr;
  d.check(d.cuStreamCreate(&raw, detail::kStreamNonBlocking), "cuStreamCreate");
  {
    Stream foreign = Stream::from_cuda(raw);
    const int64_t n = 4096;
    auto x = iota_tensor(n);
    Tensor<float, 1> y({n}), z({n});
    LaunchOptions o = on(Target::sm_90);
    o.stream = foreign;
    auto h = add_one_kernel().launch_async(o, y.partition<128>(), x);
    CHECK(h.event().completion()->queue == 2 * foreign.id() + 1);  // its GPU side
    // "Foreign" work (an async copy standing in for cuBLAS) overwrites y on the same stream.
    std::vector<float> sevens(n, 7.0f);
    {
      ForeignBorrow b = borrow_for_device(y, foreign);
      d.check(d.cuMemcpyHtoDAsync_v2(reinterpret_cast<detail::CUdeviceptr>(b.device_ptr()), sevens.data(), n * sizeof(float),
                                     raw),
              "cuMemcpyHtoDAsync");
      CHECK_THROWS_WITH(add_one_kernel().launch(on(Target::sm_90), z.partition<128>(), y), Contains("has not ended"));
    }
    // Ordered after the foreign copy by the event the borrow recorded, on a pool stream.
    add_one_kernel().launch(on(Target::sm_90), z.partition<128>(), y);
    CHECK(std::as_const(z)(n - 1) == 8.0f);
    foreign.synchronize();
  }
  d.check(d.cuStreamDestroy_v2(raw), "cuStreamDestroy");
}
