// variant_search.h: the GPU compile of a kernel and the search over its variants. compile_ptx
// lowers the kernel once at the block size the lowering picks (or CompilerHints::threads); the launcher then links it and tries
// the candidates below, each compiled and linked in full and judged by the occupancy its cubin
// records (occupancy.h: programs per SM on the target's SM) or by its PTX. The table, in the order
// they are tried:
//
//   candidate        what                                       tried when                              kept if
//   register-cap     the same PTX with .maxnreg, one more       fewer than half an SM's threads          more programs per SM, interior
//                    program per SM at a time                   resident; versioned, static or whole     frame not grown
//   fewer-in-flight  K loops unrolled with half the budget      tile-unroll-streaming-loops unrolled a   more programs per SM (after its
//                    (tile-unroll-streaming-loops)              loop; half empty                         own register cap)
//   rewiden          bf16 tiles widened again after a           the kernel widens bf16 before a          more programs per SM
//                    reduction (tile-rewiden-after-reduce)      reduction and uses it after; half empty
//   fewer-threads    half the threads, twice the elements       half empty and the lowering did not      at least 5/4 the programs per SM
//                    per thread                                 choose the threads for its CTA layout,
//                                                               nor the launch (CompilerHints::threads)
//   more-threads     512 threads, 32 registers                  a 256-thread row kernel with one         fills the SM without spilling or
//                                                               reduction, static or whole tiles, the    narrowing its loads
//                                                               launch giving no threads
//   plain-exp        exps without range tests (compiled on a    the lowering emitted exp range tests     more programs per SM than the first
//                    thread of its own beside the others)
//
// The measured reasons are beside each step in variant_search.cpp and in docs/compiler.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "frontend/ast.h"

namespace tessera::detail {

// Compiles `ast`, specialized as `spec` says, for the GPU architecture `arch`, links it (with the device functions it calls)
// and keeps the best variant of the table above; writes the cubin with the other stages when
// TESSERA_DUMP_DIR is set. Throws tessera::Error naming `kernel`.
GpuCode compile_gpu_code(std::string_view kernel, const KernelAst& ast, const Specialization& spec,
                         const std::vector<DeviceFunctionUse>& calls, const std::string& arch);

}  // namespace tessera::detail
