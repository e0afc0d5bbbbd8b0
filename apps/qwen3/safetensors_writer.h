// safetensors_writer.h: writing .safetensors files (the synthetic-model tool and the tests).
//
// The header lists the tensors in the order given, packed back to back from data offset 0, and
// is padded with spaces to a multiple of 8 bytes as Hugging Face's writer does, so the data starts
// 8-byte aligned. The data is produced by a callback in chunks, so that files larger than memory
// can be written. The file is written under a temporary name and renamed into place, so that a
// failed or interrupted write leaves no partial file under the final name. I/O failures are
// Error naming the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "safetensors.h"

namespace qwen3 {

struct TensorSpec {
  std::string name;
  DType dtype;
  std::vector<std::int64_t> shape;

  std::uint64_t bytes() const;
};

// The 8-byte length and the padded JSON header.
std::string safetensors_header(std::span<const TensorSpec> tensors, const std::map<std::string, std::string>& metadata);

// fill(tensor index, byte offset within that tensor, chunk): writes the chunk's bytes. Chunks hold
// whole elements and are at most kWriteChunkBytes.
inline constexpr std::size_t kWriteChunkBytes = std::size_t(64) << 20;
using TensorFill = std::function<void(std::size_t tensor, std::uint64_t offset, std::span<std::byte> chunk)>;

void write_safetensors(const std::filesystem::path& path, std::span<const TensorSpec> tensors, const TensorFill& fill,
                       const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

}  // namespace qwen3
