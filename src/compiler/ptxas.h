// ptxas.h: the whole-program compile of a kernel's PTX by the CUDA toolkit's ptxas, run on the
// compiling thread.
//
// The tensor-core kernels are PTX for an architecture-specific target (sm_90a) that must be
// compiled as a whole program (nvJitLink's relocatable code ignores setmaxnreg), which the driver
// does when it loads the PTX. The driver compiles one module at a time in a process: a tuner's
// options, prepared on threads of their own, waited for each other there (five fused-epilogue
// GEMMs: 1.9 s one after another, 2.0 s from five threads, on the H100). ptxas in a child process
// compiles them at once. Used only where it can stand in for the driver: a toolkit ptxas exists
// (toolkit_ptxas below) and is no newer than the driver, so that its cubins load under the
// driver's compatibility rules; elsewhere the driver compiles the PTX when it loads it. A failure
// of ptxas is not an error here: the driver's compile of the same PTX reports it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::detail {

// Where the CUDA toolkit's ptxas is looked for, in order: CUDA_HOME/bin/ptxas (CUDA_HOME set),
// /usr/local/cuda/bin/ptxas.
std::vector<std::string> toolkit_ptxas_paths();

// The toolkit's ptxas and its version (13000 for release 13.0), found once per process:
// TESSERA_PTXAS if set (a path; "0": none, the driver compiles), else the first of
// toolkit_ptxas_paths() that says its version; nullopt where there is none.
struct Ptxas {
  std::string path;
  int version = 0;
};
const std::optional<Ptxas>& toolkit_ptxas();

// The version `ptxas --version` prints ("Cuda compilation tools, release 13.0, V13.0.88" ->
// 13000), or 0 when the text has none.
int ptxas_release(std::string_view version_text);

// The cubin of `ptx` compiled as a whole program for `arch` ("sm_90a") by `ptxas`; nullopt when
// ptxas fails or runs past two minutes (the driver then compiles the PTX and reports what is
// wrong with it).
std::optional<std::vector<char>> whole_program_cubin(const Ptxas& ptxas, const std::string& ptx, std::string_view arch);

// whole_program_cubin of `ptx` for the architecture-specific target `isa`, where it stands in for
// the driver: a GPU is present that runs `isa`'s cubins, and the toolkit's ptxas is no newer than
// its driver. nullopt elsewhere (no GPU, another GPU, no ptxas, a newer ptxas) and where ptxas
// fails: the code then loads as PTX.
std::optional<std::vector<char>> cubin_for_this_gpu(const std::string& ptx, std::string_view isa);

}  // namespace tessera::detail
