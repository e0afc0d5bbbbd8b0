// test_device_functions.cpp: tile kernels calling device functions written in CUDA C++ or PTX
// (expr/call_expr.h), applied elementwise and linked with nvJitLink.
//
// Without a GPU: the code travels in the AST (so in the cache key), compiles and links to cubins
// for sm_90 and sm_100a; the CPU target refuses such kernels with a clear error; one name with
// two codes is an error; a tensor-core GEMM with a call in its epilogue loads its linked cubin. On a
// GPU ([gpu]): results against a host reference, with broadcasting, a c<V> argument, i32
// arguments, a PTX function and that GEMM.
#include <array>

#include "compiler/kernels.h"
#include "execution_helpers.h"

using namespace tessera;
using Catch::Matchers::Contains;
using exec_test::toolchain_present;

namespace {

constexpr auto twice_plus = cuda_function<"twice_plus", R"(
extern "C" __device__ float twice_plus(float x, float y) { return 2.0f * x + y; }
)", DType::f32, DType::f32, DType::f32>;

// i32 in, i32 out, with a helper of its own.
constexpr auto collatz = cuda_function<"collatz_step", R"(
__device__ static int odd(int n) { return n & 1; }
extern "C" __device__ int collatz_step(int n) { return odd(n) ? 3 * n + 1 : n / 2; }
)", DType::i32, DType::i32>;

constexpr auto plus_one = ptx_function<"plus_one", R"(
.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 func_retval0) plus_one(.param .b32 plus_one_param_0)
{
  .reg .f32 %f<3>;
  ld.param.f32 %f1, [plus_one_param_0];
  add.rn.f32 %f2, %f1, 0f3F800000;
  st.param.f32 [func_retval0], %f2;
  ret;
}
)", DType::f32, DType::f32>;

// Code that does not compile, and code that does not define the declared name.
constexpr auto broken = cuda_function<"broken", R"(extern "C" __device__ float broken(float x) { return x +; })",
                                      DType::f32, DType::f32>;
constexpr auto misnamed = cuda_function<"misnamed", R"(extern "C" __device__ float other(float x) { return x; })",
                                        DType::f32, DType::f32>;

// A different code under the name twice_plus.
constexpr auto twice_plus_other = cuda_function<"twice_plus", R"(
extern "C" __device__ float twice_plus(float x, float y) { return x + y; }
)", DType::f32, DType::f32, DType::f32>;

auto calls_kernel() {
  return kernel("device_calls", [](auto o, auto a, auto b) {
    auto x = a.load_like(o);
    auto row = load<1, 64>(b, c<0>, program_id<1>());  // broadcast over the tile's rows
    return o.store(twice_plus(x, row) + twice_plus(x, c<0.5>));
  });
}

}  // namespace

TEST_CASE("device function code travels in the kernel's AST", "[device_function][ast]") {
  constexpr std::string_view ast =
      decltype(calls_kernel())::ast<Partition<float, 2, 16, 64>, const Tensor<float, 2>&, const Tensor<float, 2>&>();
  CHECK(ast.find("(call f32 [16 64] twice_plus cuda ") != std::string_view::npos);
  // The code, hex-encoded: "\nextern" is 0a65787465726e.
  CHECK(ast.find("cuda 0a65787465726e") != std::string_view::npos);
}

TEST_CASE("kernels calling device functions compile and link for sm_90 and sm_100a", "[device_function][compile]") {
  if (!toolchain_present()) return;
  Tensor<float, 2> x({100, 200}), b({1, 200}), z({100, 200});
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    CompiledArtifact a = calls_kernel().compile(t, z.partition<16, 64>(), x, b);
    CHECK_THAT(a.ptx, Contains(".extern .func") && Contains("twice_plus"));
    REQUIRE(a.cubin.size() > 4);
    CHECK(std::string(a.cubin.data() + 1, 3) == "ELF");
  }
  Tensor<int32_t, 1> n({1000}), m({1000});
  auto ki = kernel("collatz", [](auto o, auto a) { return o.store(collatz(a.load_like(o))); });
  CHECK(ki.compile(Target::sm_90, m.partition<256>(), n).cubin.size() > 4);
  Tensor<float, 1> f({1000}), g({1000});
  auto kp = kernel("ptx_call", [](auto o, auto a) { return o.store(plus_one(a.load_like(o))); });
  CHECK(kp.compile(Target::sm_90, g.partition<256>(), f).cubin.size() > 4);
}

TEST_CASE("the CPU target refuses kernels that call device functions", "[device_function][errors]") {
  Tensor<float, 2> x({10, 10}), b({1, 10}), z({10, 10});
  CHECK_THROWS_WITH(calls_kernel().launch_on(Target::cpu, z.partition<16, 64>(), x, b),
                    Contains("kernel 'device_calls'") && Contains("'twice_plus'") &&
                        Contains("only GPU targets"));
}

TEST_CASE("one device function name with two codes is an error", "[device_function][errors]") {
  Tensor<float, 1> x({10}), z({10});
  auto k = kernel("two_codes", [](auto o, auto a) {
    auto v = a.load_like(o);
    return o.store(twice_plus(v, v) + twice_plus_other(v, v));
  });
  CHECK_THROWS_WITH(k.compile(Target::sm_90, z.partition<128>(), x),
                    Contains("kernel 'two_codes'") && Contains("'twice_plus' is declared with two different codes"));
}

TEST_CASE("device functions run elementwise on the GPU", "[device_function][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const int64_t R = 100, C = 200;
  Tensor<float, 2> x({R, C}), b({1, C}), z({R, C});
  for (int64_t i = 0; i < R * C; ++i) x.data()[i] = static_cast<float>(i % 97) * 0.25f - 3.0f;
  for (int64_t j = 0; j < C; ++j) b.data()[j] = static_cast<float>(j) * 0.5f;
  calls_kernel().launch_on(Target::sm_90, z.partition<16, 64>(), x, b);
  int64_t bad = 0;
  for (int64_t i = 0; i < R; ++i)
    for (int64_t j = 0; j < C; ++j) {
      float v = x(i, j);
      bad += z(i, j) != (2.0f * v + b(0, j)) + (2.0f * v + 0.5f);
    }
  CHECK(bad == 0);

  Tensor<int32_t, 1> n({1000}), m({1000});
  for (int64_t i = 0; i < 1000; ++i) n.data()[i] = static_cast<int32_t>(i + 1);
  kernel("collatz", [](auto o, auto a) { return o.store(collatz(a.load_like(o))); })
      .launch_on(Target::sm_90, m.partition<256>(), n);
  bad = 0;
  for (int64_t i = 0; i < 1000; ++i) bad += m(i) != ((i + 1) % 2 ? 3 * (i + 1) + 1 : (i + 1) / 2);
  CHECK(bad == 0);

  Tensor<float, 1> f({1000}), g({1000});
  for (int64_t i = 0; i < 1000; ++i) f.data()[i] = static_cast<float>(i) * 0.5f;
  kernel("ptx_call", [](auto o, auto a) { return o.store(plus_one(a.load_like(o))); })
      .launch_on(Target::sm_90, g.partition<256>(), f);
  bad = 0;
  for (int64_t i = 0; i < 1000; ++i) bad += g(i) != f(i) + 1.0f;
  CHECK(bad == 0);
}

TEST_CASE("device function code that does not compile or link is a clear error", "[device_function][errors]") {
  if (!toolchain_present()) return;
  Tensor<float, 1> x({100}), z({100});
  CHECK_THROWS_WITH(
      kernel("uses_broken", [](auto o, auto a) { return o.store(broken(a.load_like(o))); })
          .compile(Target::sm_90, z.partition<128>(), x),
      Contains("kernel 'uses_broken'") && Contains("device function 'broken' does not compile") &&
          Contains("expected an expression"));
  CHECK_THROWS_WITH(
      kernel("uses_misnamed", [](auto o, auto a) { return o.store(misnamed(a.load_like(o))); })
          .compile(Target::sm_90, z.partition<128>(), x),
      Contains("kernel 'uses_misnamed'") && Contains("('misnamed') failed") && Contains("Undefined reference"));
}

namespace {

// A 128 x 128 product of bf16 tiles with a device function in its epilogue. On sm_90 the wgmma
// lowering (whose code is loaded as PTX) does not take an epilogue with calls; the mma.sync GEMM
// lowering (cp.async, ldmatrix) does, with a call per accumulator element.
auto gemm_calls_kernel() {
  return kernel("gemm_device_call", [](auto o, auto a, auto b) {
    auto acc = for_range(
        (dim<1>(a) + c<63>) / c<64>,
        [=](auto k, auto acc) { return mma(load<128, 64>(a, program_id<0>(), k), load<64, 128>(b, k, program_id<1>()), acc); },
        full<DType::f32, 128, 128>(c<0.0>));
    return o.store(twice_plus(acc, c<1.0>));
  });
}

}  // namespace

TEST_CASE("a tensor-core GEMM that calls a device function loads its linked cubin", "[device_function][compile]") {
  if (!toolchain_present()) return;
  Tensor<bfloat16, 2> a({256, 128}), b({128, 256});
  Tensor<float, 2> out({256, 256});
  const CompiledArtifact art = gemm_calls_kernel().compile(Target::sm_90, out.partition<128, 128>(), a, b);
  CHECK_THAT(art.ptx, Contains("mma.sync.aligned") && Contains("ldmatrix") && Contains("cp.async") &&
                         Contains(".extern .func") && Contains("call.uni") && Contains("twice_plus"));
  CHECK_THAT(art.ptx, !Contains("wgmma"));
  // The PTX alone does not hold the device function: the launch loads the cubin nvJitLink linked.
  const std::array<detail::ArgDesc, 3> args{detail::to_arg(out.partition<128, 128>()), detail::to_arg(a),
                                            detail::to_arg(b)};
  const auto compiled = detail::lookup_or_compile(
      {"gemm_device_call",
       decltype(gemm_calls_kernel())::ast<Partition<float, 2, 128, 128>, Tensor<bfloat16, 2>&, Tensor<bfloat16, 2>&>(),
       args},
      Target::sm_90);
  CHECK(compiled->code.linked);
  CHECK_FALSE(compiled->code.loads_ptx);
  CHECK(compiled->code.cubin.size() > 4);
  // The other GPUs' mma.sync lowering takes it the same way.
  for (Target t : {Target::sm_80, Target::sm_100a}) {
    INFO(to_string(t));
    const CompiledArtifact other = gemm_calls_kernel().compile(t, out.partition<128, 128>(), a, b);
    CHECK_THAT(other.ptx, Contains("mma.sync.aligned") && Contains("ldmatrix") && Contains("call.uni"));
  }
}

// The GEMM above into an M x N view at (margin, margin) of a tensor filled with -7, against an
// exact reference: small integers and halves, so every product and sum is exact in f32. The
// elements around the view must keep their -7. Returns the elements that differ.
static int64_t gemm_calls_mismatches(int64_t m, int64_t n, int64_t k, int64_t margin) {
  Tensor<bfloat16, 2> a({m, k}), b({k, n});
  for (int64_t i = 0; i < m * k; ++i) a.data()[i] = bfloat16(static_cast<float>(i % 7) - 3.0f);
  for (int64_t i = 0; i < k * n; ++i) b.data()[i] = bfloat16(static_cast<float>(i % 5) * 0.5f - 1.0f);
  Tensor<float, 2> big({m + 2 * margin, n + 2 * margin});
  for (int64_t i = 0; i < big.shape(0) * big.shape(1); ++i) big.data()[i] = -7.0f;
  {
    auto view = big.slice(0, margin, margin + m).slice(1, margin, margin + n);
    gemm_calls_kernel().launch(view.partition<128, 128>(), a, b);
  }
  int64_t bad = 0;
  for (int64_t i = 0; i < big.shape(0); ++i)
    for (int64_t j = 0; j < big.shape(1); ++j) {
      const int64_t r = i - margin, c = j - margin;
      float want = -7.0f;
      if (r >= 0 && r < m && c >= 0 && c < n) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += static_cast<double>(static_cast<float>(a(r, q))) * static_cast<float>(b(q, c));
        want = static_cast<float>(2 * s + 1);
      }
      bad += big(i, j) != want;
    }
  return bad;
}

TEST_CASE("a tensor-core GEMM that calls a device function runs on the GPU", "[device_function][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  // Whole tiles.
  CHECK(gemm_calls_mismatches(256, 256, 192, 0) == 0);
  // Ragged M, N and K (the last tiles partly outside the tensors; K not a multiple of the step),
  // into a view inside a larger tensor.
  CHECK(gemm_calls_mismatches(200, 136, 100, 4) == 0);
}
