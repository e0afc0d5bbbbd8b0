// chat_template.cpp: render_chat, following the Jinja template's statements in order; each helper
// is the Python string method the template calls.
#include "chat_template.h"

#include <fmt/format.h>

#include <string_view>

#include "errors.h"

namespace qwen3 {
namespace {

std::string_view lstrip_newlines(std::string_view s) {
  while (!s.empty() && s.front() == '\n') s.remove_prefix(1);
  return s;
}

std::string_view rstrip_newlines(std::string_view s) {
  while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  return s;
}

// s.split(sep)[-1] and s.split(sep)[0]
std::string_view after_last(std::string_view s, std::string_view sep) {
  std::size_t at = s.rfind(sep);
  return at == std::string_view::npos ? s : s.substr(at + sep.size());
}
std::string_view before_first(std::string_view s, std::string_view sep) { return s.substr(0, s.find(sep)); }

bool is_tool_response(std::string_view content) {
  return content.starts_with("<tool_response>") && content.ends_with("</tool_response>");
}

}  // namespace

std::string render_chat(std::span<const ChatMessage> messages, const ChatOptions& options) {
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role != "system" && role != "user" && role != "assistant")
      throw TokenizerError(fmt::format("chat message {} has role '{}'; the chat template supports system, user and "
                                       "assistant",
                                       i, role));
  }
  const std::size_t n = messages.size();
  std::string out;
  if (n > 0 && messages[0].role == "system") out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";

  // The last user message that is not a tool response: thinking is shown only after it.
  std::size_t last_query = n - 1;  // n == 0: never compared
  for (std::size_t k = n; k-- > 0;) {
    if (messages[k].role == "user" && !is_tool_response(messages[k].content)) {
      last_query = k;
      break;
    }
  }

  for (std::size_t i = 0; i < n; ++i) {
    const ChatMessage& m = messages[i];
    if (m.role == "user" || (m.role == "system" && i != 0)) {
      out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
    } else if (m.role == "assistant") {
      std::string_view content = m.content;
      std::string_view reasoning;
      if (m.reasoning_content) {
        reasoning = *m.reasoning_content;
      } else if (content.find("</think>") != std::string_view::npos) {
        content = lstrip_newlines(after_last(m.content, "</think>"));
        reasoning = lstrip_newlines(after_last(rstrip_newlines(before_first(m.content, "</think>")), "<think>"));
      }
      out += "<|im_start|>assistant\n";
      if (i > last_query && (i + 1 == n || !reasoning.empty())) {
        out += "<think>\n";
        out += rstrip_newlines(lstrip_newlines(reasoning));
        out += "\n</think>\n\n";
        out += lstrip_newlines(content);
      } else {
        out += content;
      }
      out += "<|im_end|>\n";
    }
  }
  if (options.add_generation_prompt) {
    out += "<|im_start|>assistant\n";
    if (!options.enable_thinking) out += "<think>\n\n</think>\n\n";
  }
  return out;
}

}  // namespace qwen3
