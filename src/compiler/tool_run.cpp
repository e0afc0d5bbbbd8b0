// tool_run.cpp: runs an external program and collects its output (tool_run.h).
#include "compiler/tool_run.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "tessera/errors.h"

extern char** environ;

namespace tessera::detail {

TempFile::TempFile(std::string_view suffix) {
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("tessera-tool", suffix, path))
    throw Error("tessera: cannot create a temporary file for an external tool");
  path_ = std::string(path);
}

TempFile::~TempFile() {
  std::error_code ec;
  std::filesystem::remove(path_, ec);
}

std::string TempFile::read() const {
  std::ifstream in(path_, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void TempFile::write(std::span<const char> bytes) const {
  std::ofstream out(path_, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw Error(fmt::format("tessera: cannot write {}", path_));
}

ToolRun run_tool(const std::string& program, const std::vector<std::string>& args, int timeout_seconds,
                 const std::string& cuda_home) {
  TempFile out(".out"), err(".err");
  std::vector<llvm::StringRef> argv{program};
  for (const auto& a : args) argv.push_back(a);
  const std::string home_var = "CUDA_HOME=" + cuda_home;
  std::vector<llvm::StringRef> env;
  for (char** e = environ; *e; ++e)
    if (cuda_home.empty() || !llvm::StringRef(*e).starts_with("CUDA_HOME=")) env.push_back(*e);
  if (!cuda_home.empty()) env.push_back(home_var);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""), llvm::StringRef(out.path()),
                                                llvm::StringRef(err.path())};
  ToolRun r;
  r.status = llvm::sys::ExecuteAndWait(program, argv, env, redirects, static_cast<unsigned>(timeout_seconds), 0,
                                       &r.message, &r.failed_to_start);
  r.out = out.read();
  r.err = err.read();
  return r;
}

}  // namespace tessera::detail
