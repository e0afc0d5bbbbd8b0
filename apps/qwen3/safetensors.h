// safetensors.h: one .safetensors file, memory-mapped read-only, its tensors found by name.
//
// Format: an 8-byte little-endian header length N, N bytes of JSON, then the data. The JSON maps
// each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets from the start of
// the data, C order, little-endian) and may hold a "__metadata__" map of strings. open() checks
// everything it can without reading the data: a header that fits the file and parses, known
// dtypes, non-negative shapes, offsets whose span is exactly shape x element size, tensors that do
// not overlap, and data inside the file. Failures are ModelError naming the file and the tensor:
// kTruncated when the file ends early, kMalformed otherwise, kMissingFile when it cannot be
// opened. The mapping lives as long as the SafetensorsFile; TensorInfo::data points into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace qwen3 {

enum class DType { kBool, kU8, kI8, kI16, kU16, kI32, kU32, kI64, kU64, kF8E4M3, kF8E5M2, kF16, kBF16, kF32, kF64 };

std::optional<DType> parse_dtype(std::string_view name);  // the safetensors spelling: "BF16", "F32", ...
std::string_view dtype_name(DType dtype);
std::size_t dtype_size(DType dtype);

struct TensorInfo {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> data;
  const std::filesystem::path* file;  // the file it is in (owned by its SafetensorsFile)

  std::int64_t numel() const;
  std::string shape_string() const;  // "[151936, 1024]"
};

class SafetensorsFile {
 public:
  static std::unique_ptr<SafetensorsFile> open(const std::filesystem::path& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::filesystem::path& path() const { return path_; }
  const TensorInfo* find(std::string_view name) const;
  const std::vector<TensorInfo>& tensors() const { return tensors_; }  // in header order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  std::filesystem::path path_;
  void* map_ = nullptr;
  std::size_t map_size_ = 0;
  std::vector<TensorInfo> tensors_;
  std::unordered_map<std::string_view, std::size_t> by_name_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace qwen3
