// test_launch_safety.cpp: the host side of a launch under hostile input ([safety]).
//  - Outputs whose elements may overlap (from_device with a zero stride, rows overlapping), and
//    outputs sharing foreign device memory with another argument, are refused at launch, before any
//    memory is touched (fake device pointers on the CPU target), naming the kernel, the parameter
//    and the unsafe opt-out; legal views (slices, transposes, padded rows) are still accepted.
//  - Sizes whose element count or bytes overflow, and grids past 2^31-1 / 65535 programs, are
//    errors before anything is allocated.
//  - A new tensor commits no memory until it is used; host memory that cannot be had is
//    std::bad_alloc, device memory an Error naming the bytes asked and the bytes free.
//  - A host thread the system refuses (injected through execution/threads.h) slows the CPU
//    target down or fails one launch with an Error; the process and the tensors stay usable.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <utility>

#include "execution/output_overlap.h"
#include "driver/cuda_driver.h"
#include "execution_helpers.h"
#include "execution/threads.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

auto copy() {
  return kernel("safety_copy", [](auto out, auto a) { return out.store(a.load_like(out)); });
}
auto plus_one() {
  return kernel("safety_plus_one", [](auto out, auto a) { return out.store(a.load_like(out) + c<1>); });
}
auto two_outputs() {
  return kernel("safety_two_outputs", [](auto o1, auto o2, auto a) {
    return seq(o1.store(a.load_like(o1)), o2.store(a.load_like(o2) + c<1>));
  });
}

// A device address that is never dereferenced: the checks must fire before any memory is touched.
void* fake_address(std::uintptr_t byte_offset = 0) { return reinterpret_cast<void*>(0x100000 + byte_offset); }

std::optional<detail::SelfOverlap> overlap(std::vector<int64_t> shape, std::vector<int64_t> strides) {
  return detail::self_overlap(shape, strides);
}

// The process's resident memory in bytes (Linux).
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST_CASE("the sufficient test for outputs whose elements overlap", "[safety]") {
  CHECK_FALSE(overlap({4, 8}, {8, 1}));        // row-major
  CHECK_FALSE(overlap({4, 8}, {16, 1}));       // padded rows
  CHECK_FALSE(overlap({8, 4}, {1, 8}));        // transposed
  CHECK_FALSE(overlap({1, 8}, {0, 1}));        // a dimension of size 1 may have any stride
  CHECK_FALSE(overlap({0, 8}, {0, 0}));        // no element at all
  CHECK_FALSE(overlap({2, 3, 4}, {1, 2, 6}));  // column-major
  auto zero = overlap({8}, {0});
  REQUIRE(zero);
  CHECK(zero->dim == 0);
  CHECK(zero->stride == 0);
  auto half = overlap({4, 8}, {4, 1});  // rows overlapping by half
  REQUIRE(half);
  CHECK(half->dim == 0);
  CHECK(half->span == 7);
  CHECK(overlap({4, 4}, {1, 1}));                      // equal strides
  CHECK_FALSE(overlap({2, 2}, {3, 2}));                // offsets 0 2 3 5
  CHECK(overlap({3, 2}, {2, 3}));  // offsets 0 2 4 3 5 7: injective, but interleaved: refused (a sufficient test)
  CHECK(overlap({2, INT64_MAX / 2}, {INT64_MAX, 1}));  // past int64
}

TEST_CASE("an output whose elements overlap is refused before any memory is touched", "[safety][cpu]") {
  Tensor<float, 1> x({8});
  auto broadcast = Tensor<float, 1>::from_device(fake_address(), {8}, std::array<int64_t, 1>{0});
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, broadcast.partition<4>(), x),
                    Contains("kernel 'safety_copy'") && Contains("output parameter 0") &&
                        Contains("dimension 0 has stride 0") && Contains("race") &&
                        Contains("tessera::unsafe::cuda_kernel"));
  Tensor<float, 2> m({4, 8});
  auto rows = Tensor<float, 2>::from_device(fake_address(), {4, 8}, std::array<int64_t, 2>{4, 1});
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, rows.partition<2, 8>(), m),
                    Contains("output parameter 0 (shape [4 8], strides [4 1])") &&
                        Contains("stride 4, not more than 7"));
  // Asynchronous launches and compile() check the same way.
  CHECK_THROWS_WITH(copy().launch_async(on(Target::cpu), rows.partition<2, 8>(), m), Contains("output parameter 0"));
  CHECK_THROWS_WITH(copy().compile(Target::cpu, rows.partition<2, 8>(), m), Contains("output parameter 0"));
  // On the CPU target a foreign output would be downloaded first, which needs a GPU (a fake
  // address would fault there): the message above shows that the check came before.
  // The same memory read as an input is fine: inputs may overlap.
  Tensor<float, 2> y({4, 8});
  CHECK_NOTHROW(copy().compile(Target::cpu, y.partition<2, 8>(), rows));
  auto padded = Tensor<float, 2>::from_device(fake_address(), {4, 8}, std::array<int64_t, 2>{16, 1});
  CHECK_NOTHROW(copy().compile(Target::cpu, padded.partition<2, 8>(), m));
}

TEST_CASE("an output sharing foreign memory with another argument is refused", "[safety][cpu]") {
  auto out = Tensor<float, 1>::from_device(fake_address(), {64});                  // bytes [0, 256)
  auto overlapping = Tensor<float, 1>::from_device(fake_address(128), {64});       // [128, 384)
  auto adjacent = Tensor<float, 1>::from_device(fake_address(256), {64});          // [256, 512)
  CHECK_THROWS_WITH(copy().compile(Target::cpu, out.partition<16>(), overlapping),
                    Contains("kernel 'safety_copy'") && Contains("output parameter 0") &&
                        Contains("overlaps input parameter 1") && Contains("from_device") && Contains("read") &&
                        Contains("tessera::unsafe::cuda_kernel"));
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, overlapping.partition<16>(), out),
                    Contains("output parameter 0") && Contains("overlaps input parameter 1"));
  CHECK_NOTHROW(copy().compile(Target::cpu, out.partition<16>(), adjacent));
  // Two outputs over the same memory: one written while the other is written.
  CHECK_THROWS_WITH(two_outputs().compile(Target::cpu, out.partition<16>(), overlapping.partition<16>(), adjacent),
                    Contains("output parameter 0") && Contains("overlaps output parameter 1") && Contains("written"));
  // Inputs may share memory: a copy reading two overlapping wrappers into a tensor of its own.
  Tensor<float, 1> z({64});
  auto add = kernel("safety_add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); });
  CHECK_NOTHROW(add.compile(Target::cpu, z.partition<16>(), out, overlapping));
  // Views of one foreign storage are one tensor (the alias rule, as for tessera's own tensors).
  auto first = out.slice(0, 0, 32), second = out.slice(0, 32, 64);
  CHECK_THROWS_WITH(copy().compile(Target::cpu, first.partition<16>(), second), Contains("aliases input parameter 1"));
}

TEST_CASE("legal output views are still accepted and correct", "[safety][cpu]") {
  const int64_t r = 40, cols = 24;
  Tensor<float, 2> x({cols, r});
  for (int64_t i = 0; i < cols * r; ++i) x.data()[i] = static_cast<float>(i);
  // A transposed output: out^T = x + 1.
  Tensor<float, 2> out({r, cols});
  Tensor<float, 2> out_t = out.transposed();
  plus_one().launch_on(Target::cpu, out_t.partition<8, 16>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < cols; ++j) bad += out(i, j) != x(j, i) + 1;
  CHECK(bad == 0);
  // A sliced output (columns 5..20 of rows 3..30): the rest stays zero.
  Tensor<float, 2> big({r, cols});
  Tensor<float, 2> window = big.slice(0, 3, 30).slice(1, 5, 20);
  Tensor<float, 2> src({27, 15});
  for (int64_t i = 0; i < 27 * 15; ++i) src.data()[i] = static_cast<float>(i);
  plus_one().launch_on(Target::cpu, window.partition<8, 8>(), src);
  bad = 0;
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      const bool inside = i >= 3 && i < 30 && j >= 5 && j < 20;
      bad += big(i, j) != (inside ? src(i - 3, j - 5) + 1 : 0.0f);
    }
  CHECK(bad == 0);
}

TEST_CASE("sizes that overflow are errors before anything is allocated", "[safety][cpu]") {
  const int64_t two32 = int64_t{1} << 32, two31 = int64_t{1} << 31;
  CHECK_THROWS_WITH((Tensor<float, 2>({two32, two32})),
                    Contains("tessera::Tensor") && Contains("[4294967296 4294967296]") && Contains("overflow"));
  // 2^62 elements fit int64, their 2^64 bytes do not.
  CHECK_THROWS_WITH((Tensor<float, 2>({two31, two31})), Contains("[2147483648 2147483648]") && Contains("overflow"));
  CHECK_THROWS_WITH((Tensor<int32_t, 3>({int64_t{1} << 21, int64_t{1} << 21, int64_t{1} << 21})),
                    Contains("overflow"));
  CHECK_THROWS_WITH((Tensor<float, 1>({-3})), Contains("negative size -3"));
  // No element: no overflow either.
  CHECK((Tensor<float, 3>({two32, two32, 0})).numel() == 0);
  // from_device: the element count, and the extent its strides reach.
  CHECK_THROWS_WITH((Tensor<float, 2>::from_device(fake_address(), {two32, two32})),
                    Contains("from_device") && Contains("overflow"));
  CHECK_THROWS_WITH((Tensor<float, 1>::from_device(fake_address(), {4}, std::array<int64_t, 1>{int64_t{1} << 62})),
                    Contains("from_device") && Contains("strides [4611686018427387904]") &&
                        Contains("reach past 2^63-1 bytes"));
  // reshape: a product that wraps to the element count is no longer taken for it.
  Tensor<float, 1> empty({0});
  CHECK_THROWS_WITH((std::move(empty).reshape<2>({two32, two32})), Contains("reshape") && Contains("overflow"));
}

TEST_CASE("new tensors commit no memory until used; host memory that cannot be had is bad_alloc",
          "[safety][cpu]") {
  Tensor<float, 1> x({1 << 20});
  CHECK(x.storage()->zeros_unallocated());
  CHECK(std::as_const(x)(12345) == 0.0f);  // the first host access makes the (zeroed) host copy
  CHECK_FALSE(x.storage()->zeros_unallocated());
  // A CPU launch reads a new tensor as zeros.
  Tensor<float, 1> fresh({1000}), y({1000});
  plus_one().launch_on(Target::cpu, y.partition<128>(), fresh);
  auto v = y.to_vector();
  CHECK(std::all_of(v.begin(), v.end(), [](float f) { return f == 1.0f; }));
  // 2^50 bytes (1 PiB) fit the sizes' checks; no memory until the host needs it, then bad_alloc.
  const int64_t resident = resident_bytes();
  Tensor<float, 1> huge({int64_t{1} << 48});
  CHECK(resident_bytes() - resident < (int64_t{64} << 20));
  CHECK_THROWS_AS(huge.data(), std::bad_alloc);
  CHECK_THROWS_AS(huge.fill(1.0f), std::bad_alloc);
  // And the tensor (and the process) are still usable after that.
  CHECK(huge.storage()->zeros_unallocated());
}

TEST_CASE("grids past 2^31-1 programs along x or 65535 along y or z are errors on the CPU target too",
          "[safety][cpu]") {
  // No memory is committed by these tensors (the launch is refused before they are used).
  const int64_t n = int64_t{1} << 31;
  Tensor<float, 1> x({n}), y({n});
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, y.partition<1>(), x),
                    Contains("kernel 'safety_copy'") && Contains("grid of [2147483648 1 1] programs") &&
                        Contains("2^31-1"));
  CHECK(y.storage()->zeros_unallocated());
  Tensor<float, 2> a({1, 65536}), b({1, 65536});
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, b.partition<1, 1>(), a),
                    Contains("grid of [1 65536 1] programs") && Contains("65535"));
  Tensor<float, 3> p({1, 1, 65536}), q({1, 1, 65536});
  CHECK_THROWS_WITH(copy().launch_on(Target::cpu, q.partition<1, 1, 1>(), p), Contains("grid of [1 1 65536] programs"));
  // At the limit, on y: runs.
  Tensor<float, 2> e({2, 65535}), f({2, 65535});
  for (int64_t i = 0; i < 2 * 65535; ++i) e.data()[i] = static_cast<float>(i % 1000);
  plus_one().launch_on(Target::cpu, f.partition<2, 1>(), e);
  CHECK(f(1, 65534) == e(1, 65534) + 1);
}

TEST_CASE("the CPU target runs its programs on fewer threads when the system refuses threads", "[safety][cpu]") {
  auto x = iota_tensor(1 << 16);
  Tensor<float, 1> y({1 << 16});
  detail::fail_next_thread_starts(1000);
  plus_one().launch_on(Target::cpu, y.partition<64>(), x);  // 1024 programs: normally on several threads
  detail::fail_next_thread_starts(0);
  int64_t bad = 0;
  for (int64_t i = 0; i < (1 << 16); ++i) bad += y(i) != x(i) + 1;
  CHECK(bad == 0);
}

TEST_CASE("a stream whose worker thread cannot be started fails the launch, and stays usable", "[safety][cpu]") {
  auto x = iota_tensor(4096);
  Tensor<float, 1> y({4096});
  Stream s = Stream::create();  // its worker starts with its first CPU task
  LaunchOptions o = on(Target::cpu);
  o.stream = s;
  detail::fail_next_thread_starts(1);
  CHECK_THROWS_WITH(plus_one().launch_async(o, y.partition<128>(), x),
                    Contains("kernel 'safety_plus_one'") && Contains("could not start a host thread") &&
                        Contains("CPU worker"));
  detail::fail_next_thread_starts(0);
  // Nothing was recorded: host access does not wait for the launch that failed.
  y(0) = 5;
  CHECK(y(0) == 5);
  s.synchronize();
  plus_one().launch_async(o, y.partition<128>(), x).wait();
  CHECK(y(4095) == 4096.0f);
}

TEST_CASE("outputs overlapping in device memory are refused on the GPU", "[safety][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  detail::CudaDriver& d = detail::CudaDriver::get();
  const int64_t n = 4096;
  detail::DeviceBuffer buf(d, 2 * n * sizeof(float));
  buf.fill(0);
  d.check(d.cuCtxSynchronize(), "cuCtxSynchronize");
  auto* base = reinterpret_cast<float*>(buf.ptr());
  const LaunchOptions gpu = on(Target::sm_90);
  auto x = iota_tensor(n);
  {
    auto broadcast = Tensor<float, 1>::from_device(base, {n}, std::array<int64_t, 1>{0});
    CHECK_THROWS_WITH(copy().launch(gpu, broadcast.partition<128>(), x), Contains("dimension 0 has stride 0"));
    auto rows = Tensor<float, 2>::from_device(base, {64, 64}, std::array<int64_t, 2>{32, 1});
    Tensor<float, 2> m({64, 64});
    CHECK_THROWS_WITH(copy().launch(gpu, rows.partition<16, 64>(), m), Contains("output parameter 0"));
    auto lo = Tensor<float, 1>::from_device(base, {n});
    auto mid = Tensor<float, 1>::from_device(base + n / 2, {n});
    CHECK_THROWS_WITH(copy().launch(gpu, mid.partition<128>(), lo), Contains("overlaps input parameter 1"));
    // Disjoint halves of one allocation: a legal launch, with the right result.
    auto hi = Tensor<float, 1>::from_device(base + n, {n});
    plus_one().launch(gpu, lo.partition<128>(), x);
    plus_one().launch(gpu, hi.partition<128>(), lo);
    CHECK(std::as_const(hi)(n - 1) == static_cast<float>(n - 1) + 2);
  }
  synchronize();
}

TEST_CASE("GPU-only tensors commit no host memory; too large a tensor is an Error naming the bytes",
          "[safety][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const LaunchOptions gpu = on(Target::sm_90);
  auto fill = kernel("safety_fill", [](auto out) { return out.store(full<DType::f32, 1024>(c<2>)); });
  {
    // 2 GiB in and 2 GiB out, read and written on the GPU only: the input is zeroed on the device.
    const int64_t n = int64_t{1} << 29;
    Tensor<float, 1> x({n}), y({n});
    const int64_t resident = resident_bytes();
    plus_one().launch(gpu, y.partition<1024>(), x);
    fill.launch(gpu, x.partition<1024>());
    plus_one().launch(gpu, y.partition<1024>(), x);
    CHECK(resident_bytes() - resident < (int64_t{256} << 20));
    CHECK(x.storage()->zeros_unallocated() == false);  // written on the device
    CHECK(std::as_const(y)(n - 1) == 3.0f);            // downloaded now
  }
  // 160 GB, more than the GPU has: an Error naming the kernel, the bytes and the free memory; no
  // host memory is committed for it, and the process goes on.
  Tensor<float, 1> huge({40'000'000'000});
  const int64_t resident = resident_bytes();
  CHECK_THROWS_WITH(fill.launch(gpu, huge.partition<1024>()),
                    Contains("kernel 'safety_fill'") && Contains("cuMemAlloc of 160000000000 bytes") &&
                        Contains("free"));
  CHECK(resident_bytes() - resident < (int64_t{64} << 20));
  Tensor<float, 1> small({4096});
  fill.launch(gpu, small.partition<1024>());
  CHECK(std::as_const(small)(4095) == 2.0f);
}
