// ptxas_log.h: what the CUDA toolkit's ptxas reports of a tensor-core kernel compiled as the
// driver compiles it (a whole program, where setmaxnreg counts), for the tests that check GEMM
// cubins for spills, serialized wgmma and ignored setmaxnreg (test_matmul.cpp, test_float8.cpp,
// test_split_k.cpp, test_tail_halves.cpp, test_ping_pong.cpp), and the ptxas test_ptxas.cpp gives
// the library's whole-program compile.
// Assumes the toolkit's layout: ptxas in CUDA_HOME/bin or /usr/local/cuda/bin.
#pragma once

#include <catch2/catch.hpp>

#include "compiler/ptxas.h"
#include "compiler/tool_run.h"

#include <filesystem>
#include <string>

namespace ptxas_log {

// The CUDA toolkit's ptxas (the first of the library's toolkit_ptxas_paths() that exists; not
// TESSERA_PTXAS, which the tests must not depend on), or "" where there is none.
inline std::string toolkit_ptxas() {
  for (const std::string& p : tessera::detail::toolkit_ptxas_paths())
    if (std::filesystem::exists(p)) return p;
  return "";
}

// toolkit_ptxas(), with a warning where there is none (the ptxas logs are then not checked).
inline std::string toolkit_ptxas_or_warn() {
  const std::string ptxas = toolkit_ptxas();
  if (ptxas.empty()) WARN("no CUDA toolkit ptxas (CUDA_HOME/bin, /usr/local/cuda/bin): ptxas logs not checked");
  return ptxas;
}

// What `ptxas -arch=sm_90a -v` prints compiling `ptx` as a whole program (as the driver does).
inline std::string whole_program_log(const std::string& ptxas, const std::string& ptx) {
  tessera::detail::TempFile in(".ptx"), out(".cubin");
  in.write(ptx);
  const tessera::detail::ToolRun r =
      tessera::detail::run_tool(ptxas, {"-arch=sm_90a", "-v", in.path(), "-o", out.path()}, 120);
  return r.message + r.out + r.err;
}

// Checks the whole-program ptxas log of a GEMM kernel's `ptx`: nothing spilled, no wgmma
// serialized, no setmaxnreg ignored (each such report fails the test). Nothing where `ptxas` is "".
inline void check_gemm_log(const std::string& ptxas, const std::string& ptx) {
  if (ptxas.empty()) return;
  const std::string log = whole_program_log(ptxas, ptx);
  INFO(log);
  CHECK(log.find(" 0 bytes spill stores") != std::string::npos);
  CHECK(log.find("serialized") == std::string::npos);
  CHECK(log.find("setmaxnreg") == std::string::npos);
}

}  // namespace ptxas_log
