// test_launch_record.cpp: the launch record (compiler/launch_record.h) that the disk cache keeps
// beside each cubin: its JSON round trip, values out of range refused, and a cubin loaded from the
// disk cache launching with the block size, CTA split and shared memory it was compiled with.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include "compiler/kernels.h"
#include "compiler/launch_record.h"
#include "scoped_env.h"

using namespace tessera;
using detail::LaunchRecord;

TEST_CASE("a launch record survives its JSON, and a malformed one is refused", "[cache][compile]") {
  const LaunchRecord r{"sm_90", 256, 2, 1, 65536};
  std::optional<LaunchRecord> back = detail::parse_launch_record(detail::to_json(r));
  REQUIRE(back);
  CHECK(back->arch == "sm_90");
  CHECK(back->block_size == 256);
  CHECK(back->ctas_per_program == 2);
  CHECK(back->programs_per_cta == 1);
  CHECK(back->dynamic_shared_bytes == 65536);
  for (const char* bad : {"", "[]", "{}", R"({"arch": "sm_90", "block_size": 96, "ctas_per_program": 1,
                          "programs_per_cta": 1, "dynamic_shared_bytes": 0})",
                          R"({"arch": "sm_90", "block_size": 128, "ctas_per_program": 0,
                          "programs_per_cta": 1, "dynamic_shared_bytes": 0})",
                          R"({"arch": "sm_90", "block_size": 128, "ctas_per_program": 1,
                          "programs_per_cta": 1, "dynamic_shared_bytes": -4})",
                          R"({"block_size": 128, "ctas_per_program": 1, "programs_per_cta": 1,
                          "dynamic_shared_bytes": 0})"}) {
    INFO(bad);
    CHECK_FALSE(detail::parse_launch_record(bad));
  }
}

namespace {

// The record of `text` compiled for sm_90 with the arguments `args`.
LaunchRecord record_of(std::string_view name, std::string_view text, std::span<const detail::ArgDesc> args,
                       bool* from_disk) {
  std::shared_ptr<const detail::Compiled> c = detail::lookup_or_compile({name, text, args}, Target::sm_90);
  *from_disk = c->from_disk_cache;
  return detail::launch_record_of(c->gpu);
}

}  // namespace

TEST_CASE("a cubin from the disk cache launches as it was compiled", "[cache][compile]") {
  test_env::TempDir cache;
  test_env::EnvGuard env;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  env.set("TESSERA_DUMP_DIR", nullptr);
  // An elementwise kernel of 4096 bf16 per tile (two CTAs per program), a row sum along a 1-D
  // 4096-wide f32 tile, and a column sum of a 128 x 128 f32 tile (64 KiB of dynamic shared memory).
  Tensor<bfloat16, 1> p({1 << 16}), q({1 << 16});
  Tensor<float, 2> m({256, 256}), cols({2, 256});
  auto split_out = q.partition<4096>();
  auto col_out = cols.partition<1, 128>();
  const std::array<detail::ArgDesc, 2> split_args{detail::to_arg(split_out), detail::to_arg(p)};
  const std::array<detail::ArgDesc, 2> col_args{detail::to_arg(col_out), detail::to_arg(m)};
  const std::string split = "(kernel (params (out bf16 1 [4096]) (in bf16 1)) (body (store 0 (add bf16 [4096] "
                            "(load_like bf16 [4096] 1 0) (load_like bf16 [4096] 1 0)))))";
  const std::string col = "(kernel (params (out f32 2 [1 128]) (in f32 2)) (body (store 0 (reduce f32 [1 128] sum 0 "
                          "(load f32 [128 128] 1 (program_id i32 [] 0) (program_id i32 [] 1))))))";
  for (auto [name, text, args] : {std::tuple{"record_split", split, std::span<const detail::ArgDesc>(split_args)},
                                  std::tuple{"record_cols", col, std::span<const detail::ArgDesc>(col_args)}}) {
    INFO(name);
    bool from_disk = true;
    const LaunchRecord fresh = record_of(name, text, args, &from_disk);
    CHECK_FALSE(from_disk);
    clear_memory_cache();
    const LaunchRecord cached = record_of(name, text, args, &from_disk);
    CHECK(from_disk);
    CHECK(cached.arch == fresh.arch);
    CHECK(cached.block_size == fresh.block_size);
    CHECK(cached.ctas_per_program == fresh.ctas_per_program);
    CHECK(cached.programs_per_cta == fresh.programs_per_cta);
    CHECK(cached.dynamic_shared_bytes == fresh.dynamic_shared_bytes);
    if (std::string_view(name) == "record_split") CHECK(fresh.ctas_per_program == 2);
    if (std::string_view(name) == "record_cols") CHECK(fresh.dynamic_shared_bytes > 48 * 1024);
  }
}
