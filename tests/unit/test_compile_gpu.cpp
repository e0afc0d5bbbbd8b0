// test_compile_gpu.cpp: every example-style kernel compiles to PTX and a cubin for sm_90 and
// sm_100a (nvJitLink accepts them) without a GPU; the second compile is a cache hit.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include "example_kernels.h"

using namespace tessera;

namespace {
bool is_elf(const std::vector<char>& b) { return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'; }

template <class K, class... A>
void check_compiles(const K& k, A&&... args) {
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    CompiledArtifact art = k.compile(t, std::forward<A>(args)...);
    INFO(k.name() << " for " << art.target);
    CHECK(art.ptx.find(".version 9.0") != std::string::npos);
    CHECK(art.ptx.find(".entry") != std::string::npos);
    CHECK(is_elf(art.cubin));
  }
}
}  // namespace

TEST_CASE("the examples' kernels compile to PTX and cubins for sm_90 and sm_100a", "[compile][ptx]") {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  check_compiles(examples::vector_add(), z.partition<128>(), x, y);
  Tensor<float, 2> m({10, 1000}), s({10, 1000});
  check_compiles(examples::softmax(), s.partition<1, 1024>(), m);
}

TEST_CASE("kernels compile to PTX and cubins for sm_90 and sm_100a", "[compile][ptx]") {
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  check_compiles(kernel("gpu_add", [](auto o, auto a, auto b) { return o.store(a.load_like(o) + b.load_like(o)); }),
                 z.partition<128>(), x, y);
  Tensor<float, 2> m({64, 1000}), s({64, 1000});
  check_compiles(kernel("gpu_softmax", [](auto o, auto a) {
                   auto t = a.load_like(o);
                   auto e = exp(t - max<1>(t));
                   return o.store(e / sum<1>(e));
                 }),
                 s.partition<1, 1024>(), m);
  Tensor<half, 2> a({128, 128}), b({128, 128});
  Tensor<float, 2> cm({128, 128});
  check_compiles(kernel("gpu_gemm", [](auto o, auto p, auto q) {
                   auto acc = for_range(
                       (dim<1>(p) + c<15.0>) / c<16.0>,
                       [=](auto k, auto acc) {
                         return mma(load<16, 16>(p, program_id<0>(), k), load<16, 16>(q, k, program_id<1>()), acc);
                       },
                       full<DType::f32, 16, 16>(c<0.0>));
                   return o.store(acc);
                 }),
                 cm.partition<16, 16>(), a, b);
}

TEST_CASE("the second compile of a kernel is served from the in-process cache", "[compile][cache]") {
  Tensor<float, 1> x({10}), z({10});
  auto k = kernel("gpu_cache_twice", [](auto o, auto a) { return o.store(a.load_like(o) * c<3.0>); });
  k.compile(Target::sm_90, z.partition<128>(), x);
  CacheStats before = cache_stats();
  k.compile(Target::sm_90, z.partition<128>(), x);
  CacheStats after = cache_stats();
  CHECK(after.memory_hits == before.memory_hits + 1);
  CHECK(after.compiles == before.compiles);
}
