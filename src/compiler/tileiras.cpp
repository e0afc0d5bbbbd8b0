// tileiras.cpp: finds and runs tileiras and tileirdisasm (tileiras.h).
//
// Each run writes the bytecode to a temporary file and runs the tool through run_tool
// (tool_run.h: a time limit, output and stderr read back, temporary files removed).
#include "compiler/tileiras.h"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>

#include "compiler/tool_run.h"
#include "llvm/Support/Program.h"

namespace tessera::detail {
namespace {

namespace fs = std::filesystem;

std::span<const char> as_chars(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// The directory to use as CUDA_HOME for `tool` when it sits in a wheel's layout (<home>/bin/tool
// with <home>/lib/libnvvm.so*), else "".
std::string own_cuda_home(const std::string& tool) {
  fs::path home = fs::path(tool).parent_path().parent_path();
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(home / "lib", ec))
    if (e.path().filename().string().starts_with("libnvvm.so")) return home.string();
  return "";
}

// Runs `program args...` with at most `timeout_seconds` of wall time, CUDA_HOME set as
// own_cuda_home says.
ToolRun run(const std::string& program, const std::vector<std::string>& args, int timeout_seconds) {
  return run_tool(program, args, timeout_seconds, own_cuda_home(program));
}

std::string cache_home() {
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return x;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache";
  return "/tmp";
}

}  // namespace

std::string default_tileiras_path() {
  std::string home;
  if (const char* h = std::getenv("TESSERA_TILEIRAS_HOME"); h && *h)
    home = h;
  else
    home = cache_home() + "/tessera/tileiras";
  return home + "/nvidia/cu13/bin/tileiras";
}

std::optional<std::string> find_tileiras() {
  if (const char* t = std::getenv("TESSERA_TILEIRAS"); t && *t) return std::string(t);
  std::error_code ec;
  if (std::string d = default_tileiras_path(); fs::is_regular_file(d, ec)) return d;
  if (auto p = llvm::sys::findProgramByName("tileiras")) return *p;
  return std::nullopt;
}

std::string tileiras_version(const std::string& tileiras) {
  // Asked once per binary and process: every tileir compile's cache key holds it.
  static std::mutex mutex;
  static std::map<std::string, std::string> versions;
  {
    std::lock_guard lock(mutex);
    if (auto it = versions.find(tileiras); it != versions.end()) return it->second;
  }
  ToolRun r = run(tileiras, {"--version"}, 60);
  if (r.failed_to_start || r.status != 0)
    throw TileirasError(fmt::format("tessera: cannot run '{} --version': {}{}", tileiras, r.message, r.err), "", "",
                        r.err);
  std::size_t v = r.out.find(", V");
  std::size_t end = v == std::string::npos ? v : r.out.find_first_of(" \n", v + 2);
  std::string version =
      v == std::string::npos ? r.out : r.out.substr(v + 2, end == std::string::npos ? end : end - v - 2);
  std::lock_guard lock(mutex);
  versions[tileiras] = version;
  return version;
}

std::vector<char> run_tileiras(const std::string& tileiras, std::span<const uint8_t> bytecode, std::string_view kernel,
                               std::string_view arch, int timeout_seconds) {
  if (arch.ends_with("a") || !arch.starts_with("sm_"))
    throw TileirasError(fmt::format("tessera: kernel '{}': tileiras compiles for sm_NN architectures without the 'a' "
                                    "suffix (sm_90, sm_100), not '{}'",
                                    kernel, arch),
                        std::string(kernel), std::string(arch), "");
  TempFile in(".tileirbc"), cubin(".cubin");
  in.write(as_chars(bytecode));
  ToolRun r = run(tileiras, {fmt::format("--gpu-name={}", arch), "-o", cubin.path(), in.path()}, timeout_seconds);
  if (r.failed_to_start || r.status != 0) {
    std::string why = r.failed_to_start ? fmt::format("could not be run ({})", r.message)
                      : r.status < 0    ? fmt::format("was stopped: {}", r.message.empty() ? "time limit" : r.message)
                                        : fmt::format("failed with exit status {}", r.status);
    throw TileirasError(fmt::format("tessera: kernel '{}': tileiras ({}) {} compiling for {}:\n{}", kernel, tileiras,
                                    why, arch, r.err),
                        std::string(kernel), std::string(arch), r.err);
  }
  std::string bytes = cubin.read();
  if (bytes.size() < 4 || bytes.compare(0, 4, "\x7f" "ELF") != 0)
    throw TileirasError(fmt::format("tessera: kernel '{}': tileiras ({}) wrote no cubin for {}:\n{}", kernel, tileiras,
                                    arch, r.err),
                        std::string(kernel), std::string(arch), r.err);
  return {bytes.begin(), bytes.end()};
}

std::string run_tileirdisasm(const std::string& tileiras, std::span<const uint8_t> bytecode, std::string_view kernel) {
  std::string disasm = (fs::path(tileiras).parent_path() / "tileirdisasm").string();
  TempFile in(".tileirbc");
  in.write(as_chars(bytecode));
  ToolRun r = run(disasm, {in.path()}, 60);
  if (r.failed_to_start || r.status != 0)
    throw TileirasError(fmt::format("tessera: kernel '{}': tileirdisasm ({}) rejected the bytecode: {}{}", kernel,
                                    disasm, r.message, r.err),
                        std::string(kernel), "", r.err);
  return r.out;
}

}  // namespace tessera::detail
