// test_tileir_backend.cpp: the tileir backend as launches select it (LaunchOptions::backend,
// TESSERA_BACKEND): compiles through it give cubins without PTX, cached apart from the NVVM
// backend's in memory and on disk; on a GPU ([gpu]) its kernels give the CPU target's results.
// Without tileiras (scripts/install-tileiras.sh) the cases that need it say so and return.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <cmath>

#include "compiler/tileiras.h"
#include "example_kernels.h"
#include "row_kernels.h"
#include "scoped_env.h"

using namespace tessera;

namespace {

bool is_elf(const std::vector<char>& b) { return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'; }

bool have_tileiras() {
  if (detail::find_tileiras()) return true;
  WARN("skipped: tileiras not found (scripts/install-tileiras.sh installs it)");
  return false;
}

LaunchOptions on(Target target, Backend backend) {
  LaunchOptions o;
  o.target = target;
  o.backend = backend;
  return o;
}

}  // namespace

TEST_CASE("TESSERA_BACKEND chooses the default back end", "[tileir]") {
  test_env::EnvGuard env;
  env.set("TESSERA_BACKEND", nullptr);
  CHECK(default_backend() == Backend::nvvm);
  env.set("TESSERA_BACKEND", "tileir");
  CHECK(default_backend() == Backend::tileir);
  CHECK(to_string(default_backend()) == "tileir");
  env.set("TESSERA_BACKEND", "ptx");
  CHECK_THROWS_WITH(default_backend(), Catch::Contains("TESSERA_BACKEND='ptx'") && Catch::Contains("nvvm, tileir"));
}

TEST_CASE("compiles through the tileir backend are cubins cached apart from the NVVM backend's", "[tileir]") {
  if (!have_tileiras()) return;
  test_env::EnvGuard env;
  env.set("TESSERA_BACKEND", nullptr);
  test_env::TempDir cache;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  clear_memory_cache();
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  auto add = examples::vector_add();

  CompiledArtifact t = add.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x, y);
  CHECK(t.backend == Backend::tileir);
  CHECK(t.target == "sm_90");
  CHECK(is_elf(t.cubin));
  CHECK(t.ptx.empty());
  CHECK_FALSE(t.from_disk_cache);

  // The same launch again, and one that asks through TESSERA_BACKEND: the compiled kernel.
  const CacheStats before = cache_stats();
  CHECK(add.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x, y).cubin == t.cubin);
  env.set("TESSERA_BACKEND", "tileir");
  LaunchOptions plain;
  plain.target = Target::sm_90;
  CHECK(add.compile(plain, z.partition<128>(), x, y).backend == Backend::tileir);
  env.set("TESSERA_BACKEND", nullptr);
  CHECK(cache_stats().compiles == before.compiles);
  CHECK(cache_stats().memory_hits == before.memory_hits + 2);

  // The NVVM backend's kernel is another entry, with PTX.
  CompiledArtifact n = add.compile(on(Target::sm_90, Backend::nvvm), z.partition<128>(), x, y);
  CHECK(n.backend == Backend::nvvm);
  CHECK_FALSE(n.ptx.empty());
  CHECK(n.cubin != t.cubin);

  // A new process (an empty memory cache) finds both on disk, each its own.
  clear_memory_cache();
  CompiledArtifact t2 = add.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x, y);
  CHECK(t2.from_disk_cache);
  CHECK(t2.cubin == t.cubin);
  CHECK(t2.ptx.empty());
  CompiledArtifact n2 = add.compile(on(Target::sm_90, Backend::nvvm), z.partition<128>(), x, y);
  CHECK(n2.from_disk_cache);
  CHECK(n2.ptx == n.ptx);

  // sm_100a: tileiras compiles for sm_100.
  CHECK(is_elf(add.compile(on(Target::sm_100a, Backend::tileir), z.partition<128>(), x, y).cubin));
  // The CPU target has one back end: the option changes nothing there.
  CHECK(add.compile(on(Target::cpu, Backend::tileir), z.partition<128>(), x, y).backend == Backend::nvvm);
  clear_memory_cache();
}

TEST_CASE("a kernel Tile IR cannot express fails to compile through the tileir backend, naming it", "[tileir]") {
  if (!have_tileiras()) return;
  Tensor<float, 1> x({1000}), z({1000});
  auto padded = kernel("tileir_backend_padding", [](auto o, auto a) { return o.store(a.load_like(o).padded(c<2.5>)); });
  CHECK_THROWS_WITH(padded.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x),
                    Catch::Contains("tileir_backend_padding") && Catch::Contains("no CUDA Tile IR form"));
  // The NVVM backend compiles it.
  CHECK(is_elf(padded.compile(on(Target::sm_90, Backend::nvvm), z.partition<128>(), x).cubin));
}

TEST_CASE("kernels launched through the tileir backend give the CPU target's results", "[tileir][gpu]") {
  if (!gpu_available()) {
    WARN("skipped: needs a GPU");
    return;
  }
  if (!have_tileiras()) return;
  const Target gpu = default_target();
  const int64_t n = 100'003;
  Tensor<float, 1> x({n}), y({n}), z({n}), zc({n});
  for (int64_t i = 0; i < n; ++i) {
    x(i) = 0.25f * static_cast<float>(i % 1000);
    y(i) = 1.0f - static_cast<float>(i % 7);
  }
  examples::vector_add().launch(on(gpu, Backend::tileir), z.partition<128>(), x, y);
  examples::vector_add().launch(on(Target::cpu, Backend::nvvm), zc.partition<128>(), x, y);
  for (int64_t i = 0; i < n; ++i) REQUIRE(z(i) == zc(i));

  Tensor<float, 2> m({37, 1000}), s({37, 1000}), sc({37, 1000});
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 1000; ++j) m(i, j) = std::sin(0.01f * static_cast<float>(i * 1000 + j));
  examples::softmax().launch(on(gpu, Backend::tileir), s.partition<1, 1024>(), m);
  examples::softmax().launch(on(Target::cpu, Backend::nvvm), sc.partition<1, 1024>(), m);
  for (int64_t i = 0; i < 37; ++i)
    for (int64_t j = 0; j < 1000; ++j) REQUIRE(std::abs(s(i, j) - sc(i, j)) <= 1e-6f + 1e-5f * std::abs(sc(i, j)));

  Tensor<bfloat16, 2> a({300, 200}), b({200, 520}), out({300, 520}), outc({300, 520});
  Tensor<bfloat16, 1> bias({520});
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t k = 0; k < 200; ++k) a(i, k) = bfloat16(0.01f * static_cast<float>((i * 7 + k * 3) % 17) - 0.08f);
  for (int64_t k = 0; k < 200; ++k)
    for (int64_t j = 0; j < 520; ++j) b(k, j) = bfloat16(0.01f * static_cast<float>((k * 5 + j) % 13) - 0.06f);
  for (int64_t j = 0; j < 520; ++j) bias(j) = bfloat16(0.001f * static_cast<float>(j % 11));
  examples::matmul_bias_relu().launch(on(gpu, Backend::tileir), out.partition<128, 128>(), a, b, bias);
  examples::matmul_bias_relu().launch(on(Target::cpu, Backend::nvvm), outc.partition<128, 128>(), a, b, bias);
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t j = 0; j < 520; ++j) {
      const float g = out(i, j), c = outc(i, j);
      REQUIRE(std::abs(g - c) <= 1e-2f * std::abs(c) + 1e-3f);  // bf16 output, sums in another order
    }

  Tensor<bfloat16, 2> rows({5, 8192}), norm({5, 8192}), normc({5, 8192});
  Tensor<bfloat16, 1> w({8192});
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 8192; ++j) rows(i, j) = bfloat16(std::cos(0.001f * static_cast<float>(i * 8192 + j)));
  for (int64_t j = 0; j < 8192; ++j) w(j) = bfloat16(1.0f + 0.0001f * static_cast<float>(j));
  row_kernels::rmsnorm().launch(on(gpu, Backend::tileir), norm.partition<1, 8192>(), rows, w);
  row_kernels::rmsnorm().launch(on(Target::cpu, Backend::nvvm), normc.partition<1, 8192>(), rows, w);
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 8192; ++j) {
      const float g = norm(i, j), c = normc(i, j);
      REQUIRE(std::abs(g - c) <= 1e-2f * std::abs(c) + 1e-3f);
    }
}
