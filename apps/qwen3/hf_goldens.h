// hf_goldens.h: Hugging Face transformers' outputs for a checkpoint (tools/hf_reference.py), and
// the engine's outputs compared with them.
//
// A goldens file is goldens.json beside the checkpoint: the teacher-forced token ids, the greedy
// prompt and transformers' greedy tokens (with the gap between the two largest logits at each
// step), and the name of a safetensors file beside it holding, as F32 tensors [positions, vocab],
// transformers' logits of every teacher-forced position ("logits"), and the same with q, k (after
// RoPE) and v rounded to bf16 as the engine stores them ("logits_bf16_qkv"). transformers computed
// both in float32 from the bf16 checkpoint. load_hf_goldens() checks the file against itself (ids
// inside the vocabulary, the tensors' dtype and shape); a problem is a ModelError naming the file
// and the field or tensor.
//
// compare_with_hf() runs the teacher-forced tokens through Model::decode_step from position 0 and
// then the greedy generation (generate() with a greedy Sampler: the on-device argmax) on the same
// model, and checks at every position, with s = max |transformers' logits| there:
//   - max |engine - logits|          <= HfTolerances::logits * s          (2^-6)
//   - max |engine - logits_bf16_qkv| <= HfTolerances::logits_bf16_qkv * s (2^-8)
//   - the argmaxes agree where transformers' top-2 gap is clear (more than 2 * 2^-6 s: an error
//     within the first bound cannot swap them there);
// and that every greedy token equals transformers'. The bounds are derived in the README
// ("Correctness against transformers"): the first is the engine's bf16 storage of q, K and V
// (each element rounded by up to 2^-9 of itself) where transformers keeps float32; with that
// storage emulated only rare rounding-boundary cases remain (the bound of test_engine_model.cpp).
// The model needs goldens.context_needed() positions. Engine errors propagate (qwen3::Error,
// tessera::Error).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "model.h"

namespace qwen3 {

struct HfTolerances {
  double logits = 0x1p-6;           // of the largest |logit| of the position
  double logits_bf16_qkv = 0x1p-8;  // likewise, against the bf16-storage logits
};

struct HfGoldens {
  std::string name;  // the config's name in hf_reference.py
  std::string note;  // how transformers computed them (versions, device)
  std::int64_t vocab_size = 0;
  std::vector<std::int32_t> teacher_tokens;
  std::vector<float> logits;           // [teacher_tokens.size(), vocab_size], row-major
  std::vector<float> logits_bf16_qkv;  // likewise
  std::vector<std::int32_t> prompt;
  std::vector<std::int32_t> greedy_tokens;
  std::vector<double> greedy_gaps;  // per greedy step: transformers' largest minus second logit

  std::span<const float> logits_at(std::size_t position) const;
  std::span<const float> logits_bf16_qkv_at(std::size_t position) const;
  std::int64_t context_needed() const;
};

// Reads goldens.json (`file`) and the logits file it names (relative to its folder).
HfGoldens load_hf_goldens(const std::filesystem::path& file);

struct HfPositionError {
  double error = 0;           // max over the vocabulary of |engine - logits| (infinite for a NaN)
  double error_bf16_qkv = 0;  // max |engine - logits_bf16_qkv|
  double scale = 0;           // max |logits|
  double gap = 0;             // transformers' largest logit minus its second
  std::int32_t want_argmax = 0, got_argmax = 0;
};

struct HfComparison {
  HfTolerances tolerances;
  std::vector<HfPositionError> positions;   // one per teacher-forced token
  std::vector<std::int32_t> greedy_tokens;  // the engine's
  std::size_t greedy_matched = 0;           // leading tokens equal to transformers'
  std::size_t greedy_expected = 0;

  bool argmax_checked(const HfPositionError& e) const { return e.gap > 2 * tolerances.logits * e.scale; }
  bool position_ok(const HfPositionError& e) const;
  double worst_error() const;           // max over positions of error / scale
  double worst_error_bf16_qkv() const;  // max over positions of error_bf16_qkv / scale
  std::size_t argmax_checked() const;   // positions with a clear gap
  std::size_t argmax_agreed() const;    // among them, those whose argmaxes agree
  bool logits_ok() const;
  bool greedy_ok() const { return greedy_matched == greedy_expected; }
  bool passed() const { return logits_ok() && greedy_ok(); }
};

HfComparison compare_with_hf(Model& model, const HfGoldens& goldens, const HfTolerances& tolerances = {});

}  // namespace qwen3
