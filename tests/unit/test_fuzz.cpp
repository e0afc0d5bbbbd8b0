// test_fuzz.cpp: short fixed-seed runs of the kernel fuzzer (tests/fuzz/): generated kernels
// against the reference interpreter on the CPU target and the GPU, and mutated texts, which must
// run or throw tessera::Error, and checks of the reference's element operations. The time-bounded
// runs with new seeds are the ctest tests fuzz.*.
#include <cmath>

#include "ast_mutator.h"
#include "execution_helpers.h"
#include "fuzz_runner.h"
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

static void body_fuzz(Target target) {
  for (uint64_t seed = 1; seed <= 16; ++seed) {
    const FuzzCase c = generate_kernel(seed);
    const Outcome r = run_case(c, target);
    INFO(describe(c) << r.report);
    CHECK(r.kind == Outcome::Kind::pass);
  }
}
TESSERA_TARGET_TEST_CASE("generated kernels match the reference interpreter (seeds 1-16)", "[fuzz]", body_fuzz)

TEST_CASE("mutated kernel texts run or throw tessera::Error (seeds 1-40)", "[fuzz][cpu]") {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    Rng rng(seed ^ 0x6a09e667f3bcc909ull);
    const FuzzCase m = with_ast(generate_kernel(seed), mutate_ast(generate_kernel(seed).ast, rng));
    const LaunchOnly r = launch_only(m, Target::cpu);
    INFO(describe(m) << r.message);
    CHECK(r.ok);
  }
}
