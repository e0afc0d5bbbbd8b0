// Tests of the tile DSL front end: the exact AST text (docs/ast-format.md) that
// tessera::detail::kernel_ast produces for kernels covering every node kind (values used again,
// as in softmax, written once as lets and refs; more in test_ast_dag.cpp), plus the dtype, shape
// and fixed_string helpers it is built from. Catch2 v2; main() is provided by another file.
#include <catch2/catch.hpp>

#include <limits>
#include <string_view>

#include "tessera/dsl.h"

namespace {

using namespace tessera;
using detail::InParam;
using detail::OutParam;
using detail::ScalarParam;

constexpr DType f32 = DType::f32, f16 = DType::f16, bf16 = DType::bf16, i32 = DType::i32, i1 = DType::i1;

// The AST text of kernel lambda k with parameter placeholders P...
template <class... P, class Fn>
constexpr std::string_view ast_of(Fn) { return detail::kernel_ast<Fn, P...>::view(); }

// ---- the kernels --------------------------------------------------------------------------------

constexpr auto k_add = [](auto out, auto x, auto y) {
  return out.store(x.load_like(out) + y.load_like(out));
};

constexpr auto k_scale = [](auto out, auto x) { return out.store(c<2.0> * x.load_like(out) + c<1>); };

constexpr auto k_broadcast = [](auto out, auto x, auto row, auto col, auto vec, auto s) {
  auto t = x.load_like(out);                            // [64 64]
  auto r = load<1, 64>(row, c<0>, program_id<1>());     // [1 64]
  auto k = load<64, 1>(col, program_id<0>(), c<0>);     // [64 1]
  auto v = load<64>(vec, program_id<1>());              // [64]: reshaped to [1 64], then broadcast
  return out.store(t + r * k + v - s);                  // s: rank 0
};

constexpr auto k_reduce = [](auto out, auto x) {
  auto t = load<64, 64>(x, program_id<0>(), c<0>);
  auto corner = min<0>(min<1>(t));                      // [1 1]
  return out.store(sum<1>(t) + max<-1>(t) - broadcast_to<64, 1>(corner));
};

constexpr auto k_softmax = [](auto out, auto x) {
  auto t = x.load_like(out);
  auto m = max<1>(t);
  auto e = exp(t - m);
  return out.store(e / sum<1>(e));
};

constexpr auto k_unary = [](auto out, auto x) {
  auto t = cast<f32>(x.load_like(out));
  return out.store(tanh(sqrt(abs(t))) + rsqrt(t) * log(t) - exp2(-t));
};

constexpr auto k_select = [](auto out, auto x, auto y) {
  auto t = x.load_like(out);
  auto u = y.load_like(out);
  auto keep = ((t > c<0>) && (t >= u)) || !(t == u) || (t != c<0.5>);
  auto low = (t < u) && (t <= c<1>);
  return out.store(select(keep, t, u * c<0.25>) + select(low, c<1>, t) + cast<f32>(low));
};

constexpr auto k_iota = [](auto out, auto x) {
  auto idx = iota<128>() + program_id<0>() * c<128>;
  return out.store(select(idx < dim<0>(x), x.load_like(out), c<0>));
};

constexpr auto k_shape = [](auto out, auto x) {
  auto t = load<64, 32>(x, program_id<1>(), program_id<0>());
  auto tt = transpose(t);                                 // [32 64]
  auto back = reshape<32, 64>(reshape<2048>(tt));
  auto colsum = reshape<64>(sum<0>(tt));                  // [64]
  return out.store(back + broadcast_to<32, 64>(colsum));
};

constexpr auto k_mma = [](auto out, auto a, auto b) {
  auto ta = load<64, 32>(a, program_id<0>(), c<0>);
  auto tb = load<32, 64>(b, c<0>, program_id<1>());
  return out.store(mma(ta, tb, out.load()));
};

constexpr auto k_gemm = [](auto out, auto a, auto b) {
  auto acc = for_range(dim<1>(a) / c<32>, [&](auto k, auto acc_k) {
    return mma(load<64, 32>(a, program_id<0>(), k), load<32, 64>(b, k, program_id<1>()), acc_k);
  }, full<f32, 64, 64>(c<0>));
  return out.store(cast<bf16>(acc));
};

constexpr auto k_logsumexp = [](auto out, auto x) {
  auto stats = for_range(dim<1>(x) / c<64>, [&](auto j, auto m, auto l) {
    auto t = load<16, 64>(x, program_id<0>(), j);
    auto m2 = maximum(m, max<1>(t));
    return carry(m2, l * exp(m - m2) + sum<1>(exp(t - m2)));
  }, full<f32, 16, 1>(c<-1e30>), full<f32, 16, 1>(c<0>));
  auto [m, l] = stats;
  return out.store(minimum(m + log(l), get<0>(stats)));
};

constexpr auto k_nested = [](auto out, auto x) {
  auto r = for_range(c<4>, [&](auto i, auto acc) {
    return for_range(c<2>, [&](auto j, auto acc2) {
      return acc2 + load<32>(x, i * c<2> + j) * cast<f32>(i);
    }, acc);
  }, out.load());
  return out.store(r);
};

constexpr auto k_seq = [](auto o0, auto o1, auto o2, auto x, auto s) {
  return seq(o0.store(x.load_like(o0) * c<2>), seq(o1.store(c<7>), o2.store(s)));
};

constexpr auto k_scalars = [](auto out, auto x, auto alpha, auto off) {
  auto t = load<64>(x, num_programs<0>() - program_id<0>() - c<1>);
  return out.store(t * alpha + cast<f32>(dim<0>(x) + off));
};

constexpr std::string_view k_add_text =
    "(kernel (params (out f32 1 [128]) (in f32 1) (in f32 1)) (body (store 0 (add f32 [128] "
    "(load_like f32 [128] 1 0) (load_like f32 [128] 2 0)))))";
// The serialization is a constant expression, loops included.
static_assert(ast_of<OutParam<0, f32, 1, 128>, InParam<1, f32, 1>, InParam<2, f32, 1>>(k_add) == k_add_text);
static_assert(ast_of<OutParam<0, bf16, 2, 64, 64>, InParam<1, bf16, 2>, InParam<2, bf16, 2>>(k_gemm)
                  .starts_with("(kernel (params (out bf16 2 [64 64]) (in bf16 2) (in bf16 2)) (body (store 0 "
                               "(cast bf16 [64 64] (result f32 [64 64] 0 (for f32 [64 64] 0"));

}  // namespace

TEST_CASE("elementwise add matches the example in docs/ast-format.md", "[ast]") {
  CHECK(ast_of<OutParam<0, f32, 1, 128>, InParam<1, f32, 1>, InParam<2, f32, 1>>(k_add) == k_add_text);
}

TEST_CASE("c<V> literals take the dtype and shape of the other operand", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f16 1 [128]) (in f16 1)) (body (store 0 (add f16 [128] (mul f16 [128] "
      "(const f16 [128] 0x4000000000000000) (load_like f16 [128] 1 0)) (const f16 [128] "
      "0x3ff0000000000000)))))";
  CHECK(ast_of<OutParam<0, f16, 1, 128>, InParam<1, f16, 1>>(k_scale) == expected);
}

TEST_CASE("operands of different shapes get explicit broadcast nodes", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [64 64]) (in f32 2) (in f32 2) (in f32 2) (in f32 1) (scalar f32)) "
      "(body (store 0 (sub f32 [64 64] (add f32 [64 64] (add f32 [64 64] (load_like f32 [64 64] 1 0) "
      "(mul f32 [64 64] (broadcast f32 [64 64] (load f32 [1 64] 2 (const i32 [] 0x0000000000000000) "
      "(program_id i32 [] 1))) (broadcast f32 [64 64] (load f32 [64 1] 3 (program_id i32 [] 0) (const "
      "i32 [] 0x0000000000000000))))) (broadcast f32 [64 64] (reshape f32 [1 64] (load f32 [64] 4 "
      "(program_id i32 [] 1))))) (broadcast f32 [64 64] (arg f32 [] 5))))))";
  CHECK(ast_of<OutParam<0, f32, 2, 64, 64>, InParam<1, f32, 2>, InParam<2, f32, 2>, InParam<3, f32, 2>,
               InParam<4, f32, 1>, ScalarParam<5, f32>>(k_broadcast) == expected);
}

TEST_CASE("reductions keep the reduced axis", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [64 1]) (in f32 2)) (body (store 0 (sub f32 [64 1] (add f32 [64 "
      "1] (reduce f32 [64 1] sum 1 (let 0 (load f32 [64 64] 1 (program_id i32 [] 0) (const i32 [] "
      "0x0000000000000000)))) (reduce f32 [64 1] max 1 (ref f32 [64 64] 0))) (broadcast f32 [64 1] "
      "(reduce f32 [1 1] min 0 (reduce f32 [64 1] min 1 (ref f32 [64 64] 0))))))))";
  CHECK(ast_of<OutParam<0, f32, 2, 64, 1>, InParam<1, f32, 2>>(k_reduce) == expected);
}

TEST_CASE("softmax", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [16 64]) (in f32 2)) (body (store 0 (div f32 [16 64] (let 0 (exp "
      "f32 [16 64] (sub f32 [16 64] (load_like f32 [16 64] 1 0) (broadcast f32 [16 64] (reduce f32 "
      "[16 1] max 1 (load_like f32 [16 64] 1 0)))))) (broadcast f32 [16 64] (reduce f32 [16 1] sum "
      "1 (ref f32 [16 64] 0)))))))";
  CHECK(ast_of<OutParam<0, f32, 2, 16, 64>, InParam<1, f32, 2>>(k_softmax) == expected);
}

TEST_CASE("unary math functions and cast", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [128]) (in f16 1)) (body (store 0 (sub f32 [128] (add f32 [128] "
      "(tanh f32 [128] (sqrt f32 [128] (abs f32 [128] (let 0 (cast f32 [128] (load_like f16 [128] "
      "1 0)))))) (mul f32 [128] (rsqrt f32 [128] (ref f32 [128] 0)) (log f32 [128] (ref f32 [128] "
      "0)))) (exp2 f32 [128] (neg f32 [128] (ref f32 [128] 0)))))))";
  CHECK(ast_of<OutParam<0, f32, 1, 128>, InParam<1, f16, 1>>(k_unary) == expected);
}

TEST_CASE("comparisons, logic and select", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [128]) (in f32 1) (in f32 1)) (body (store 0 (add f32 [128] (add "
      "f32 [128] (select f32 [128] (or i1 [128] (or i1 [128] (and i1 [128] (gt i1 [128] (load_like "
      "f32 [128] 1 0) (const f32 [128] 0x0000000000000000)) (ge i1 [128] (load_like f32 [128] 1 0) "
      "(load_like f32 [128] 2 0))) (not i1 [128] (eq i1 [128] (load_like f32 [128] 1 0) (load_like "
      "f32 [128] 2 0)))) (ne i1 [128] (load_like f32 [128] 1 0) (const f32 [128] "
      "0x3fe0000000000000))) (load_like f32 [128] 1 0) (mul f32 [128] (load_like f32 [128] 2 0) "
      "(const f32 [128] 0x3fd0000000000000))) (select f32 [128] (let 0 (and i1 [128] (lt i1 [128] "
      "(load_like f32 [128] 1 0) (load_like f32 [128] 2 0)) (le i1 [128] (load_like f32 [128] 1 0) "
      "(const f32 [128] 0x3ff0000000000000)))) (const f32 [128] 0x3ff0000000000000) (load_like f32 "
      "[128] 1 0))) (cast f32 [128] (ref i1 [128] 0))))))";
  CHECK(ast_of<OutParam<0, f32, 1, 128>, InParam<1, f32, 1>, InParam<2, f32, 1>>(k_select) == expected);
}

TEST_CASE("iota and dim give a tail mask", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [128]) (in f32 1)) (body (store 0 (select f32 [128] (lt i1 [128] "
      "(add i32 [128] (iota i32 [128]) (broadcast i32 [128] (mul i32 [] (program_id i32 [] 0) (const "
      "i32 [] 0x4060000000000000)))) (broadcast i32 [128] (dim i32 [] 1 0))) (load_like f32 [128] 1 "
      "0) (const f32 [128] 0x0000000000000000)))))";
  CHECK(ast_of<OutParam<0, f32, 1, 128>, InParam<1, f32, 1>>(k_iota) == expected);
}

TEST_CASE("reshape, transpose and broadcast_to", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [32 64]) (in f32 2)) (body (store 0 (add f32 [32 64] (reshape "
      "f32 [32 64] (reshape f32 [2048] (let 0 (transpose f32 [32 64] (load f32 [64 32] 1 "
      "(program_id i32 [] 1) (program_id i32 [] 0)))))) (broadcast f32 [32 64] (reshape f32 [1 64] "
      "(reshape f32 [64] (reduce f32 [1 64] sum 0 (ref f32 [32 64] 0)))))))))";
  CHECK(ast_of<OutParam<0, f32, 2, 32, 64>, InParam<1, f32, 2>>(k_shape) == expected);
}

TEST_CASE("mma accumulating into the output's own tile", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [64 64]) (in f16 2) (in f16 2)) (body (store 0 (mma f32 [64 64] "
      "(load f16 [64 32] 1 (program_id i32 [] 0) (const i32 [] 0x0000000000000000)) (load f16 [32 64] "
      "2 (const i32 [] 0x0000000000000000) (program_id i32 [] 1)) (own f32 [64 64] 0)))))";
  CHECK(ast_of<OutParam<0, f32, 2, 64, 64>, InParam<1, f16, 2>, InParam<2, f16, 2>>(k_mma) == expected);
}

TEST_CASE("K loop with one carried accumulator", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out bf16 2 [64 64]) (in bf16 2) (in bf16 2)) (body (store 0 (cast bf16 [64 "
      "64] (result f32 [64 64] 0 (for f32 [64 64] 0 (div i32 [] (dim i32 [] 1 1) (const i32 [] "
      "0x4040000000000000)) ((const f32 [64 64] 0x0000000000000000)) ((mma f32 [64 64] (load bf16 [64 "
      "32] 1 (program_id i32 [] 0) (iv i32 [] 0)) (load bf16 [32 64] 2 (iv i32 [] 0) (program_id i32 "
      "[] 1)) (carried f32 [64 64] 0 0)))))))))";
  CHECK(ast_of<OutParam<0, bf16, 2, 64, 64>, InParam<1, bf16, 2>, InParam<2, bf16, 2>>(k_gemm) == expected);
}

TEST_CASE("loop with two carried values, written once for its three results", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 2 [16 1]) (in f32 2)) (body (store 0 (min f32 [16 1] (add f32 [16 "
      "1] (let 0 (result f32 [16 1] 0 (let 1 (for f32 [16 1] 0 (div i32 [] (dim i32 [] 1 1) (const "
      "i32 [] 0x4050000000000000)) ((const f32 [16 1] 0xc6293e5939a08cea) (const f32 [16 1] "
      "0x0000000000000000)) ((let 2 (max f32 [16 1] (carried f32 [16 1] 0 0) (reduce f32 [16 1] "
      "max 1 (let 3 (load f32 [16 64] 1 (program_id i32 [] 0) (iv i32 [] 0)))))) (add f32 [16 1] "
      "(mul f32 [16 1] (carried f32 [16 1] 0 1) (exp f32 [16 1] (sub f32 [16 1] (carried f32 [16 "
      "1] 0 0) (ref f32 [16 1] 2)))) (reduce f32 [16 1] sum 1 (exp f32 [16 64] (sub f32 [16 64] "
      "(ref f32 [16 64] 3) (broadcast f32 [16 64] (ref f32 [16 1] 2))))))))))) (log f32 [16 1] "
      "(result f32 [16 1] 1 (ref f32 [16 1] 1)))) (ref f32 [16 1] 0)))))";
  CHECK(ast_of<OutParam<0, f32, 2, 16, 1>, InParam<1, f32, 2>>(k_logsumexp) == expected);
}

TEST_CASE("nested loops get ids by nesting depth", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [32]) (in f32 1)) (body (store 0 (result f32 [32] 0 (for f32 [32] 0 "
      "(const i32 [] 0x4010000000000000) ((own f32 [32] 0)) ((result f32 [32] 0 (for f32 [32] 1 "
      "(const i32 [] 0x4000000000000000) ((carried f32 [32] 0 0)) ((add f32 [32] (carried f32 [32] 1 "
      "0) (mul f32 [32] (load f32 [32] 1 (add i32 [] (mul i32 [] (iv i32 [] 0) (const i32 [] "
      "0x4000000000000000)) (iv i32 [] 1))) (broadcast f32 [32] (cast f32 [] (iv i32 [] "
      "0))))))))))))))";
  CHECK(ast_of<OutParam<0, f32, 1, 32>, InParam<1, f32, 1>>(k_nested) == expected);
}

TEST_CASE("seq of stores, stored scalars and literals", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [128]) (out i32 1 [128]) (out f32 1 [128]) (in f32 1) (scalar f32)) "
      "(body (store 0 (mul f32 [128] (load_like f32 [128] 3 0) (const f32 [128] 0x4000000000000000))) "
      "(store 1 (const i32 [128] 0x401c000000000000)) (store 2 (broadcast f32 [128] (arg f32 [] "
      "4)))))";
  CHECK(ast_of<OutParam<0, f32, 1, 128>, OutParam<1, i32, 1, 128>, OutParam<2, f32, 1, 128>,
               InParam<3, f32, 1>, ScalarParam<4, f32>>(k_seq) == expected);
}

TEST_CASE("scalar parameters, dim, program_id and num_programs", "[ast]") {
  const std::string_view expected =
      "(kernel (params (out f32 1 [64]) (in f32 1) (scalar f32) (scalar i32)) (body (store 0 (add f32 "
      "[64] (mul f32 [64] (load f32 [64] 1 (sub i32 [] (sub i32 [] (num_programs i32 [] 0) "
      "(program_id i32 [] 0)) (const i32 [] 0x3ff0000000000000))) (broadcast f32 [64] (arg f32 [] "
      "2))) (broadcast f32 [64] (cast f32 [] (add i32 [] (dim i32 [] 1 0) (arg i32 [] 3))))))))";
  CHECK(ast_of<OutParam<0, f32, 1, 64>, InParam<1, f32, 1>, ScalarParam<2, f32>, ScalarParam<3, i32>>(
            k_scalars) == expected);
}

TEST_CASE("dtype names, sizes and host types", "[ast][dtype]") {
  STATIC_REQUIRE(dtype_name(bf16) == "bf16");
  STATIC_REQUIRE(dtype_name(i1) == "i1");
  STATIC_REQUIRE(dtype_size(f32) == 4);
  STATIC_REQUIRE(dtype_size(f16) == 2);
  STATIC_REQUIRE(dtype_size(i1) == 1);
  STATIC_REQUIRE(dtype_v<float> == f32);
  STATIC_REQUIRE(dtype_v<const half> == f16);
  STATIC_REQUIRE(dtype_v<bfloat16> == bf16);
  STATIC_REQUIRE(dtype_v<std::int32_t> == i32);
  STATIC_REQUIRE(dtype_v<bool> == i1);
  STATIC_REQUIRE(std::is_same_v<host_type_t<f16>, half>);
  STATIC_REQUIRE(std::is_same_v<host_type_t<i32>, std::int32_t>);
}

TEST_CASE("half and bfloat16 round to nearest even", "[ast][dtype]") {
  constexpr float inf = std::numeric_limits<float>::infinity();
  STATIC_REQUIRE(half(1.0f).bits == 0x3c00);
  STATIC_REQUIRE(half(-2.0f).bits == 0xc000);
  STATIC_REQUIRE(half(65504.0f).bits == 0x7bff);        // largest finite
  STATIC_REQUIRE(half(65520.0f).bits == 0x7c00);        // halfway to 2^16 rounds up to inf
  STATIC_REQUIRE(half(inf).bits == 0x7c00);
  STATIC_REQUIRE(half(0x1p-24f).bits == 0x0001);        // smallest subnormal
  STATIC_REQUIRE(half(0x1p-25f).bits == 0x0000);        // tie between 0 and 2^-24: even
  STATIC_REQUIRE(half(0x1.8p-24f).bits == 0x0002);      // tie between 1 and 2 units: even
  STATIC_REQUIRE(half(1.0f + 0x1p-11f).bits == 0x3c00); // tie: even
  STATIC_REQUIRE(half(1.0f + 0x3p-11f).bits == 0x3c02); // tie: even (up)
  STATIC_REQUIRE(float(half::from_bits(0x0001)) == 0x1p-24f);
  STATIC_REQUIRE(float(half::from_bits(0x3555)) == 0x1.554p-2f);
  STATIC_REQUIRE(half(0.5f) == half(0.5f));
  STATIC_REQUIRE(half(0.0f) == half(-0.0f));
  constexpr float nan = std::numeric_limits<float>::quiet_NaN();
  CHECK(float(half(nan)) != float(half(nan)));
  CHECK(half(nan) != half(nan));
  STATIC_REQUIRE(bfloat16(1.0f).bits == 0x3f80);
  STATIC_REQUIRE(bfloat16(1.0f + 0x1p-8f).bits == 0x3f80);  // tie: even
  STATIC_REQUIRE(bfloat16(1.0f + 0x3p-8f).bits == 0x3f82);  // tie: even (up)
  STATIC_REQUIRE(float(bfloat16(3.0f)) == 3.0f);
  STATIC_REQUIRE((bfloat16(nan).bits & 0x7fc0) == 0x7fc0);
  for (int i = 0; i < 0x7c00; ++i) {  // every finite half round-trips through float
    const half h = half::from_bits(static_cast<std::uint16_t>(i));
    REQUIRE(half(float(h)).bits == i);
  }
}

TEST_CASE("shape algebra", "[ast][shape]") {
  STATIC_REQUIRE(Shape<64, 32>::rank == 2);
  STATIC_REQUIRE(Shape<64, 32>::size == 2048);
  STATIC_REQUIRE(Shape<>::size == 1);
  STATIC_REQUIRE(Shape<64, 32>::dim<1> == 32);
  STATIC_REQUIRE(is_pow2_shape_v<Shape<1, 2, 128>>);
  STATIC_REQUIRE(!is_pow2_shape_v<Shape<48>>);
  STATIC_REQUIRE(std::is_same_v<broadcast_t<Shape<64, 1>, Shape<1, 32>>, Shape<64, 32>>);
  STATIC_REQUIRE(std::is_same_v<broadcast_t<Shape<8, 1, 4>, Shape<16, 1>>, Shape<8, 16, 4>>);
  STATIC_REQUIRE(std::is_same_v<broadcast_t<Shape<>, Shape<4, 4>>, Shape<4, 4>>);
  STATIC_REQUIRE(!broadcastable_v<Shape<64, 32>, Shape<64>>);
  STATIC_REQUIRE(std::is_same_v<reduce_t<Shape<16, 64>, 0>, Shape<1, 64>>);
  STATIC_REQUIRE(std::is_same_v<transpose_t<Shape<16, 64>>, Shape<64, 16>>);
  STATIC_REQUIRE(std::is_same_v<pad_rank_t<Shape<64>, 3>, Shape<1, 1, 64>>);
}

TEST_CASE("fixed_string building blocks", "[ast]") {
  using detail::fixed_string;
  STATIC_REQUIRE(detail::sexpr("add", fixed_string("f32 []"), "x") == fixed_string("(add f32 [] x)"));
  STATIC_REQUIRE(detail::sexpr("params").view() == "(params)");
  STATIC_REQUIRE(detail::bracket<'[', ']'>().view() == "[]");
  STATIC_REQUIRE(detail::int_text_v<-1234>.view() == "-1234");
  STATIC_REQUIRE(detail::int_text_v<0>.view() == "0");
  STATIC_REQUIRE(detail::hex_text_v<-0.0>.view() == "0x8000000000000000");
  STATIC_REQUIRE(detail::hex_text_v<0.1>.view() == "0x3fb999999999999a");
  STATIC_REQUIRE(detail::type_text_v<i32, Shape<>>.view() == "i32 []");
}
