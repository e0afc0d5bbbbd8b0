// tool_run.h: runs an external program (tileiras, tileirdisasm, a test's ptxas) with a time limit
// and collects its output.
//
// The child's stdout and stderr go to temporary files, read back after it exits and removed
// whatever happened; llvm::sys::ExecuteAndWait kills the child when the time limit runs out. The
// child inherits the environment, with CUDA_HOME replaced where the caller gives one (tileiras
// from the wheels runs the ptxas and libNVVM of its own version, tileiras.h).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

// A temporary file, named "tessera-tool-XXXXXX<suffix>", removed when this goes out of scope.
class TempFile {
 public:
  explicit TempFile(std::string_view suffix);
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  const std::string& path() const { return path_; }
  std::string read() const;
  // Replaces the file's contents with `bytes`; throws tessera::Error if it cannot.
  void write(std::span<const char> bytes) const;

 private:
  std::string path_;
};

struct ToolRun {
  int status = 0;  // the exit status; negative when the child was stopped (the time limit)
  bool failed_to_start = false;
  std::string message;  // why it could not be run or was stopped
  std::string out, err;
};

// Runs `program args...` with at most `timeout_seconds` of wall time; `cuda_home`, if not empty,
// is the child's CUDA_HOME.
ToolRun run_tool(const std::string& program, const std::vector<std::string>& args, int timeout_seconds,
                 const std::string& cuda_home = "");

}  // namespace tessera::detail
