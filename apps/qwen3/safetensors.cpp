// safetensors.cpp: mapping a file and validating its header (safetensors.h).
#include "safetensors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "errors.h"

namespace qwen3 {

using nlohmann::json;
using Kind = ModelError::Kind;

namespace {

struct DTypeEntry {
  DType dtype;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<DTypeEntry, 15> kDTypes{{{DType::kBool, "BOOL", 1},
                                              {DType::kU8, "U8", 1},
                                              {DType::kI8, "I8", 1},
                                              {DType::kI16, "I16", 2},
                                              {DType::kU16, "U16", 2},
                                              {DType::kI32, "I32", 4},
                                              {DType::kU32, "U32", 4},
                                              {DType::kI64, "I64", 8},
                                              {DType::kU64, "U64", 8},
                                              {DType::kF8E4M3, "F8_E4M3", 1},
                                              {DType::kF8E5M2, "F8_E5M2", 1},
                                              {DType::kF16, "F16", 2},
                                              {DType::kBF16, "BF16", 2},
                                              {DType::kF32, "F32", 4},
                                              {DType::kF64, "F64", 8}}};

const DTypeEntry& entry(DType dtype) {
  return *std::find_if(kDTypes.begin(), kDTypes.end(), [&](const DTypeEntry& e) { return e.dtype == dtype; });
}

// The safetensors library refuses headers above 100 MB; so do we, before parsing.
constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

}  // namespace

std::optional<DType> parse_dtype(std::string_view name) {
  for (const DTypeEntry& e : kDTypes)
    if (e.name == name) return e.dtype;
  return std::nullopt;
}
std::string_view dtype_name(DType dtype) { return entry(dtype).name; }
std::size_t dtype_size(DType dtype) { return entry(dtype).size; }

std::int64_t TensorInfo::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

std::string TensorInfo::shape_string() const { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::unique_ptr<SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
  const std::string where = path.string();
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ModelError(Kind::kMissingFile, fmt::format("{}: cannot open: {}", where, std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw ModelError(Kind::kMissingFile, fmt::format("{}: cannot stat: {}", where, std::strerror(err)));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    throw ModelError(Kind::kTruncated, fmt::format("{}: truncated: {} bytes, less than the 8-byte header length", where, size));
  }
  std::unique_ptr<SafetensorsFile> file;
  try {
    file.reset(new SafetensorsFile());
    file->path_ = path;
  } catch (...) {
    ::close(fd);
    throw;
  }
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  int map_errno = errno;
  ::close(fd);  // the mapping stays valid
  if (map == MAP_FAILED)
    throw ModelError(Kind::kMissingFile, fmt::format("{}: cannot map {} bytes: {}", where, size, std::strerror(map_errno)));
  file->map_ = map;
  file->map_size_ = size;
  const auto* bytes = static_cast<const std::byte*>(map);

  std::uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | static_cast<std::uint8_t>(bytes[i]);
  if (header_len > kMaxHeaderBytes)
    throw ModelError(Kind::kMalformed, fmt::format("{}: header length {} is over the 100 MB limit (not a safetensors "
                                                   "file?)",
                                                   where, header_len));
  if (8 + header_len > size)
    throw ModelError(Kind::kTruncated, fmt::format("{}: truncated: the header needs {} bytes but the file has {}", where,
                                                   8 + header_len, size));
  const std::uint64_t data_start = 8 + header_len, data_size = size - data_start;
  json header;
  try {
    header = json::parse(std::string_view(reinterpret_cast<const char*>(bytes + 8), header_len));
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: the header is not valid JSON: {}", where, e.what()));
  }
  if (!header.is_object()) throw ModelError(Kind::kMalformed, fmt::format("{}: the header is not a JSON object", where));

  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;  // (begin, end) per tensor, for the overlap check
  for (const auto& [name, value] : header.items()) {
    if (name == "__metadata__") {
      if (!value.is_object())
        throw ModelError(Kind::kMalformed, fmt::format("{}: \"__metadata__\" is not an object", where));
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string())
          throw ModelError(Kind::kMalformed, fmt::format("{}: \"__metadata__\" value of '{}' is not a string", where, k));
        file->metadata_[k] = v.get<std::string>();
      }
      continue;
    }
    auto bad = [&](const std::string& what) {
      return ModelError(Kind::kMalformed, fmt::format("{}: tensor '{}': {}", where, name, what));
    };
    if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") || !value.contains("data_offsets"))
      throw bad("needs \"dtype\", \"shape\" and \"data_offsets\"");
    const json& dt = value["dtype"];
    std::optional<DType> dtype = dt.is_string() ? parse_dtype(dt.get<std::string>()) : std::nullopt;
    if (!dtype) throw bad(fmt::format("unknown dtype {}", dt.dump()));
    TensorInfo t{name, *dtype, {}, {}, &file->path_};
    const json& shape = value["shape"];
    if (!shape.is_array()) throw bad("\"shape\" is not an array");
    std::uint64_t numel = 1;
    for (const json& d : shape) {
      if (!d.is_number_integer() || d.get<std::int64_t>() < 0)
        throw bad(fmt::format("shape {} has an entry that is not a non-negative integer", shape.dump()));
      std::uint64_t dim = d.get<std::uint64_t>();
      if (dim != 0 && numel > (std::uint64_t(1) << 62) / dim) throw bad(fmt::format("shape {} is too large", shape.dump()));
      numel *= dim;
      t.shape.push_back(d.get<std::int64_t>());
    }
    const json& off = value["data_offsets"];
    if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned() ||
        off[0].get<std::uint64_t>() > off[1].get<std::uint64_t>())
      throw bad(fmt::format("\"data_offsets\" {} is not [begin, end] with 0 <= begin <= end", off.dump()));
    std::uint64_t begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
    std::uint64_t need = numel * dtype_size(*dtype);
    if (end - begin != need)
      throw bad(fmt::format("\"data_offsets\" {} span {} bytes, but shape {} of {} needs {}", off.dump(), end - begin,
                            shape.dump(), dtype_name(*dtype), need));
    if (end > data_size)
      throw ModelError(Kind::kTruncated,
                       fmt::format("{}: truncated: tensor '{}' ends at data byte {} but the file holds only {} bytes of "
                                   "data ({} in all)",
                                   where, name, end, data_size, size));
    t.data = std::span<const std::byte>(bytes + data_start + begin, end - begin);
    spans.emplace_back(begin, end);
    file->tensors_.push_back(std::move(t));
  }
  // Overlap check over the tensors sorted by start (empty tensors overlap nothing).
  std::vector<std::size_t> order(spans.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return spans[a] < spans[b]; });
  std::uint64_t covered = 0;
  const TensorInfo* last = nullptr;
  for (std::size_t i : order) {
    if (spans[i].first == spans[i].second) continue;
    if (last && spans[i].first < covered)
      throw ModelError(Kind::kMalformed, fmt::format("{}: tensors '{}' and '{}' overlap in the data", where, last->name,
                                                     file->tensors_[i].name));
    covered = spans[i].second;
    last = &file->tensors_[i];
  }
  for (std::size_t i = 0; i < file->tensors_.size(); ++i) file->by_name_.emplace(file->tensors_[i].name, i);
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, map_size_);
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace qwen3
