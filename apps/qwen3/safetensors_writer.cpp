// safetensors_writer.cpp: header layout and the chunked, rename-into-place write.
#include "safetensors_writer.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "errors.h"

namespace qwen3 {

std::uint64_t TensorSpec::bytes() const {
  std::uint64_t n = dtype_size(dtype);
  for (std::int64_t d : shape) n *= static_cast<std::uint64_t>(d);
  return n;
}

std::string safetensors_header(std::span<const TensorSpec> tensors, const std::map<std::string, std::string>& metadata) {
  // nlohmann's ordered_json keeps the tensors in the order given.
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (!metadata.empty()) j["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const TensorSpec& t : tensors) {
    j[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string text = j.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((static_cast<std::uint64_t>(text.size()) >> (8 * i)) & 0xFF);
  return out + text;
}

void write_safetensors(const std::filesystem::path& path, std::span<const TensorSpec> tensors, const TensorFill& fill,
                       const std::map<std::string, std::string>& metadata) {
  const std::filesystem::path temp = path.string() + ".partial";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(temp.c_str(), "wb"), &std::fclose);
  if (!f) throw Error(fmt::format("{}: cannot create: {}", temp.string(), std::strerror(errno)));
  auto put = [&](const void* data, std::size_t n) {
    if (std::fwrite(data, 1, n, f.get()) != n)
      throw Error(fmt::format("{}: write failed: {}", temp.string(), std::strerror(errno)));
  };
  try {
    std::string header = safetensors_header(tensors, metadata);
    put(header.data(), header.size());
    std::vector<std::byte> buffer;
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      const std::uint64_t total = tensors[i].bytes();
      const std::size_t element = dtype_size(tensors[i].dtype);
      const std::size_t chunk_max = kWriteChunkBytes / element * element;
      for (std::uint64_t offset = 0; offset < total; offset += chunk_max) {
        std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(chunk_max, total - offset));
        buffer.resize(n);
        fill(i, offset, std::span<std::byte>(buffer.data(), n));
        put(buffer.data(), n);
      }
    }
    std::FILE* raw = f.release();
    if (std::fclose(raw) != 0) throw Error(fmt::format("{}: close failed: {}", temp.string(), std::strerror(errno)));
    std::error_code ec;
    std::filesystem::rename(temp, path, ec);
    if (ec) throw Error(fmt::format("{}: cannot rename to {}: {}", temp.string(), path.string(), ec.message()));
  } catch (...) {
    f.reset();
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

}  // namespace qwen3
