// test_fuzz.cpp: short fixed-seed runs of the kernel fuzzer (tests/fuzz/): generated kernels
// against the reference interpreter on the CPU target and the GPU, and mutated texts, which must
// run or throw tessera::Error, and checks of the reference's element operations; GEMM-class
// kernels (gemm_generator.h) against the reference, on the GPU also through the mma.sync lowering
// (sm_80 and sm_89 PTX), and compiled for sm_80, sm_89 and sm_90, where enough of them take each
// tensor-core lowering. The time-bounded runs with new seeds are the ctest tests fuzz.*.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ast_mutator.h"
#include "execution_helpers.h"
#include "fuzz_runner.h"
#include "gemm_generator.h"
#include "kernel_generator.h"
#include "reference_interpreter.h"
#include "reference_ops.h"

using namespace tessera;
using namespace tessera::fuzz;

TEST_CASE("the kernel generator is deterministic and its kernels evaluate on the host", "[fuzz]") {
  for (uint64_t seed = 100; seed < 140; ++seed) {
    const FuzzCase a = generate_kernel(seed), b = generate_kernel(seed);
    INFO(describe(a));
    CHECK(a.ast == b.ast);
    CHECK_NOTHROW(interpret(a, OpContext{}));
  }
}

// The reference's float -> i32 cast: truncation, and no -0 (an integer has none), so that a float
// cast back from it is +0 (found by seeds 49620248716333 and 49620248716384 of fuzz_kernels).
TEST_CASE("the reference casts -0 and small negative floats to an integer zero", "[fuzz][cpu]") {
  for (double v : {-0.0, -0.75, 0.25}) {
    const Elem i = cast_op(DType::f32, DType::i32, Elem{v, 0});
    CHECK(i.v == 0);
    CHECK_FALSE(std::signbit(i.v));
    CHECK_FALSE(std::signbit(cast_op(DType::i32, DType::bf16, i).v));
  }
  CHECK(cast_op(DType::f32, DType::i32, Elem{-2.5, 0}).v == -2);
}

// The reference's casts to the 8-bit floats round once and saturate, as the kernels do; an f8
// input is stored as its code and read back as its value.
TEST_CASE("the reference casts to f8e4m3 and f8e5m2 saturate and round to nearest even", "[fuzz][cpu]") {
  CHECK(cast_op(DType::f32, DType::f8e4m3, Elem{500.0, 0}).v == 448);
  CHECK(cast_op(DType::f32, DType::f8e5m2, Elem{-1e9, 0}).v == -57344);
  CHECK(cast_op(DType::i32, DType::f8e4m3, Elem{17.0, 0}).v == 16);  // 17 is halfway: to the even 16
  CHECK(cast_op(DType::f8e5m2, DType::i32, Elem{-3.0, 0}).v == -3);
  CHECK(std::isnan(cast_op(DType::f32, DType::f8e4m3, Elem{std::numeric_limits<double>::quiet_NaN(), 0}).v));
  std::uint8_t code = 0;
  store_element(DType::f8e4m3, &code, 0, 0.3);
  CHECK(code == float8_e4m3(0.3f).bits);
  CHECK(load_element(DType::f8e4m3, &code, 0) == static_cast<float>(float8_e4m3(0.3f)));
}

static void body_fuzz(Target target) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const FuzzCase c = generate_kernel(seed);
    const Outcome r = run_case(c, target);
    INFO(describe(c) << r.report);
    CHECK(r.kind == Outcome::Kind::pass);
  }
}
TESSERA_TARGET_TEST_CASE("generated kernels match the reference interpreter (seeds 1-16)", "[fuzz]", body_fuzz)

TEST_CASE("the GEMM generator is deterministic and its kernels evaluate on the host", "[fuzz]") {
  for (uint64_t seed = 1; seed <= 24; ++seed) {
    const FuzzCase a = generate_gemm(seed), b = generate_gemm(seed);
    INFO(describe(a));
    CHECK(a.ast == b.ast);
    CHECK_NOTHROW(interpret(a, OpContext{}));
  }
}

static void gemm_fuzz(Target target) {
  std::vector<Target> targets{target};
  if (target != Target::cpu) targets.insert(targets.end(), {Target::sm_80, Target::sm_89});  // mma.sync's PTX
  for (Target t : targets)
    for (uint64_t seed = 1; seed <= 12; ++seed) {
      const FuzzCase c = generate_gemm(seed);
      const Outcome r = run_case(c, t);
      INFO(to_string(t) << ": " << describe(c) << r.report);
      CHECK(r.kind == Outcome::Kind::pass);
    }
}
TESSERA_TARGET_TEST_CASE("generated GEMM kernels match the reference interpreter (seeds 1-12)", "[fuzz][mma]", gemm_fuzz)

// Every generated GEMM compiles for sm_80, sm_89 and sm_90, and enough of them take each
// tensor-core lowering for the runs above to test it: TMA + wgmma on sm_90, mma.sync on sm_80 and
// sm_89, its 8-bit m16n8k32 on sm_89.
TEST_CASE("generated GEMM kernels compile and take the tensor-core lowerings", "[fuzz][mma][compile]") {
  if (!exec_test::toolchain_present()) return;
  int wgmma = 0, mma_sync = 0, mma_f8 = 0;
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const FuzzCase c = generate_gemm(seed);
    INFO(describe(c));
    std::string hopper, ampere, ada;
    REQUIRE_NOTHROW(hopper = compile_case(c, Target::sm_90).ptx);
    REQUIRE_NOTHROW(ampere = compile_case(c, Target::sm_80).ptx);
    REQUIRE_NOTHROW(ada = compile_case(c, Target::sm_89).ptx);
    wgmma += hopper.find("wgmma.mma_async") != std::string::npos;
    mma_sync += ampere.find("mma.sync.aligned") != std::string::npos;
    mma_f8 += ada.find("mma.sync.aligned.m16n8k32") != std::string::npos;
  }
  CHECK(wgmma >= 3);
  CHECK(mma_sync >= 4);
  CHECK(mma_f8 >= 2);
  UNSCOPED_INFO("of 16 kernels: " << wgmma << " wgmma on sm_90, " << mma_sync << " mma.sync on sm_80, " << mma_f8
                                  << " 8-bit mma.sync on sm_89");
}

TEST_CASE("mutated kernel texts run or throw tessera::Error (seeds 1-40)", "[fuzz][cpu]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed ^ 0x6a09e667f3bcc909ull);
    const FuzzCase m = with_ast(generate_kernel(seed), mutate_ast(generate_kernel(seed).ast, rng));
    const LaunchOnly r = launch_only(m, Target::cpu);
    INFO(describe(m) << r.message);
    CHECK(r.ok);
  }
}
