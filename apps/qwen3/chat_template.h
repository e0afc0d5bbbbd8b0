// chat_template.h: Qwen3's chat template (ChatML), written out in C++ instead of run as Jinja.
//
// render_chat produces exactly what tokenizer_config.json's chat_template renders (checked against
// transformers/jinja2 by the golden test) for conversations of system, user and assistant
// messages:
//   <|im_start|>{role}\n{content}<|im_end|>\n          per system (first) or user message
//   <|im_start|>assistant\n{content}<|im_end|>\n        per assistant message
//   <|im_start|>assistant\n                            the generation prompt, followed by
//   <think>\n\n</think>\n\n                            when thinking is disabled
// with the template's handling of reasoning: an assistant message's "<think>...</think>" part (or
// its reasoning_content) is dropped for turns before the last user query and kept, as
// "<think>\n{reasoning}\n</think>\n\n{answer}", for turns after it that are last or have
// reasoning. A user message wrapped in <tool_response>...</tool_response> does not count as a
// query, as in the template.
//
// Not supported (TokenizerError): the "tool" role, tool definitions and tool calls. An empty
// conversation renders as the generation prompt alone (the Jinja template fails on it).
#pragma once

#include <optional>
#include <span>
#include <string>

namespace qwen3 {

struct ChatMessage {
  std::string role;  // "system", "user" or "assistant"
  std::string content;
  std::optional<std::string> reasoning_content;  // assistant only: the thinking, given separately
};

struct ChatOptions {
  bool add_generation_prompt = true;
  // false appends the empty think block that switches Qwen3's thinking off; true (the template's
  // default when enable_thinking is not given) lets the model think.
  bool enable_thinking = true;
};

std::string render_chat(std::span<const ChatMessage> messages, const ChatOptions& options = {});

}  // namespace qwen3
