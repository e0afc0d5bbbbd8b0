// launch_record.cpp: see launch_record.h.
#include "compiler/launch_record.h"

#include <bit>

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

namespace tessera::detail {

LaunchRecord launch_record_of(const GpuCode& code) {
  return {code.arch,     code.block_size, code.ctas_per_program, code.programs_per_cta, code.dynamic_shared_bytes,
          code.isa,      code.persistent, code.tensor_maps,      code.whole_program_cubin};
}

void apply_launch_record(const LaunchRecord& record, GpuCode& code) {
  code.arch = record.arch;
  code.block_size = record.block_size;
  code.ctas_per_program = record.ctas_per_program;
  code.programs_per_cta = record.programs_per_cta;
  code.dynamic_shared_bytes = record.dynamic_shared_bytes;
  code.isa = record.isa;
  code.persistent = record.persistent;
  code.tensor_maps = record.tensor_maps;
  code.whole_program_cubin = record.whole_program_cubin;
}

std::string to_json(const LaunchRecord& record) {
  llvm::json::Object o{{"arch", record.arch},
                       {"block_size", record.block_size},
                       {"ctas_per_program", record.ctas_per_program},
                       {"programs_per_cta", record.programs_per_cta},
                       {"dynamic_shared_bytes", record.dynamic_shared_bytes}};
  if (!record.isa.empty()) o["isa"] = record.isa;
  if (record.persistent) o["persistent"] = true;
  if (record.whole_program_cubin) o["whole_program_cubin"] = true;
  if (!record.tensor_maps.empty()) {
    llvm::json::Array maps;
    for (const TensorMapSpec& m : record.tensor_maps)
      maps.push_back(llvm::json::Array{m.param, m.box_inner, m.box_outer, m.swizzle_bytes});
    o["tensor_maps"] = std::move(maps);
  }
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
  if (!arch || !block || !ctas || !programs || !shared ||
      (!std::has_single_bit(static_cast<unsigned>(*block)) && *block % 128 != 0))
    return std::nullopt;
  LaunchRecord record{arch->str(), *block, *ctas, *programs, *shared};
  if (std::optional<llvm::StringRef> isa = o->getString("isa")) record.isa = isa->str();
  record.persistent = o->getBoolean("persistent").value_or(false);
  record.whole_program_cubin = o->getBoolean("whole_program_cubin").value_or(false);
  if (const llvm::json::Value* maps = o->get("tensor_maps")) {
    const llvm::json::Array* list = maps->getAsArray();
    if (!list) return std::nullopt;
    for (const llvm::json::Value& m : *list) {
      const llvm::json::Array* fields = m.getAsArray();
      if (!fields || fields->size() != 4) return std::nullopt;
      std::optional<int64_t> v[4];
      for (std::size_t i = 0; i < 4; ++i) v[i] = (*fields)[i].getAsInteger();
      if (!v[0] || !v[1] || !v[2] || !v[3] || *v[0] < 0 || *v[0] > 1024 || *v[1] < 1 || *v[1] > 256 || *v[2] < 1 ||
          *v[2] > 256 || (*v[3] != 0 && *v[3] != 32 && *v[3] != 64 && *v[3] != 128))
        return std::nullopt;
      record.tensor_maps.push_back({static_cast<int>(*v[0]), static_cast<unsigned>(*v[1]),
                                    static_cast<unsigned>(*v[2]), static_cast<unsigned>(*v[3])});
    }
  }
  return record;
}

}  // namespace tessera::detail
