// generate.h: the generation loop: prompt, then sampled tokens until a stop token, the token
// budget or (before anything runs) the context limit.
//
// generate() runs the prompt through Model::prefill, samples the first new token from its logits,
// then alternates decode steps and sampling. Each token is passed to `on_token` as soon as it is
// chosen (for streaming). A stop token ends the generation and is the last token returned. The
// prompt and the budget must fit the model's context limit -- prompt tokens + max_new_tokens <=
// context_limit() -- or a ContextLimitError says so, naming the three numbers, before any work.
// After each token (and its on_token), options.stop_requested, when set, is asked whether to end
// here: a caller that watches the text (stop strings) or the client (gone) ends the generation
// without another step; the result then says Stop::kRequested.
// With options.reuse_cache, the prompt's longest prefix whose K and V the model's cache already
// holds (Model::cached_tokens: the previous generation's prompt and tokens) is not run again:
// only the rest of the prompt is prefilled, at least its last token (its logits give the first
// new token). A multi-turn chat, whose every request repeats the conversation so far, then
// prefills only the new turn. The cached positions came from the earlier calls' kernels (decode
// steps for generated tokens), so the logits may differ from a fresh prefill's within the
// prefill's tolerance against the decode numerics (tests/test_engine_prefill.cpp).
// Timings: prefill is the prompt's steps plus the first token's sampling (time to first token);
// decode is everything after it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "model.h"
#include "sampler.h"
#include "tokenizer.h"

namespace qwen3 {

struct GenerateOptions {
  std::int64_t max_new_tokens = 128;
  std::vector<std::int32_t> stop_tokens;
  std::function<bool()> stop_requested;  // asked after each token: true ends the generation
  bool reuse_cache = false;              // prefill only past the prefix the cache holds (above)
};

struct GenerationResult {
  enum class Stop { kStopToken, kMaxTokens, kRequested };
  std::vector<std::int32_t> tokens;  // the new tokens, a stop token included
  Stop stop = Stop::kMaxTokens;
  std::int64_t prompt_tokens = 0;
  std::int64_t cached_prompt_tokens = 0;  // of them, taken from the cache (reuse_cache), not prefilled
  double prefill_seconds = 0;             // prompt + first token
  double decode_seconds = 0;   // the tokens after the first

  double prefill_tokens_per_second() const;  // the prefilled tokens (not the cached ones) / prefill_seconds
  double decode_tokens_per_second() const;  // (tokens - 1) / decode_seconds
};

// Throws ContextLimitError unless prompt_tokens + max_new_tokens <= context_limit.
void check_fits_context(std::int64_t prompt_tokens, std::int64_t max_new_tokens, std::int64_t context_limit);

// The model's end-of-sequence ids (config.json's eos_token_id), and <|im_end|> and <|endoftext|>
// when the tokenizer has them (Qwen3's generation config stops on both), without duplicates.
std::vector<std::int32_t> default_stop_tokens(const ModelConfig& config, const Tokenizer* tokenizer);

// The length of the longest common prefix of `prompt` and `cached`, at most prompt.size() - 1.
std::int64_t reusable_prefix(std::span<const std::int32_t> prompt, std::span<const std::int32_t> cached);

GenerationResult generate(Model& model, Sampler& sampler, std::span<const std::int32_t> prompt,
                          const GenerateOptions& options, const std::function<void(std::int32_t)>& on_token = nullptr);

}  // namespace qwen3
