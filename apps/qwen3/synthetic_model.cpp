// synthetic_model.cpp: the generator of synthetic_model.h and the folder writer.
#include "synthetic_model.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <thread>

#include "errors.h"
#include "model_weights.h"
#include "safetensors_writer.h"

namespace qwen3 {

std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a64(std::string_view bytes) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001B3ull;
  }
  return h;
}

std::uint16_t float_to_bf16(float value) {
  std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // quiet NaN
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<std::uint16_t>(bits >> 16);
}

float bf16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

void fill_synthetic_bf16(std::uint64_t seed, std::string_view name, std::span<const std::int64_t> shape,
                         std::uint64_t first, std::span<std::uint16_t> out) {
  const std::uint64_t base = splitmix64(fnv1a64(name) ^ splitmix64(seed));
  const bool norm = shape.size() == 1;
  const float scale = norm ? 1.0f / 16 : std::sqrt(3.0f / static_cast<float>(shape.back()));
  const float offset = norm ? 1.0f : 0.0f;
  for (std::size_t k = 0; k < out.size(); ++k) {
    float u = static_cast<float>(splitmix64(base + first + k) >> 40) * 0x1p-23f - 1.0f;
    out[k] = float_to_bf16(offset + u * scale);
  }
}

void write_synthetic_model(const std::filesystem::path& dir, const ModelConfig& config, std::uint64_t seed,
                           unsigned threads) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("{}: cannot create the folder: {}", dir.string(), ec.message()));
  {
    std::ofstream out(dir / "config.json", std::ios::binary);
    out << model_config_to_json(config);
    if (!out) throw Error(fmt::format("{}: cannot write", (dir / "config.json").string()));
  }
  std::vector<TensorSpec> specs;
  for (const ExpectedTensor& e : expected_tensors(config)) specs.push_back({e.name, DType::kBF16, e.shape});
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());

  auto fill = [&](std::size_t i, std::uint64_t offset, std::span<std::byte> chunk) {
    const std::size_t n = chunk.size() / 2;
    std::vector<std::uint16_t> values(n);
    const std::size_t per_thread = std::max<std::size_t>(n / threads + 1, 1 << 16);
    auto part = [&](std::size_t begin) {
      std::size_t end = std::min(n, begin + per_thread);
      fill_synthetic_bf16(seed, specs[i].name, specs[i].shape, offset / 2 + begin,
                          std::span(values).subspan(begin, end - begin));
    };
    std::vector<std::thread> workers;
    try {
      for (std::size_t begin = per_thread; begin < n; begin += per_thread) workers.emplace_back(part, begin);
    } catch (...) {  // no more threads: this one does the rest
      for (std::size_t begin = per_thread * (workers.size() + 1); begin < n; begin += per_thread) part(begin);
    }
    part(0);
    for (std::thread& w : workers) w.join();
    // safetensors data is little-endian, as is every machine this runs on (x86-64, aarch64).
    static_assert(std::endian::native == std::endian::little);
    std::memcpy(chunk.data(), values.data(), chunk.size());
  };
  write_safetensors(dir / "model.safetensors", specs, fill);
}

}  // namespace qwen3
