// ptxas.cpp: finds the toolkit's ptxas and runs it (ptxas.h), through run_tool (tool_run.h: a
// time limit, output read back, temporary files removed).
#include "compiler/ptxas.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "compiler/tool_run.h"
#include "driver/cuda_driver.h"
#include "driver/gpu_arch.h"

namespace tessera::detail {

int ptxas_release(std::string_view version_text) {
  const std::size_t at = version_text.find("release ");
  if (at == std::string_view::npos) return 0;
  int major = 0, minor = 0;
  const std::string number(version_text.substr(at + 8, 16));
  if (std::sscanf(number.c_str(), "%d.%d", &major, &minor) != 2 || major <= 0 || minor < 0) return 0;
  return major * 1000 + minor * 10;
}

std::vector<std::string> toolkit_ptxas_paths() {
  std::vector<std::string> paths;
  if (const char* home = std::getenv("CUDA_HOME"); home && *home)
    paths.push_back((std::filesystem::path(home) / "bin" / "ptxas").string());
  paths.emplace_back("/usr/local/cuda/bin/ptxas");
  return paths;
}

const std::optional<Ptxas>& toolkit_ptxas() {
  static const std::optional<Ptxas> found = []() -> std::optional<Ptxas> {
    std::vector<std::string> candidates = toolkit_ptxas_paths();
    if (const char* given = std::getenv("TESSERA_PTXAS"); given && *given) {
      if (std::string_view(given) == "0") return std::nullopt;
      candidates = {given};
    }
    for (const std::string& p : candidates) {
      std::error_code ec;
      if (!std::filesystem::is_regular_file(p, ec)) continue;
      const ToolRun r = run_tool(p, {"--version"}, 30);
      const int version = r.status == 0 ? ptxas_release(r.out) : 0;
      if (version > 0) return Ptxas{p, version};
    }
    return std::nullopt;
  }();
  return found;
}

std::optional<std::vector<char>> whole_program_cubin(const Ptxas& ptxas, const std::string& ptx, std::string_view arch) {
  TempFile in(".ptx"), out(".cubin");
  in.write(ptx);
  const ToolRun r = run_tool(ptxas.path, {"-arch=" + std::string(arch), "-O3", in.path(), "-o", out.path()}, 120);
  if (r.failed_to_start || r.status != 0) return std::nullopt;
  const std::string cubin = out.read();
  if (cubin.empty()) return std::nullopt;
  return std::vector<char>(cubin.begin(), cubin.end());
}

std::optional<std::vector<char>> cubin_for_this_gpu(const std::string& ptx, std::string_view isa) {
  const GpuArch* arch = gpu_arch(isa);
  CudaDriver* driver = CudaDriver::get_if_available();
  if (!arch || !driver || device_load(*arch, driver->compute_capability()) != DeviceLoad::cubin) return std::nullopt;
  const std::optional<Ptxas>& ptxas = toolkit_ptxas();
  if (!ptxas || ptxas->version > driver->driver_version()) return std::nullopt;
  return whole_program_cubin(*ptxas, ptx, isa);
}

}  // namespace tessera::detail
