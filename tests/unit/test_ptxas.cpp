// test_ptxas.cpp: the whole-program compile of tensor-core PTX by the CUDA toolkit's ptxas
// (compiler/ptxas.h), which stands in for the driver's compile so that a tuner's options compile
// at once: the release read from `ptxas --version`, a cubin made of a wgmma GEMM's sm_90a PTX and
// nothing (no exception) for PTX that ptxas rejects, the launch record keeping which cubin an entry
// holds; on an sm_90 GPU, GEMMs compiled there (ptxas' cubin where the toolkit's ptxas is no newer
// than the driver, else the PTX) equal the host reference, fresh and from the disk cache.
#include <catch2/catch.hpp>
#include <tessera/tessera.h>

#include <string_view>

#include "compiler/launch_record.h"
#include "compiler/ptxas.h"
#include "driver/cuda_driver.h"
#include "gemm_products.h"
#include "matmul_kernels.h"
#include "ptxas_log.h"
#include "scoped_env.h"

using namespace tessera;

TEST_CASE("ptxas: the release is read from its version text", "[compile][ptxas]") {
  CHECK(detail::ptxas_release("ptxas: NVIDIA (R) Ptx optimizing assembler\nCuda compilation tools, release 13.0, "
                              "V13.0.88\nBuild cuda_13.0.r13.0/compiler.36424714_0\n") == 13000);
  CHECK(detail::ptxas_release("Cuda compilation tools, release 12.4, V12.4.131") == 12040);
  CHECK(detail::ptxas_release("") == 0);
  CHECK(detail::ptxas_release("Cuda compilation tools, release x.y") == 0);
}

TEST_CASE("ptxas: a wgmma GEMM's PTX compiles as a whole program; PTX it rejects gives no cubin", "[compile][ptxas]") {
  // The toolkit's ptxas as the tests find it (whatever TESSERA_PTXAS says to the library).
  const std::string path = ptxas_log::toolkit_ptxas_or_warn();
  if (path.empty()) return;
  const detail::ToolRun version = detail::run_tool(path, {"--version"}, 30);
  REQUIRE(version.status == 0);
  const detail::Ptxas ptxas{path, detail::ptxas_release(version.out)};
  CHECK(ptxas.version >= 12000);
  Tensor<bfloat16, 2> a({256, 128}), b({128, 256}), out({256, 256});
  const CompiledArtifact art = matmul_kernels::matmul<128, 128, 64>().compile(Target::sm_90, out.partition<128, 128>(), a, b);
  REQUIRE(art.ptx.find(".target sm_90a") != std::string::npos);
  const std::optional<std::vector<char>> cubin = detail::whole_program_cubin(ptxas, art.ptx, "sm_90a");
  REQUIRE(cubin);
  REQUIRE(cubin->size() > 4);
  CHECK(std::string_view(cubin->data(), 4) == "\x7f" "ELF");
  CHECK_FALSE(detail::whole_program_cubin(ptxas, ".version 8.0\n.target sm_90a\nnot PTX at all\n", "sm_90a"));
}

TEST_CASE("ptxas: the launch record keeps whether the cubin is ptxas' whole-program compile", "[compile][ptxas][cache]") {
  detail::LaunchRecord r{"sm_90", 384, 1, 1, 200000, "sm_90a", true};
  r.whole_program_cubin = true;
  std::optional<detail::LaunchRecord> back = detail::parse_launch_record(detail::to_json(r));
  REQUIRE(back);
  CHECK(back->whole_program_cubin);
  r.whole_program_cubin = false;
  back = detail::parse_launch_record(detail::to_json(r));
  REQUIRE(back);
  CHECK_FALSE(back->whole_program_cubin);
}

TEST_CASE("ptxas: GEMMs compiled on an sm_90 GPU equal the reference, fresh and from the disk cache", "[gpu][ptxas]") {
  if (!gpu_available() || detail::CudaDriver::get().compute_capability() != 90) {
    WARN("no sm_90 GPU on this machine: skipped");
    return;
  }
  test_env::TempDir cache;
  test_env::EnvGuard env;
  env.set("TESSERA_CACHE_DIR", cache.path.c_str());
  env.set("TESSERA_DUMP_DIR", nullptr);
  clear_memory_cache();
  const std::optional<detail::Ptxas>& ptxas = detail::toolkit_ptxas();
  const bool by_ptxas = ptxas && ptxas->version <= detail::CudaDriver::get().driver_version();
  INFO("the toolkit's ptxas stands in for the driver: " << by_ptxas);
  Tensor<bfloat16, 2> a({256, 128}), b({128, 256}), out({256, 256});
  LaunchOptions o;
  const CompiledArtifact art = matmul_kernels::matmul<128, 128, 64>().compile(o, out.partition<128, 128>(), a, b);
  bool ptxas_stage = false;
  for (const auto& [stage, ms] : art.stage_ms) ptxas_stage = ptxas_stage || stage == "ptxas";
  CHECK(ptxas_stage == by_ptxas);
  LaunchOptions ping_pong;
  ping_pong.hints.ping_pong = true;
  for (bool from_disk : {false, true}) {
    INFO("from the disk cache: " << from_disk);
    if (from_disk) clear_memory_cache();
    gemm_products::equal_the_reference<128, 128>(o, 300, 264, 72, 71);
    gemm_products::equal_the_reference<128, 128>(ping_pong, 1000, 2000, 136, 73);
  }
}
