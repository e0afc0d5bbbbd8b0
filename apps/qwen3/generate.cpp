// generate.cpp: the generation loop of generate.h.
#include "generate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "errors.h"

namespace qwen3 {

double GenerationResult::prefill_tokens_per_second() const {
  return prefill_seconds > 0 ? static_cast<double>(prompt_tokens - cached_prompt_tokens) / prefill_seconds : 0;
}

double GenerationResult::decode_tokens_per_second() const {
  return decode_seconds > 0 && tokens.size() > 1 ? static_cast<double>(tokens.size() - 1) / decode_seconds : 0;
}

std::vector<std::int32_t> default_stop_tokens(const ModelConfig& config, const Tokenizer* tokenizer) {
  std::vector<std::int32_t> stop = config.eos_token_ids;
  if (tokenizer)
    for (const char* name : {"<|im_end|>", "<|endoftext|>"})
      if (auto id = tokenizer->token_to_id(name)) stop.push_back(*id);
  std::sort(stop.begin(), stop.end());
  stop.erase(std::unique(stop.begin(), stop.end()), stop.end());
  return stop;
}

void check_fits_context(std::int64_t prompt_tokens, std::int64_t max_new_tokens, std::int64_t context_limit) {
  if (prompt_tokens > context_limit || max_new_tokens > context_limit - prompt_tokens)
    throw ContextLimitError(
        fmt::format("the prompt ({} tokens) and up to {} new tokens need {} positions, more than "
                    "the context limit of {}; shorten the prompt, lower the number of new "
                    "tokens or raise the context limit",
                    prompt_tokens, max_new_tokens, prompt_tokens + max_new_tokens, context_limit));
}

std::int64_t reusable_prefix(std::span<const std::int32_t> prompt, std::span<const std::int32_t> cached) {
  const std::size_t most = std::min(prompt.size() > 0 ? prompt.size() - 1 : 0, cached.size());
  const auto diverge = std::mismatch(prompt.begin(), prompt.begin() + static_cast<std::ptrdiff_t>(most), cached.begin());
  return diverge.first - prompt.begin();
}

GenerationResult generate(Model& model, Sampler& sampler, std::span<const std::int32_t> prompt,
                          const GenerateOptions& options, const std::function<void(std::int32_t)>& on_token) {
  using Clock = std::chrono::steady_clock;
  if (prompt.empty()) throw Error("generate: the prompt has no tokens");
  if (options.max_new_tokens < 1)
    throw Error(fmt::format("max_new_tokens {} must be at least 1", options.max_new_tokens));
  const auto prompt_size = static_cast<std::int64_t>(prompt.size());
  check_fits_context(prompt_size, options.max_new_tokens, model.context_limit());
  GenerationResult result;
  result.prompt_tokens = prompt_size;
  auto stops = [&](std::int32_t t) {
    return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), t) != options.stop_tokens.end();
  };
  const std::int64_t cached = options.reuse_cache ? reusable_prefix(prompt, model.cached_tokens()) : 0;
  result.cached_prompt_tokens = cached;
  const Clock::time_point start = Clock::now();
  std::int32_t token = sampler.sample(model.prefill(prompt.subspan(static_cast<std::size_t>(cached)), cached));
  const Clock::time_point first = Clock::now();
  result.prefill_seconds = std::chrono::duration<double>(first - start).count();
  for (std::int64_t position = prompt_size;; ++position) {
    result.tokens.push_back(token);
    if (on_token) on_token(token);
    if (stops(token)) {
      result.stop = GenerationResult::Stop::kStopToken;
      break;
    }
    if (options.stop_requested && options.stop_requested()) {
      result.stop = GenerationResult::Stop::kRequested;
      break;
    }
    if (static_cast<std::int64_t>(result.tokens.size()) == options.max_new_tokens) break;
    token = sampler.sample(model.decode_step(token, position));
  }
  result.decode_seconds = std::chrono::duration<double>(Clock::now() - first).count();
  return result;
}

}  // namespace qwen3
