// raw_launch.h: what a raw driver-API launch of a tessera cubin needs besides the flattened
// arguments (the baselines of bench_jit_launch and bench_pipeline_overhead), read from the
// kernel's PTX with the library's own readers: the block size the compiler chose (`.maxntid`) and
// the programs G that share one CTA (`// tessera.programs_per_cta G`, absent when G = 1). With
// G > 1 a launch of P programs along x runs g programs per CTA (the launcher's rule,
// programs_per_cta_of_launch) of g * block / G threads, in ceil(P / g) CTAs along x, and the
// kernel takes P as one more (i32) parameter after the arguments.
#pragma once

#include <cstdint>
#include <string>

#include "compiler/pipeline.h"

namespace bench {

struct RawShape {
  unsigned block = 128;           // of G programs
  unsigned programs_per_cta = 1;  // G
  // CTAs along x, and threads per CTA, for `programs` programs along x.
  unsigned ctas(int64_t programs) const {
    const int64_t g = tessera::detail::programs_per_cta_of_launch(programs_per_cta, programs);
    return static_cast<unsigned>((programs + g - 1) / g);
  }
  unsigned threads(int64_t programs) const {
    return static_cast<unsigned>(block / programs_per_cta *
                                 tessera::detail::programs_per_cta_of_launch(programs_per_cta, programs));
  }
};

inline RawShape raw_shape(const std::string& ptx) {
  return {static_cast<unsigned>(tessera::detail::block_size_of_ptx(ptx)),
          static_cast<unsigned>(tessera::detail::programs_per_cta_of_ptx(ptx))};
}

}  // namespace bench
