// raw_launch.h: what a raw driver-API launch of a tessera cubin needs besides the flattened
// arguments (the baselines of bench_jit_launch and bench_pipeline_overhead), read from the
// kernel's PTX as the launcher reads it: the block size the compiler chose (`.maxntid`) and the
// programs that share one CTA (`// tessera.programs_per_cta G`, absent when G = 1). With G > 1
// the CUDA grid has ceil(programs / G) CTAs along x and the kernel takes the number of programs
// along x as one more (i32) parameter after the arguments.
#pragma once

#include <cstdint>
#include <string>

namespace bench {

struct RawShape {
  unsigned block = 128;
  unsigned programs_per_cta = 1;
  // CTAs along x for `programs` programs along x.
  unsigned ctas(int64_t programs) const { return static_cast<unsigned>((programs + programs_per_cta - 1) / programs_per_cta); }
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
