// test_chat_template.cpp: the ChatML strings render_chat produces for the engine's cases, written
// out from tokenizer_config.json's template (the golden test checks many more against Jinja).
#include <catch2/catch.hpp>
#include <vector>

#include "chat_template.h"
#include "errors.h"

using qwen3::ChatMessage;
using qwen3::ChatOptions;
using qwen3::render_chat;

TEST_CASE("chat: a user prompt with and without thinking", "[chat]") {
  std::vector<ChatMessage> m{{"user", "Hello!", std::nullopt}};
  CHECK(render_chat(m) == "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n");
  CHECK(render_chat(m, ChatOptions{true, false}) ==
        "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
  CHECK(render_chat(m, ChatOptions{false, false}) == "<|im_start|>user\nHello!<|im_end|>\n");
}

TEST_CASE("chat: system prompt and history", "[chat]") {
  std::vector<ChatMessage> m{{"system", "Be terse.", std::nullopt},
                             {"user", "2+2?", std::nullopt},
                             {"assistant", "<think>\nadd\n</think>\n\n4", std::nullopt},
                             {"user", "3+3?", std::nullopt}};
  // The earlier assistant turn loses its thinking.
  CHECK(render_chat(m) ==
        "<|im_start|>system\nBe terse.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n"
        "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n");
  // A final assistant turn keeps it, and gets an empty think block when it has none.
  std::vector<ChatMessage> done{{"user", "2+2?", std::nullopt}, {"assistant", "4", std::nullopt}};
  CHECK(render_chat(done, ChatOptions{false, true}) ==
        "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n4<|im_end|>\n");
  done[1].reasoning_content = "\nsimple\n";
  CHECK(render_chat(done, ChatOptions{false, true}) ==
        "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\nsimple\n</think>\n\n4<|im_end|>\n");
  // A system message that is not first is rendered in place.
  std::vector<ChatMessage> late{{"user", "a", std::nullopt}, {"system", "s", std::nullopt}};
  CHECK(render_chat(late, ChatOptions{false, true}) ==
        "<|im_start|>user\na<|im_end|>\n<|im_start|>system\ns<|im_end|>\n");
}

TEST_CASE("chat: unsupported roles are errors", "[chat]") {
  std::vector<ChatMessage> m{{"user", "a", std::nullopt}, {"tool", "{}", std::nullopt}};
  CHECK_THROWS_AS(render_chat(m), qwen3::TokenizerError);
  CHECK_THROWS_WITH(render_chat(m), Catch::Contains("chat message 1 has role 'tool'"));
  CHECK(render_chat({}) == "<|im_start|>assistant\n");
}
