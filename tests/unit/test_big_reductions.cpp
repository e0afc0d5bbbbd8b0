// test_big_reductions.cpp: reductions whose shared memory scratch exceeds the 48 KiB of static
// shared memory (convert-tile-to-loops writes a tile reduced along a non-last axis to the scratch
// whole: a 128x128 or 512x32 f32 tile takes 64 KiB). On the GPU such a kernel uses dynamic shared
// memory up to the device's opt-in limit (227 KiB on sm_90 and sm_100a): its PTX declares an
// `.extern .shared` array and states the bytes in a comment that comes back from the disk cache,
// and each launch passes them (the function opted in once). Beyond the limit the compile fails
// with a tessera::Error naming the kernel, the bytes and the limit. Results on the CPU target and
// ([gpu]) on the GPU against host references, with ragged edges; synchronous, async, graph and
// disk-cache launches on the GPU. Kernels whose scratch fits 48 KiB keep their static array.
#include "execution_helpers.h"

#include <algorithm>
#include <string>

#include "compiler/pipeline.h"
#include "scoped_env.h"

using namespace tessera;
using namespace exec_test;
using Catch::Matchers::Contains;

namespace {

// Column sums of 128x128 f32 tiles: the tile goes through 64 KiB of scratch.
auto colsum_128() {
  return kernel("big_colsum_128", [](auto out, auto a) {
    return out.store(sum<0>(load<128, 128>(a, program_id<0>(), program_id<1>())));
  });
}

// The total of each 128x128 f32 tile: along axis 0 through the 64 KiB scratch, then along the row.
auto total_128() {
  return kernel("big_total_128", [](auto out, auto a) {
    return out.store(sum<1>(sum<0>(load<128, 128>(a, program_id<0>(), program_id<1>()))));
  });
}

// Sums and maxima of 512x32 f32 tiles along axis 0: two users of one 64 KiB scratch region.
auto colsum_max_512x32() {
  return kernel("big_colsum_max_512x32", [](auto sums, auto maxima, auto a) {
    auto t = load<512, 32>(a, program_id<0>(), program_id<1>());
    return seq(sums.store(sum<0>(t)), maxima.store(max<0>(t)));
  });
}

// 256x256 f32 along axis 0: 256 KiB of scratch, more than any GPU gives a CTA.
auto colsum_256() {
  return kernel("big_colsum_256", [](auto out, auto a) {
    return out.store(sum<0>(load<256, 256>(a, program_id<0>(), program_id<1>())));
  });
}

bool close(float got, double want, double rel = 1e-5, double abs_tol = 1e-4) {
  return std::abs(got - want) <= abs_tol + rel * std::abs(want);
}

// Host references over `rows` x `cols` tiles of `x` (elements past its edge count as 0, as the
// kernel loads them): per tile column the sum and max, and the tile's total.
struct TileReference {
  int64_t rows, cols;
  const Tensor<float, 2>& x;
  float at(int64_t i, int64_t j) const { return i < x.shape()[0] && j < x.shape()[1] ? x(i, j) : 0.0f; }
  double column_sum(int64_t tile_row, int64_t j) const {
    double s = 0;
    for (int64_t i = tile_row * rows; i < (tile_row + 1) * rows; ++i) s += at(i, j);
    return s;
  }
  float column_max(int64_t tile_row, int64_t j) const {
    float m = at(tile_row * rows, j);
    for (int64_t i = tile_row * rows; i < (tile_row + 1) * rows; ++i) m = std::max(m, at(i, j));
    return m;
  }
  double total(int64_t tile_row, int64_t tile_col) const {
    double s = 0;
    for (int64_t j = tile_col * cols; j < (tile_col + 1) * cols; ++j) s += column_sum(tile_row, j);
    return s;
  }
};

// Checks out(r, j) against the column sums of 128x128 tiles of x.
int64_t colsum_128_mismatches(const Tensor<float, 2>& out, const Tensor<float, 2>& x) {
  TileReference ref{128, 128, x};
  int64_t bad = 0;
  for (int64_t r = 0; r < out.shape()[0]; ++r)
    for (int64_t j = 0; j < out.shape()[1]; ++j)
      if (!close(std::as_const(out)(r, j), ref.column_sum(r, j)) && bad++ < 5)
        WARN("column sum (" << r << ", " << j << "): got " << std::as_const(out)(r, j) << ", want "
                            << ref.column_sum(r, j));
  return bad;
}

bool is_elf(const std::vector<char>& b) { return b.size() > 4 && b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F'; }

// The PTX declares its scratch as dynamic shared memory (`.extern .shared .align 16 .b8 name[];`)
// and states `bytes` of it; it has no static shared array.
void check_dynamic_shared(const CompiledArtifact& art, int bytes) {
  INFO(art.target);
  const std::size_t decl = art.ptx.find(".extern .shared .align 16 .b8 __tile_dynamic_scratch_");
  REQUIRE(decl != std::string::npos);
  const std::size_t eol = art.ptx.find('\n', decl);
  CHECK(art.ptx.substr(decl, eol - decl).ends_with("[];"));
  CHECK(art.ptx.find(".shared .align 16 .b8 __tile_scratch_") == std::string::npos);
  CHECK(detail::dynamic_shared_bytes_of_ptx(art.ptx) == bytes);
  CHECK(art.ptx.find("// tessera.dynamic_shared_bytes " + std::to_string(bytes)) != std::string::npos);
  CHECK(is_elf(art.cubin));
}

}  // namespace

TEST_CASE("reductions of 64 KiB tiles compile for sm_90 and sm_100a with dynamic shared memory",
          "[smem][compile][ptx]") {
  Tensor<float, 2> x({300, 200}), sums({3, 200}), sums512({1, 200}), maxima({1, 200}), totals({3, 2});
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    check_dynamic_shared(colsum_128().compile(t, sums.partition<1, 128>(), x), 65536);
    check_dynamic_shared(colsum_max_512x32().compile(t, sums512.partition<1, 32>(), maxima.partition<1, 32>(), x),
                         65536);
    // The row sum after it gets its own region after the 64 KiB (16 bytes: four warps' partials),
    // in each of the kernel's two copies (programs inside the tensor, programs on its edges).
    check_dynamic_shared(total_128().compile(t, totals.partition<1, 1>(), x), 65536 + 2 * 16);
  }
}

TEST_CASE("a reduction whose scratch fits 48 KiB keeps its static shared array", "[smem][compile][ptx]") {
  Tensor<float, 2> x({300, 200}), sums({3, 200});
  auto k = kernel("small_colsum_128x64", [](auto out, auto a) {
    return out.store(sum<0>(load<128, 64>(a, program_id<0>(), program_id<1>())));  // 32 KiB
  });
  CompiledArtifact art = k.compile(Target::sm_90, sums.partition<1, 64>(), x);
  CHECK(art.ptx.find(".shared .align 16 .b8 __tile_scratch_tessera_small_colsum_128x64[32768];") != std::string::npos);
  CHECK(art.ptx.find(".extern .shared") == std::string::npos);
  CHECK(art.ptx.find("tessera.dynamic_shared_bytes") == std::string::npos);
  CHECK(detail::dynamic_shared_bytes_of_ptx(art.ptx) == 0);
}

TEST_CASE("the shared memory a CTA may use per GPU architecture", "[smem]") {
  CHECK(detail::max_shared_bytes_of_arch("sm_90") == 232448);
  CHECK(detail::max_shared_bytes_of_arch("sm_100a") == 232448);
  CHECK(detail::max_shared_bytes_of_arch("sm_80") == 166912);
  CHECK(detail::max_shared_bytes_of_arch("sm_86") == 101376);
  CHECK(detail::max_shared_bytes_of_arch("sm_89") == 101376);
  CHECK(detail::max_shared_bytes_of_arch("sm_120") == 101376);
  CHECK(detail::max_shared_bytes_of_arch("sm_75") == 49152);
}

TEST_CASE("a reduction needing more shared memory than the GPU has is a clear error", "[smem][compile]") {
  Tensor<float, 2> x({256, 256}), sums({1, 256});
  for (Target t : {Target::sm_90, Target::sm_100a}) {
    const std::string arch = t == Target::sm_90 ? "sm_90" : "sm_100a";
    INFO(arch);
    CHECK_THROWS_WITH(colsum_256().compile(t, sums.partition<1, 256>(), x),
                      Contains("kernel 'big_colsum_256'") && Contains("for target " + arch) &&
                          Contains("needs 262144 bytes of shared memory") &&
                          Contains("232448 bytes (227 KiB)") && Contains("use smaller tiles"));
  }
}

TEST_CASE("the dynamic shared memory of a kernel comes back from the disk cache", "[smem][compile][cache]") {
  test_env::TempDir cache;
  test_env::EnvGuard env;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  env.set("TESSERA_DUMP_DIR", nullptr);
  clear_memory_cache();  // compiled by an earlier test, into another cache directory
  Tensor<float, 2> x({300, 200}), sums({3, 200});
  auto k = colsum_128();
  CHECK_FALSE(k.compile(Target::sm_90, sums.partition<1, 128>(), x).from_disk_cache);
  clear_memory_cache();
  CompiledArtifact again = k.compile(Target::sm_90, sums.partition<1, 128>(), x);
  CHECK(again.from_disk_cache);
  check_dynamic_shared(again, 65536);
}

static void column_sums_of_128x128_tiles(Target target) {
  auto x = random_tensor<float, 2>({300, 200}, -1, 1, 21);  // ragged in both dims
  Tensor<float, 2> sums({3, 200});
  colsum_128().launch_on(target, sums.partition<1, 128>(), x);
  CHECK(colsum_128_mismatches(sums, x) == 0);
  // Whole tiles (the variant without bounds tests on the GPU).
  auto y = random_tensor<float, 2>({256, 384}, -1, 1, 22);
  Tensor<float, 2> whole({2, 384});
  colsum_128().launch_on(target, whole.partition<1, 128>(), y);
  CHECK(colsum_128_mismatches(whole, y) == 0);
}
TESSERA_TARGET_TEST_CASE("column sums of 128x128 f32 tiles (64 KiB of scratch)", "[smem]", column_sums_of_128x128_tiles)

static void totals_of_128x128_tiles(Target target) {
  auto x = random_tensor<float, 2>({300, 200}, -1, 1, 23);
  Tensor<float, 2> totals({3, 2});
  total_128().launch_on(target, totals.partition<1, 1>(), x);
  TileReference ref{128, 128, x};
  int64_t bad = 0;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t c = 0; c < 2; ++c) bad += !close(std::as_const(totals)(r, c), ref.total(r, c), 1e-5, 1e-3);
  CHECK(bad == 0);
}
TESSERA_TARGET_TEST_CASE("totals of 128x128 f32 tiles (64 KiB of scratch)", "[smem]", totals_of_128x128_tiles)

static void columns_of_512x32_tiles(Target target) {
  auto x = random_tensor<float, 2>({1100, 100}, -2, -1, 24);  // negative: the padding's 0 is the max
  Tensor<float, 2> sums({3, 100}), maxima({3, 100});
  colsum_max_512x32().launch_on(target, sums.partition<1, 32>(), maxima.partition<1, 32>(), x);
  TileReference ref{512, 32, x};
  int64_t bad = 0;
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < 100; ++j)
      bad += !close(std::as_const(sums)(r, j), ref.column_sum(r, j)) +
             (std::as_const(maxima)(r, j) != ref.column_max(r, j));
  CHECK(bad == 0);
  CHECK(std::as_const(maxima)(2, 0) == 0.0f);  // rows 1024..1535: 76 inside, the rest padding
  CHECK(std::as_const(maxima)(0, 0) < -0.5f);
}
TESSERA_TARGET_TEST_CASE("sums and maxima of 512x32 f32 tiles along axis 0 (64 KiB of scratch)", "[smem]",
                         columns_of_512x32_tiles)

TEST_CASE("a reduction too big for the GPU still runs on the CPU target", "[smem][cpu]") {
  auto x = random_tensor<float, 2>({300, 256}, -1, 1, 25);
  Tensor<float, 2> sums({2, 256});
  colsum_256().launch_on(Target::cpu, sums.partition<1, 256>(), x);
  TileReference ref{256, 256, x};
  int64_t bad = 0;
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t j = 0; j < 256; ++j) bad += !close(std::as_const(sums)(r, j), ref.column_sum(r, j));
  CHECK(bad == 0);
}

// Async launches (an async burst goes through a pool stream's launcher thread), a graph replay, and
// the kernel loaded again from the disk cache: each passes the dynamic shared memory.
TEST_CASE("big reductions on the GPU: async, graphs and the disk cache (gpu)", "[smem][gpu]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  const Target gpu = Target::sm_90;
  auto x = random_tensor<float, 2>({1000, 600}, -1, 1, 26);
  std::vector<Tensor<float, 2>> outs;
  for (int i = 0; i < 8; ++i) outs.emplace_back(std::array<int64_t, 2>{8, 600});
  auto k = colsum_128();
  for (auto& o : outs) k.launch_async(on(gpu), o.partition<1, 128>(), x).detach();
  for (auto& o : outs) CHECK(colsum_128_mismatches(o, x) == 0);

  Tensor<float, 2> replayed({8, 600});
  Graph g(gpu);
  {
    auto recording = g.capture();
    k.launch(replayed.partition<1, 128>(), x);
  }
  g.replay();
  CHECK(colsum_128_mismatches(replayed, x) == 0);
  x.fill(0.5f);
  g.replay();
  CHECK(std::as_const(replayed)(7, 599) == 0.5f * (1000 - 7 * 128));

  test_env::TempDir cache;
  test_env::EnvGuard env;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  env.set("TESSERA_DUMP_DIR", nullptr);
  auto y = random_tensor<float, 2>({384, 256}, -1, 1, 27);
  Tensor<float, 2> first({3, 256}), second({3, 256});
  clear_memory_cache();  // compiled above, into another cache directory
  k.launch_on(gpu, first.partition<1, 128>(), y);
  clear_memory_cache();
  CHECK(k.compile(gpu, second.partition<1, 128>(), y).from_disk_cache);
  k.launch_on(gpu, second.partition<1, 128>(), y);
  CHECK(colsum_128_mismatches(first, y) == 0);
  CHECK(colsum_128_mismatches(second, y) == 0);
}
