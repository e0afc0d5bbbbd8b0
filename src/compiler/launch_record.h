// launch_record.h: what a launch needs to know of compiled GPU code besides its cubin and PTX: the
// target, the CTA size, how programs map to CTAs and the dynamic shared memory. The compile fills
// it in; the disk cache stores it beside the cubin (entry kind "launch", a small JSON object) and
// a hit reads it back, so that nothing is recovered by scanning the PTX.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/pipeline.h"

namespace tessera::detail {

struct LaunchRecord {
  std::string arch;              // "sm_90"
  int block_size = 0;            // threads per CTA
  int ctas_per_program = 1;      // CTAs that run one program together
  int programs_per_cta = 1;      // programs that share one CTA
  int dynamic_shared_bytes = 0;  // per CTA, 0 if none
  std::string isa;               // "sm_90a" for code of the architecture-specific target, else ""
  bool persistent = false;       // persistent CTAs
  std::vector<TensorMapSpec> tensor_maps;
  bool whole_program_cubin = false;  // the cubin is ptxas' whole-program compile (GpuCode)
};

// The record of compiled code.
LaunchRecord launch_record_of(const GpuCode& code);
// Sets code's fields from the record.
void apply_launch_record(const LaunchRecord& record, GpuCode& code);

// {"arch": "sm_90", "block_size": 256, ...}
std::string to_json(const LaunchRecord& record);
// The record of that text; std::nullopt when it is not such an object or a value is out of range
// (a block size neither a power of two nor whole warpgroups up to 1024, a count below 1, negative
// shared memory, a malformed tensor map). Records written before isa, persistent, tensor_maps and
// whole_program_cubin existed read as without them.
std::optional<LaunchRecord> parse_launch_record(std::string_view json);

}  // namespace tessera::detail
