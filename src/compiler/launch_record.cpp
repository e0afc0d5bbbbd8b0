// launch_record.cpp: see launch_record.h.
#include "compiler/launch_record.h"

#include <bit>

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::detail {

LaunchRecord launch_record_of(const GpuCode& code) {
  return {code.arch, code.block_size, code.ctas_per_program, code.programs_per_cta, code.dynamic_shared_bytes};
}

void apply_launch_record(const LaunchRecord& record, GpuCode& code) {
  code.arch = record.arch;
  code.block_size = record.block_size;
  code.ctas_per_program = record.ctas_per_program;
  code.programs_per_cta = record.programs_per_cta;
  code.dynamic_shared_bytes = record.dynamic_shared_bytes;
}

std::string to_json(const LaunchRecord& record) {
  llvm::json::Object o{{"arch", record.arch},
                       {"block_size", record.block_size},
                       {"ctas_per_program", record.ctas_per_program},
                       {"programs_per_cta", record.programs_per_cta},
                       {"dynamic_shared_bytes", record.dynamic_shared_bytes}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(o));
  return text;
}

std::optional<LaunchRecord> parse_launch_record(std::string_view json) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(llvm::StringRef(json.data(), json.size()));
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object* o = value->getAsObject();
  if (!o) return std::nullopt;
  auto number = [&](llvm::StringRef name, int64_t lo, int64_t hi) -> std::optional<int> {
    std::optional<int64_t> v = o->getInteger(name);
    if (!v || *v < lo || *v > hi) return std::nullopt;
    return static_cast<int>(*v);
  };
  std::optional<llvm::StringRef> arch = o->getString("arch");
  std::optional<int> block = number("block_size", 1, 1024), ctas = number("ctas_per_program", 1, 1 << 16),
                     programs = number("programs_per_cta", 1, 1024),
                     shared = number("dynamic_shared_bytes", 0, (int64_t{1} << 31) - 1);
  if (!arch || !block || !ctas || !programs || !shared || !std::has_single_bit(static_cast<unsigned>(*block)))
    return std::nullopt;
  return LaunchRecord{arch->str(), *block, *ctas, *programs, *shared};
}

}  // namespace tessera::detail
