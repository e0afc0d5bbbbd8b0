// test_tileir_backend.cpp: the tileir backend as launches select it (LaunchOptions::backend,
// TESSERA_BACKEND): compiles through it give cubins without PTX, cached apart from the NVVM
// backend's in memory and on disk; on a GPU ([gpu]) its kernels give the CPU target's results, and
// an autotuned launch chooses between the back ends per option.
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

// A cache directory of its own, TESSERA_BACKEND set to `backend` (null: unset) and an empty memory
// cache, for a test case's lifetime (the memory cache is emptied again at its end).
struct FreshCompiles {
  explicit FreshCompiles(const char* backend) {
    env.set("TESSERA_CACHE_DIR", cache.path.c_str());
    env.set("TESSERA_BACKEND", backend);
    clear_memory_cache();
  }
  ~FreshCompiles() { clear_memory_cache(); }
  test_env::EnvGuard env;
  test_env::TempDir cache;
};

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
  FreshCompiles fresh(nullptr);
  test_env::EnvGuard& env = fresh.env;
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

TEST_CASE("under TESSERA_BACKEND=tileir a kernel Tile IR cannot express takes the NVVM backend", "[tileir]") {
  if (!have_tileiras()) return;
  FreshCompiles fresh("tileir");
  Tensor<float, 1> x({1000}), z({1000});
  auto padded = kernel("tileir_fallback_padding", [](auto o, auto a) { return o.store(a.load_like(o).padded(c<2.5>)); });
  LaunchOptions plain;
  plain.target = Target::sm_90;
  CompiledArtifact fallback = padded.compile(plain, z.partition<128>(), x);
  CHECK(fallback.backend == Backend::nvvm);
  CHECK_FALSE(fallback.ptx.empty());
  // Asked for by the launch, the tileir backend reports it instead.
  CHECK_THROWS_WITH(padded.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x),
                    Catch::Contains("tileir_fallback_padding") && Catch::Contains("no CUDA Tile IR form"));
  // A kernel it can express still goes through it.
  CHECK(examples::vector_add().compile(plain, z.partition<128>(), x, x).backend == Backend::tileir);
}

TEST_CASE("a broadcast (stride-0) input takes the NVVM backend, or is an error where tileir was asked for",
          "[tileir]") {
  FreshCompiles fresh("tileir");
  Tensor<float, 1> x({1000}), z({1000});
  auto broadcast = Tensor<float, 1>::from_device(reinterpret_cast<void*>(0x100000), {1000}, std::array<int64_t, 1>{0});
  CHECK_THROWS_WITH(examples::vector_add().compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x, broadcast),
                    Catch::Contains("argument 2 has stride 0 along dimension 0") &&
                        Catch::Contains("positive strides"));
  LaunchOptions plain;
  plain.target = Target::sm_90;
  CHECK(examples::vector_add().compile(plain, z.partition<128>(), x, broadcast).backend == Backend::nvvm);
}

TEST_CASE("the tileir backend passes its hints to tileiras; the NVVM backend reads occupancy only", "[tileir]") {
  if (!have_tileiras()) return;
  FreshCompiles fresh(nullptr);
  Tensor<float, 1> x({1000}), y({1000}), z({1000});
  auto add = examples::vector_add();
  LaunchOptions hinted = on(Target::sm_90, Backend::tileir);
  hinted.hints.occupancy = 3;
  hinted.hints.cluster_programs = 2;
  hinted.hints.tma = false;
  const CompiledArtifact plain = add.compile(on(Target::sm_90, Backend::tileir), z.partition<128>(), x, y);
  const CacheStats before = cache_stats();
  const CompiledArtifact with_hints = add.compile(hinted, z.partition<128>(), x, y);
  CHECK(cache_stats().compiles == before.compiles + 1);  // its own entry
  CHECK(is_elf(with_hints.cubin));
  CHECK(with_hints.cubin != plain.cubin);  // occupancy 3 caps the registers
  hinted.target = Target::sm_100a;
  CHECK(is_elf(add.compile(hinted, z.partition<128>(), x, y).cubin));

  // The NVVM backend compiles the kernel it compiles without cluster_programs and tma (one entry);
  // occupancy it reads itself (its own entry, the registers capped).
  const CompiledArtifact nvvm = add.compile(on(Target::sm_90, Backend::nvvm), z.partition<128>(), x, y);
  LaunchOptions nvvm_hinted = hinted;
  nvvm_hinted.target = Target::sm_90;
  nvvm_hinted.backend = Backend::nvvm;
  nvvm_hinted.hints.occupancy = 0;
  const CacheStats before_nvvm = cache_stats();
  CHECK(add.compile(nvvm_hinted, z.partition<128>(), x, y).cubin == nvvm.cubin);
  CHECK(cache_stats().compiles == before_nvvm.compiles);
  nvvm_hinted.hints.occupancy = 3;
  CHECK(add.compile(nvvm_hinted, z.partition<128>(), x, y).ptx.find(".maxnreg") != std::string::npos);
  CHECK(cache_stats().compiles == before_nvvm.compiles + 1);

  // Out of range: an error naming the kernel and the hint, whatever the back end.
  LaunchOptions bad = on(Target::sm_90, Backend::tileir);
  bad.hints.occupancy = 40;
  CHECK_THROWS_WITH(add.compile(bad, z.partition<128>(), x, y),
                    Catch::Contains(std::string(add.name())) && Catch::Contains("hints.occupancy is 40") &&
                        Catch::Contains("1 to 32"));
  bad.hints.occupancy = 0;
  bad.hints.cluster_programs = 3;
  bad.backend = Backend::nvvm;
  CHECK_THROWS_WITH(add.compile(bad, z.partition<128>(), x, y),
                    Catch::Contains("hints.cluster_programs is 3") && Catch::Contains("1, 2, 4, 8 or 16"));
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

TEST_CASE("tileir kernels with hints give the CPU target's results", "[tileir][gpu]") {
  if (!gpu_available()) {
    WARN("skipped: needs a GPU");
    return;
  }
  if (!have_tileiras()) return;
  // An even grid (256 programs) and an odd one (129, the last ragged) in clusters of two.
  for (const int64_t n : {int64_t{256 * 128}, int64_t{129 * 128 - 5}}) {
    Tensor<float, 1> x({n}), y({n}), z({n});
    for (int64_t i = 0; i < n; ++i) {
      x(i) = static_cast<float>(i % 97);
      y(i) = -0.5f * static_cast<float>(i % 13);
    }
    LaunchOptions o = on(default_target(), Backend::tileir);
    o.hints.occupancy = 4;
    o.hints.cluster_programs = 2;
    o.hints.tma = false;
    examples::vector_add().launch(o, z.partition<128>(), x, y);
    for (int64_t i = 0; i < n; ++i) REQUIRE(z(i) == x(i) + y(i));
  }
}

TEST_CASE("an autotuned launch chooses between the back ends per option", "[tileir][gpu]") {
  if (!gpu_available()) {
    WARN("skipped: needs a GPU");
    return;
  }
  FreshCompiles fresh(nullptr);
  clear_tuning();
  auto tuned = autotune("tileir_or_nvvm", tile_option<128, 128>(examples::matmul_bias_relu(), Backend::nvvm),
                        tile_option<128, 128>(examples::matmul_bias_relu(), Backend::tileir));
  Tensor<bfloat16, 2> a({300, 200}), b({200, 520}), out({300, 520}), outc({300, 520});
  Tensor<bfloat16, 1> bias({520});
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t k = 0; k < 200; ++k) a(i, k) = bfloat16(0.01f * static_cast<float>((i * 3 + k * 7) % 19) - 0.09f);
  for (int64_t k = 0; k < 200; ++k)
    for (int64_t j = 0; j < 520; ++j) b(k, j) = bfloat16(0.01f * static_cast<float>((k * 5 + j) % 13) - 0.06f);
  for (int64_t j = 0; j < 520; ++j) bias(j) = bfloat16(0.001f * static_cast<float>(j % 11));
  const TuningResult r = tuned.launch(out, a, b, bias);
  REQUIRE(r.ms.size() == 2);
  CHECK(r.ms[0] >= 0);
  // Without tileiras the tileir option throws and is skipped; with it, it is timed.
  CHECK((r.ms[1] >= 0) == backend_available(Backend::tileir));
  examples::matmul_bias_relu().launch(on(Target::cpu, Backend::nvvm), outc.partition<128, 128>(), a, b, bias);
  for (int64_t i = 0; i < 300; ++i)
    for (int64_t j = 0; j < 520; ++j) {
      const float g = out(i, j), c = outc(i, j);
      REQUIRE(std::abs(g - c) <= 1e-2f * std::abs(c) + 1e-3f);
    }
  clear_tuning();
}
