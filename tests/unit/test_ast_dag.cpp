// test_ast_dag.cpp: kernels that reuse values serialize as DAGs (docs/ast-format.md: (let ID
// EXPR) at a value's first use, (ref TYPE ID) at the others) and compile in time linear in their
// size, not in their reuse.
//
// `t = t * t + t` twelve times is 24 operations whose plain tree has 3^12 leaves: this file
// compiling at all (g++ builds its AST text at compile time) is the first check, its text growing
// by a constant per level the second, and its results on the CPU target (and the GPU) against a
// host reference the third. Loops: a loop read through several results is written once, a value
// computed inside a loop body and used after it, and one loop body (one lambda) for two loops, whose
// shared nodes then name the second loop's carried value. The parser accepts lets and plain trees
// alike and rejects malformed lets and refs. A chain of 2000 elementwise operations (its text built
// here, as no C++ kernel is that deep) compiles for the CPU target and for sm_90 well within a
// minute each, timed and printed, and computes the right values.
#include "execution_helpers.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <string_view>

#include "frontend/ast.h"
#include "frontend/ast_nodes.h"
#include "text_count.h"

using text_count::occurrences;
using namespace tessera;

namespace {

using detail::InParam;
using detail::OutParam;

template <class... P, class Fn>
constexpr std::string_view ast_of(Fn) {
  return detail::kernel_ast<Fn, P...>::view();
}

// t * t + t, Levels times.
template <int Levels, class T>
constexpr auto grow(T t) {
  if constexpr (Levels == 0) return t;
  else return grow<Levels - 1>(t * t + t);
}
template <int Levels>
constexpr auto k_grow = [](auto out, auto x) { return out.store(grow<Levels>(x.load_like(out))); };
template <int Levels>
constexpr std::string_view grow_text =
    ast_of<OutParam<0, DType::f32, 1, 128>, InParam<1, DType::f32, 1>>(k_grow<Levels>);

float grow_reference(float t, int levels) {
  for (int i = 0; i < levels; ++i) t = t * t + t;
  return t;
}

bool close(float got, float want) { return std::abs(got - want) <= 1e-6f + 1e-5f * std::abs(want); }

// The chain (x + y + y + ... + y) of `ops` additions, as a plain tree.
std::string chain_text(int ops) {
  std::string e = "(load_like f32 [1024] 1 0)";
  for (int i = 0; i < ops; ++i) e = "(add f32 [1024] " + e + " (load_like f32 [1024] 2 0))";
  return "(kernel (params (out f32 1 [1024]) (in f32 1) (in f32 1)) (body (store 0 " + e + ")))";
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("a value used several times is written once: the text grows linearly with its uses", "[dag][ast]") {
  STATIC_REQUIRE(grow_text<1> ==
                 "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (mul f32 [128] "
                 "(load_like f32 [128] 1 0) (load_like f32 [128] 1 0)) (load_like f32 [128] 1 0)))))");
  STATIC_REQUIRE(grow_text<2> ==
                 "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (mul f32 [128] "
                 "(let 0 (add f32 [128] (mul f32 [128] (load_like f32 [128] 1 0) (load_like f32 [128] 1 0)) "
                 "(load_like f32 [128] 1 0))) (ref f32 [128] 0)) (ref f32 [128] 0)))))");
  // Each level adds one let, two refs and two operations: a constant, but for the digits of the IDs.
  const std::size_t step = grow_text<9>.size() - grow_text<8>.size();
  CHECK(grow_text<8>.size() - grow_text<7>.size() == step);
  CHECK(grow_text<12>.size() - grow_text<11>.size() == step + 3);  // IDs 10 and up have two digits
  CHECK(grow_text<12>.size() < 1100);
  CHECK(occurrences(grow_text<12>, "(let ") == 11);
  CHECK(occurrences(grow_text<12>, "(ref ") == 22);
  CHECK(occurrences(grow_text<12>, "(mul ") == 12);
}

static void grows_right(Target target) {
  auto k = kernel("dag_grow12", k_grow<12>);
  const int64_t n = 1000;
  auto x = exec_test::random_tensor<float, 1>({n}, -1, 0, 7);  // t * t + t stays in [-1/4, 0]
  Tensor<float, 1> y({n});
  k.launch_on(target, y.partition<128>(), x);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i) bad += !close(y(i), grow_reference(x(i), 12));
  CHECK(bad == 0);
}
TESSERA_TARGET_TEST_CASE("t = t * t + t twelve times computes the reference", "[dag]", grows_right)

namespace {

// A loop carrying two values, read through three results (two of them the same); the loop is
// written once and computed once.
constexpr auto k_two_results = [](auto out, auto x) {
  auto stats = for_range(dim<1>(x) / c<64>, [&](auto j, auto m, auto l) {
    auto t = load<16, 64>(x, program_id<0>(), j);
    auto m2 = maximum(m, max<1>(t));
    return carry(m2, l * exp(m - m2) + sum<1>(exp(t - m2)));
  }, full<DType::f32, 16, 1>(c<-1e30>), full<DType::f32, 16, 1>(c<0>));
  auto [m, l] = stats;
  return out.store(m + log(l) + get<0>(stats));
};
constexpr std::string_view two_results_text =
    ast_of<OutParam<0, DType::f32, 2, 16, 1>, InParam<1, DType::f32, 2>>(k_two_results);

// u is first used inside the loop body, then after the loop: the compiler computes it again there.
constexpr auto k_after_loop = [](auto out, auto x) {
  auto u = exp(x.load_like(out));
  auto acc = for_range(c<3>, [=](auto, auto a) { return a + u; }, full<DType::f32, 128>(c<0>));
  return out.store(acc * u);
};

// One body (one lambda, so one loop tag) for two loops one after the other: their yields are one
// node, which inside the second loop names the second loop's carried value.
constexpr auto halve_and_add = [](auto, auto a) { return a * c<0.5> + c<1>; };
constexpr auto k_same_body = [](auto out, auto x) {
  auto first = for_range(c<2>, halve_and_add, x.load_like(out));
  auto second = for_range(c<3>, halve_and_add, first * c<4>);
  return out.store(second - first);
};

}  // namespace

TEST_CASE("a loop read through several results is written once", "[dag][ast]") {
  CHECK(occurrences(two_results_text, "(for ") == 1);
  // Result 1 refers to the loop; the second read of result 0 is the same node as the first, a ref.
  CHECK(occurrences(two_results_text, "(result ") == 2);
  CHECK(two_results_text.find("(result f32 [16 1] 1 (ref f32 [16 1] ") != std::string_view::npos);
  CHECK(occurrences(two_results_text, "(let ") == 4);  // result 0, the loop, m2 and the loaded tile
  const std::string_view same_body = ast_of<OutParam<0, DType::f32, 1, 128>, InParam<1, DType::f32, 1>>(k_same_body);
  CHECK(occurrences(same_body, "(for ") == 2);
  CHECK(occurrences(same_body, "(carried ") == 1);  // the second loop's yield is a ref to the first's
}

static void loops_compute_right(Target target) {
  {
    auto k = kernel("dag_two_results", k_two_results);
    auto x = exec_test::random_tensor<float, 2>({40, 256}, -3, 3, 8);
    Tensor<float, 2> y({40, 1});
    k.launch_on(target, y.partition<16, 1>(), x);
    int64_t bad = 0;
    for (int64_t r = 0; r < 40; ++r) {
      float m = -1e30f, l = 0;
      for (int64_t j = 0; j < 256; ++j) m = std::max(m, x(r, j));
      for (int64_t j = 0; j < 256; ++j) l += std::exp(x(r, j) - m);
      bad += !close(y(r, 0), m + std::log(l) + m);
    }
    CHECK(bad == 0);
  }
  {
    auto k = kernel("dag_after_loop", k_after_loop);
    auto x = exec_test::random_tensor<float, 1>({300}, -2, 2, 9);
    Tensor<float, 1> y({300});
    k.launch_on(target, y.partition<128>(), x);
    int64_t bad = 0;
    for (int64_t i = 0; i < 300; ++i) {
      const float u = std::exp(x(i));
      bad += !close(y(i), (u + u + u) * u);
    }
    CHECK(bad == 0);
  }
  {
    auto k = kernel("dag_same_body", k_same_body);
    auto x = exec_test::random_tensor<float, 1>({300}, -2, 2, 10);
    Tensor<float, 1> y({300});
    k.launch_on(target, y.partition<128>(), x);
    int64_t bad = 0;
    for (int64_t i = 0; i < 300; ++i) {
      float first = x(i);
      for (int k = 0; k < 2; ++k) first = first * 0.5f + 1;
      float second = first * 4;
      for (int k = 0; k < 3; ++k) second = second * 0.5f + 1;
      bad += !close(y(i), second - first);
    }
    CHECK(bad == 0);
  }
}
TESSERA_TARGET_TEST_CASE("loops with several results, values used after a loop, one body for two loops", "[dag]",
                         loops_compute_right)

// The value the kernel's first statement stores.
static const detail::Sexp& stored_value(const detail::KernelAst& ast) {
  return detail::StoreNode(*detail::BodyNode(*ast.body).statements().begin()).value();
}

TEST_CASE("the parser makes one node of each distinct subtree, from lets or from a plain tree", "[dag][ast]") {
  const std::string plain =
      "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (mul f32 [128] (exp f32 [128] "
      "(load_like f32 [128] 1 0)) (exp f32 [128] (load_like f32 [128] 1 0))) (exp f32 [128] (load_like f32 [128] 1 "
      "0))))))";
  const std::string dag =
      "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (mul f32 [128] (let 0 (exp f32 "
      "[128] (load_like f32 [128] 1 0))) (ref f32 [128] 0)) (ref f32 [128] 0)))))";
  for (const std::string& text : {plain, dag}) {
    INFO(text);
    detail::KernelAst ast = detail::parse_ast("dag", text);
    const detail::BinaryNode add(stored_value(ast));
    const detail::BinaryNode mul(add.lhs());
    CHECK(&mul.lhs() == &mul.rhs());
    CHECK(&mul.lhs() == &add.rhs());
    CHECK(mul.lhs().head() == "exp");
  }
  // Lets take their IDs in the order they open; an outer let is bound when it closes.
  detail::KernelAst nested = detail::parse_ast(
      "dag", "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (add f32 [128] (let 0 (mul f32 [128] "
             "(let 1 (exp f32 [128] (load_like f32 [128] 1 0))) (ref f32 [128] 1))) (ref f32 [128] 0)))))");
  const detail::BinaryNode sum(stored_value(nested));
  CHECK(&sum.lhs() == &sum.rhs());
  CHECK(&detail::BinaryNode(sum.lhs()).lhs() == &detail::BinaryNode(sum.lhs()).rhs());
  auto rejects = [](const std::string& body, const std::string& what) {
    const std::string text = "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 " + body + ")))";
    CHECK_THROWS_WITH(detail::parse_ast("bad_dag", text), Catch::Contains("bad_dag") && Catch::Contains(what));
  };
  rejects("(ref f32 [128] 0)", "ref 0 before its let");
  rejects("(add f32 [128] (let 1 (exp f32 [128] (load_like f32 [128] 1 0))) (ref f32 [128] 1))",
          "let 1 where let 0 was expected");
  rejects("(add f32 [128] (let 0 (exp f32 [128] (load_like f32 [128] 1 0))) (ref f16 [128] 0))", "another type");
  rejects("(add f32 [128] (let 0 (exp f32 [128] (load_like f32 [128] 1 0))) (ref f32 [64] 0))", "another type");
  rejects("(let 0 (exp f32 [128] (ref f32 [128] 0)))", "ref 0 before its let");
  rejects("(add f32 [128] (let 0) (load_like f32 [128] 1 0))", "expected (let ID EXPR)");
  rejects("(add f32 [128] (let 0 (exp f32 [128] (load_like f32 [128] 1 0))) (ref f32 [128] x))", "expected (ref TYPE ID)");
}

TEST_CASE("a chain of 2000 elementwise operations compiles for the CPU and sm_90 within a minute",
          "[dag][compile][counts-compiles]") {
  const std::string text = chain_text(2000);
  // 3000 elements: ragged tiles (the kernel that tests bounds); 3072: whole tiles (its variant).
  for (const int64_t n : {int64_t{3000}, int64_t{3072}}) {
    INFO(n << " elements");
    auto x = exec_test::random_tensor<float, 1>({n}, -1, 1, 11);
    auto y = exec_test::random_tensor<float, 1>({n}, -1, 1, 12);
    Tensor<float, 1> z({n});
    auto out = z.partition<1024>();
    const std::array<detail::ArgDesc, 3> args{detail::to_arg(out), detail::to_arg(x), detail::to_arg(y)};
    for (Target target : {Target::cpu, Target::sm_90}) {
      LaunchOptions options;
      options.target = target;
      detail::LaunchRequest r{"dag_chain2000", text, args};
      r.options = &options;
      const auto t0 = std::chrono::steady_clock::now();
      CompiledArtifact art = detail::compile(r, target);
      const double s = seconds_since(t0);
      std::printf("2000-operation chain: %s compile %.2f s%s\n", art.target.c_str(), s,
                  art.from_disk_cache ? " (disk cache)" : "");
      CHECK(s < 60);
      if (target == Target::cpu) {
        detail::launch(r, target);
        int64_t bad = 0;
        for (int64_t i = 0; i < n; ++i) {
          float want = x(i);
          for (int k = 0; k < 2000; ++k) want += y(i);
          bad += !close(z(i), want);
        }
        CHECK(bad == 0);
      } else {
        CHECK(art.ptx.find(".entry") != std::string::npos);
      }
    }
  }
}
