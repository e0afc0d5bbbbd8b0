// synthetic_model.h: random Qwen3 weights, reproducible from a seed, and a writer of whole model
// folders with them (weights cannot be downloaded here; see model_presets.h for the shapes).
//
// Element i of tensor `name` is a pure function of (seed, name, i), so the same weights can be
// made on the GPU without files, in any order:
//   key  = fnv1a64(name)                        (FNV-1a, 64-bit, over the name's bytes)
//   base = splitmix64(key ^ splitmix64(seed))
//   u    = (splitmix64(base + i) >> 40) * 2^-23 - 1        uniform in [-1, 1), 24 bits
//   value = 1 + u / 16              for 1-D tensors (the RMSNorm weights: near 1)
//         = u * sqrt(3 / in)        for 2-D [out, in] tensors (standard deviation 1/sqrt(in), so
//                                   activations keep their scale; the embedding's "in" is hidden)
// then rounded to bf16 (to nearest, ties to even). splitmix64(x) is Steele et al.'s mixer:
// z = x + 0x9E3779B97F4A7C15; z = (z ^ z>>30) * 0xBF58476D1CE4E5B9; z = (z ^ z>>27) *
// 0x94D049BB133111EB; z ^ z>>31.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string_view>
#include <vector>

#include "model_config.h"

namespace qwen3 {

std::uint64_t splitmix64(std::uint64_t x);
std::uint64_t fnv1a64(std::string_view bytes);
std::uint16_t float_to_bf16(float value);
float bf16_to_float(std::uint16_t bits);

// Elements [first, first + out.size()) of the tensor `name` of the given shape.
void fill_synthetic_bf16(std::uint64_t seed, std::string_view name, std::span<const std::int64_t> shape,
                         std::uint64_t first, std::span<std::uint16_t> out);

// Writes DIR/config.json and DIR/model.safetensors (bf16, the tensors of expected_tensors(config)
// in that order), creating DIR. Uses up to `threads` threads to generate (0: all cores).
void write_synthetic_model(const std::filesystem::path& dir, const ModelConfig& config, std::uint64_t seed,
                           unsigned threads = 0);

}  // namespace qwen3
