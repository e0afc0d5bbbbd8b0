// autotune.cpp: where the choices of autotuned launches are kept (tessera/autotune.h). A problem's
// choice lives in a process map (memory_key) and in the disk cache, one entry per problem: its
// CacheKeyMaterial names the tuner (kernel), the options' names, tiles and ASTs (source_sha256),
// the target, and in `variant` the GPU, the back end and the arguments; the build id keeps a choice
// made with one build of the compiler from being served to another. The entry's "tuning" file is
// the record below, which metadata.json's "info" repeats so that what was chosen is visible there:
//
//   {"tuner": "matmul", "chosen": 1, "kernel": "mm_128x128",
//    "options": [{"kernel": "mm_128x256", "tile": "128x256", "ms": 0.21},
//                {"kernel": "mm_128x128", "tile": "128x128", "ms": 0.19, "group_rows": 16,
//                 "backend": "tileir"}]}
//
// ("ms": null for an option that threw; an option's hints and back end where it sets them). A record that does not parse or names an option out of
// range is ignored: the problem is tuned again and the entry replaced.
#include "tessera/autotune.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <unordered_map>

#include "cache/build_id.h"
#include "cache/cache_key.h"
#include "cache/disk_cache.h"
#include "compiler/pipeline.h"
#include "compiler/specialization.h"
#include "driver/cuda_driver.h"
#include "driver/gpu_arch.h"
#include "execution/graph_capture.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"
#include "tessera/version.h"

namespace tessera {
namespace detail {
namespace {

// The process's choices by memory_key.
struct TuningMemory {
  std::mutex mutex;
  std::unordered_map<std::string, TuningResult> choices;
  static TuningMemory& get() {
    static TuningMemory* memory = new TuningMemory();  // never destroyed: launches may run at exit
    return *memory;
  }
};

// What a problem's choice depends on besides the options: the GPU (or the CPU), the back end and
// every argument's kind, dtype, shape, strides and offset.
std::string problem_text(const TuningProblem& p) {
  std::string s = "tuning\n";
  if (p.target == Target::cpu) {
    s += "device cpu\n";
  } else {
    const CudaDriver* driver = CudaDriver::get_if_available();
    s += fmt::format("device {} sms {}\nbackend {}\n", driver ? driver->device_name() : "none",
                     driver ? driver->multiprocessor_count() : 0, p.backend == Backend::tileir ? "tileir" : "nvvm");
  }
  for (const ArgDesc& a : p.args) {
    static constexpr const char* kKinds[] = {"out", "in", "scalar"};
    s += fmt::format("{} {}", kKinds[static_cast<int>(a.kind)], dtype_name(a.dtype));
    if (a.kind != ArgDesc::Kind::scalar) {
      s += " shape";
      for (int d = 0; d < a.rank; ++d) s += fmt::format(" {}", a.shape[d]);
      s += " strides";
      for (int d = 0; d < a.rank; ++d) s += fmt::format(" {}", a.strides[d]);
      s += fmt::format(" offset {}", a.offset);
    }
    s += "\n";
  }
  return s;
}

// An option's back end as the keys and the record name it: "" where the launch's applies.
std::string_view backend_text(const TuningOptionDesc& o) { return o.backend ? to_string(*o.backend) : ""; }

// The process map's key: each option by its name, its hints, its back end and the address and size of its AST
// text (a constant of the binary, as in the kernel cache's fast path), the target and the problem.
// A launch of a tuned problem then hashes no AST; only the disk cache's key (material_of) does.
std::string memory_key(const TuningProblem& p) {
  std::string s = fmt::format("{}\n{}\n", p.tuner, target_name(p.target));
  for (const TuningOptionDesc& o : p.options)
    s += fmt::format("{} {} {} {} {}\n", o.kernel, static_cast<const void*>(o.ast.data()), o.ast.size(),
                     hints_text(o.hints), backend_text(o));
  return s + problem_text(p);
}

CacheKeyMaterial material_of(const TuningProblem& p) {
  CacheKeyBuilder options;
  for (const TuningOptionDesc& o : p.options)
    options.add(o.kernel).add(o.tile).add(o.ast).add(hints_text(o.hints)).add(backend_text(o));
  CacheKeyMaterial m;
  m.kernel = std::string(p.tuner);
  m.source_sha256 = options.hex();
  m.target = std::string(target_name(p.target));
  m.variant = problem_text(p);
  m.tessera_version = TESSERA_VERSION_STRING;
  m.build_id = self_build_id();
  return m;
}

std::string record_json(const TuningProblem& p, const TuningResult& r) {
  llvm::json::Array options;
  for (std::size_t i = 0; i < p.options.size(); ++i) {
    llvm::json::Value ms = nullptr;
    if (i < r.ms.size() && r.ms[i] >= 0) ms = r.ms[i];
    llvm::json::Object option{{"kernel", p.options[i].kernel}, {"tile", p.options[i].tile}, {"ms", std::move(ms)}};
    if (p.options[i].hints.pipeline_stages) option["pipeline_stages"] = p.options[i].hints.pipeline_stages;
    if (p.options[i].hints.group_rows) option["group_rows"] = p.options[i].hints.group_rows;
    if (p.options[i].hints.occupancy) option["occupancy"] = p.options[i].hints.occupancy;
    if (p.options[i].hints.cluster_programs) option["cluster_programs"] = p.options[i].hints.cluster_programs;
    if (p.options[i].hints.tma) option["tma"] = *p.options[i].hints.tma;
    if (p.options[i].hints.stream_stages) option["stream_stages"] = p.options[i].hints.stream_stages;
    if (p.options[i].hints.threads) option["threads"] = p.options[i].hints.threads;
    if (p.options[i].hints.split_k) option["split_k"] = p.options[i].hints.split_k;
    if (p.options[i].hints.early_frozen_steps) option["early_frozen_steps"] = p.options[i].hints.early_frozen_steps;
    if (p.options[i].hints.bulk_streams) option["bulk_streams"] = true;
    if (p.options[i].hints.ping_pong) option["ping_pong"] = true;
    if (p.options[i].backend) option["backend"] = std::string(backend_text(p.options[i]));
    options.push_back(std::move(option));
  }
  llvm::json::Object o{{"tuner", std::string(p.tuner)},
                       {"chosen", r.index},
                       {"kernel", r.kernel},
                       {"options", std::move(options)}};
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::json::Value(std::move(o));
  return s;
}

// The result a record holds for `p`, or nullopt if it does not parse or does not fit `p`.
std::optional<TuningResult> parse_record(const TuningProblem& p, std::string_view text) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  const llvm::json::Object* o = value->getAsObject();
  const llvm::json::Array* options = o ? o->getArray("options") : nullptr;
  std::optional<int64_t> chosen = o ? o->getInteger("chosen") : std::nullopt;
  if (!options || !chosen || options->size() != p.options.size() || *chosen < 0 ||
      *chosen >= static_cast<int64_t>(p.options.size()))
    return std::nullopt;
  TuningResult r;
  r.index = static_cast<int>(*chosen);
  r.kernel = p.options[r.index].kernel;
  r.source = TuningResult::Source::disk;
  for (const llvm::json::Value& option : *options) {
    const llvm::json::Object* e = option.getAsObject();
    std::optional<double> ms = e ? e->getNumber("ms") : std::nullopt;
    r.ms.push_back(ms ? *ms : -1.0);
  }
  return r;
}

}  // namespace

bool autotune_enabled() {
  const char* v = std::getenv("TESSERA_AUTOTUNE");
  return !(v && std::string_view(v) == "0");
}

bool capturing_graph() { return current_capture() != nullptr; }

std::optional<TuningResult> find_tuning(const TuningProblem& problem) {
  for (std::size_t i = 0; i < problem.options.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (problem.options[i].kernel == problem.options[j].kernel && problem.options[i].hints == problem.options[j].hints &&
          problem.options[i].backend == problem.options[j].backend)
        throw Error(fmt::format("tessera::autotune '{}': options {} and {} are both kernel '{}' with the same hints and "
                                "back end; give each option a kernel of its own name, other hints or another back end "
                                "(the tuning record names the options by them)",
                                problem.tuner, j, i, problem.options[i].kernel));
  const std::string key = memory_key(problem);
  TuningMemory& memory = TuningMemory::get();
  {
    std::lock_guard lock(memory.mutex);
    if (auto it = memory.choices.find(key); it != memory.choices.end()) {
      TuningResult r = it->second;
      r.source = TuningResult::Source::memory;
      return r;
    }
  }
  DiskCache disk(DiskCache::default_dir());
  std::optional<std::vector<char>> bytes = disk.load(material_of(problem), "tuning");
  if (!bytes) return std::nullopt;
  std::optional<TuningResult> r = parse_record(problem, std::string_view(bytes->data(), bytes->size()));
  if (r) {
    std::lock_guard lock(memory.mutex);
    memory.choices.emplace(key, *r);
  }
  return r;
}

void keep_tuning(const TuningProblem& problem, const TuningResult& result) {
  {
    TuningMemory& memory = TuningMemory::get();
    std::lock_guard lock(memory.mutex);
    memory.choices.insert_or_assign(memory_key(problem), result);
  }
  const CacheKeyMaterial material = material_of(problem);
  const std::string record = record_json(problem, result);
  DiskCache disk(DiskCache::default_dir());
  disk.store(material, "tuning", std::span<const char>(record.data(), record.size()), record);
  if (const std::string dir = dump_dir(); !dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    std::string name(problem.tuner);
    for (char& ch : name)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    std::ofstream out(std::filesystem::path(dir) / fmt::format("{}.{}.tuning.json", name, target_name(problem.target)));
    out << record << "\n";
  }
}

void fail_every_option(const TuningProblem& problem, const std::vector<std::string>& errors) {
  std::string what = fmt::format("tessera::autotune '{}': every option failed:", problem.tuner);
  for (std::size_t i = 0; i < problem.options.size(); ++i)
    what += fmt::format("\n  option {} ({}, tile {}): {}", i, problem.options[i].kernel, problem.options[i].tile,
                        i < errors.size() ? errors[i] : "");
  throw Error(what);
}

}  // namespace detail

void clear_tuning() {
  detail::TuningMemory& memory = detail::TuningMemory::get();
  std::lock_guard lock(memory.mutex);
  memory.choices.clear();
}

}  // namespace tessera
