// raw_launch.h: what a raw driver-API launch of a tessera cubin needs besides the flattened
// arguments (the baselines of bench_jit_launch and bench_pipeline_overhead), read from the
// kernel's PTX as the launcher reads it: the block size the compiler chose (`.maxntid`) and the
// programs that share one CTA (`// tessera.programs_per_cta G`, absent when G = 1). With G > 1
// a launch of P programs along x runs g = min(G, P rounded up to a power of two) programs per CTA
// of g * block / G threads, in ceil(P / g) CTAs along x, and the kernel takes P as one more (i32)
// parameter after the arguments.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct RawShape {
  unsigned block = 128;  // of G programs
  unsigned programs_per_cta = 1;  // G
  // Programs per CTA of a launch of `programs` programs along x.
  int64_t per_cta(int64_t programs) const {
    int64_t g = 1;
    while (g < programs_per_cta && g < programs) g *= 2;
    return g;
  }
  // CTAs along x, and threads per CTA, for `programs` programs along x.
  unsigned ctas(int64_t programs) const { return static_cast<unsigned>((programs + per_cta(programs) - 1) / per_cta(programs)); }
  unsigned threads(int64_t programs) const { return static_cast<unsigned>(block / programs_per_cta * per_cta(programs)); }
  // Whether the kernel takes the program count after its arguments.
  bool takes_program_count() const { return programs_per_cta > 1; }
};

inline RawShape raw_shape(const std::string& ptx) {
  RawShape s;
  if (auto at = ptx.find(".maxntid "); at != std::string::npos) s.block = std::stoul(ptx.substr(at + 9));
  const std::string tag = "// tessera.programs_per_cta ";
  if (auto at = ptx.find(tag); at != std::string::npos) s.programs_per_cta = std::stoul(ptx.substr(at + tag.size()));
  return s;
}

}  // namespace bench
