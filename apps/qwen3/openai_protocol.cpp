// openai_protocol.cpp: request parsing and response shapes of openai_protocol.h.
#include "openai_protocol.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <utility>

namespace qwen3::openai {

using nlohmann::json;

namespace {

constexpr std::size_t kMaxStopStrings = 16;

[[noreturn]] void reject(std::optional<std::string> param, std::string message) {
  ApiError error;
  error.message = std::move(message);
  error.param = std::move(param);
  throw RequestError(std::move(error));
}

// How a value is named in a message: short scalars as written, the rest by their type.
std::string shown(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    default: {
      std::string text = to_body(v);
      return text.size() <= 40 ? text : text.substr(0, 37) + "...";
    }
  }
}

json parse_object(std::string_view body) {
  json value;
  try {
    value = json::parse(body);
  } catch (const json::exception& e) {
    reject(std::nullopt, fmt::format("the request body is not valid JSON: {}", e.what()));
  }
  if (!value.is_object())
    reject(std::nullopt, fmt::format("the request body must be a JSON object, got {}", shown(value)));
  return value;
}

// The field, or nullptr when it is absent or null.
const json* field(const json& object, const char* name) {
  auto it = object.find(name);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::int64_t> integer_field(const json& o, const char* name, std::int64_t lo, std::int64_t hi,
                                          const char* expected) {
  const json* v = field(o, name);
  if (!v) return std::nullopt;
  // nlohmann keeps integers >= 0 as unsigned: compare those as unsigned first.
  const bool fits =
      v->is_number_unsigned() ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(hi) : v->is_number_integer();
  if (fits && v->get<std::int64_t>() >= lo && v->get<std::int64_t>() <= hi) return v->get<std::int64_t>();
  reject(name, fmt::format("{} must be {}, got {}", name, expected, shown(*v)));
}

std::optional<double> number_field(const json& o, const char* name, bool (*ok)(double), const char* expected) {
  const json* v = field(o, name);
  if (!v) return std::nullopt;
  if (v->is_number() && std::isfinite(v->get<double>()) && ok(v->get<double>())) return v->get<double>();
  reject(name, fmt::format("{} must be {}, got {}", name, expected, shown(*v)));
}

std::optional<bool> bool_field(const json& o, const char* name, const std::string& path) {
  const json* v = field(o, name);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) reject(path, fmt::format("{} must be true or false, got {}", path, shown(*v)));
  return v->get<bool>();
}

std::string model_field(const json& o) {
  const json* v = field(o, "model");
  if (!v) return "";
  if (!v->is_string()) reject("model", fmt::format("model must be a string, got {}", shown(*v)));
  return v->get<std::string>();
}

std::vector<std::string> stop_field(const json& o) {
  const json* v = field(o, "stop");
  if (!v) return {};
  const char* expected = "stop must be a non-empty string or an array of at most 16 non-empty strings";
  if (v->is_string()) {
    if (v->get_ref<const std::string&>().empty()) reject("stop", fmt::format("{}, got \"\"", expected));
    return {v->get<std::string>()};
  }
  if (!v->is_array() || v->size() > kMaxStopStrings)
    reject("stop", fmt::format("{}, got {}{}", expected, shown(*v),
                               v->is_array() ? fmt::format(" of {} elements", v->size()) : ""));
  std::vector<std::string> stops;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& s = (*v)[i];
    if (!s.is_string() || s.get_ref<const std::string&>().empty())
      reject(fmt::format("stop[{}]", i), fmt::format("stop[{}] must be a non-empty string, got {}", i, shown(s)));
    stops.push_back(s.get<std::string>());
  }
  return stops;
}

GenerationRequest generation_fields(const json& o) {
  // A budget past any context limit (at most 2^30 positions) is as good as any larger one; the
  // bound keeps sums with the prompt's length from overflowing.
  constexpr std::int64_t kMaxTokens = std::numeric_limits<std::int32_t>::max();
  GenerationRequest g;
  g.max_tokens = integer_field(o, "max_tokens", 1, kMaxTokens, "an integer from 1 to 2147483647");
  if (auto n = integer_field(o, "max_completion_tokens", 1, kMaxTokens, "an integer from 1 to 2147483647"))
    g.max_tokens = n;
  g.temperature = number_field(
      o, "temperature", [](double x) { return x >= 0; }, "a number >= 0");
  g.top_p = number_field(
      o, "top_p", [](double x) { return x > 0 && x <= 1; }, "a number in (0, 1]");
  g.top_k = integer_field(o, "top_k", -1, 64, "an integer in [-1, 64] (0 and -1: no limit)");
  if (g.top_k == -1) g.top_k = 0;
  if (const json* seed = field(o, "seed")) {
    if (!seed->is_number_integer()) reject("seed", fmt::format("seed must be an integer, got {}", shown(*seed)));
    g.seed =
        seed->is_number_unsigned() ? seed->get<std::uint64_t>() : static_cast<std::uint64_t>(seed->get<std::int64_t>());
  }
  integer_field(o, "n", 1, 1, "1 (one choice per request)");
  g.stop = stop_field(o);
  g.stream = bool_field(o, "stream", "stream").value_or(false);
  if (const json* options = field(o, "stream_options")) {
    if (!options->is_object())
      reject("stream_options", fmt::format("stream_options must be an object, got {}", shown(*options)));
    g.include_usage = bool_field(*options, "include_usage", "stream_options.include_usage").value_or(false);
  }
  return g;
}

// A message's content: a string, or text parts joined by newlines; null only for an assistant.
std::string content_field(const json& m, const std::string& path, bool assistant) {
  const json* v = field(m, "content");
  if (!v) {
    if (assistant) return "";
    reject(path + ".content", fmt::format("{}.content must be a string or an array of text parts, got {}", path,
                                          m.contains("content") ? "null" : "nothing"));
  }
  if (v->is_string()) return v->get<std::string>();
  if (!v->is_array())
    reject(path + ".content",
           fmt::format("{}.content must be a string or an array of text parts, got {}", path, shown(*v)));
  std::string text;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& part = (*v)[i];
    const std::string at = fmt::format("{}.content[{}]", path, i);
    if (!part.is_object())
      reject(at, fmt::format("{} must be an object {{\"type\": \"text\", \"text\": ...}}, got {}", at, shown(part)));
    const json* type = field(part, "type");
    if (!type || *type != "text")
      reject(at + ".type", fmt::format("{}.type must be \"text\" (this model reads text only), got {}", at,
                                       type ? shown(*type) : "nothing"));
    const json* t = field(part, "text");
    if (!t || !t->is_string())
      reject(at + ".text", fmt::format("{}.text must be a string, got {}", at, t ? shown(*t) : "nothing"));
    if (i > 0) text += '\n';
    text += t->get_ref<const std::string&>();
  }
  return text;
}

std::vector<ChatMessage> messages_field(const json& o) {
  const json* v = field(o, "messages");
  if (!v || !v->is_array() || v->empty())
    reject("messages", fmt::format("messages must be a non-empty array of messages, got {}",
                                   v ? (v->is_array() ? "an empty array" : shown(*v)) : "nothing"));
  std::vector<ChatMessage> messages;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const json& m = (*v)[i];
    const std::string path = fmt::format("messages[{}]", i);
    if (!m.is_object()) reject(path, fmt::format("{} must be an object with role and content, got {}", path, shown(m)));
    const json* role = field(m, "role");
    static constexpr const char* kRoles = "\"system\", \"developer\", \"user\" or \"assistant\"";
    if (!role || !role->is_string())
      reject(path + ".role",
             fmt::format("{}.role must be one of {}, got {}", path, kRoles, role ? shown(*role) : "nothing"));
    std::string name = role->get<std::string>();
    if (name == "developer") name = "system";
    if (name != "system" && name != "user" && name != "assistant")
      reject(path + ".role",
             fmt::format("{}.role must be one of {} (tools are not supported), got {}", path, kRoles, shown(*role)));
    const bool assistant = name == "assistant";
    if (const json* calls = field(m, "tool_calls"); calls && !(calls->is_array() && calls->empty()))
      reject(path + ".tool_calls", fmt::format("{}.tool_calls: tool calls are not supported", path));
    ChatMessage message{name, content_field(m, path, assistant), std::nullopt};
    if (const json* r = field(m, "reasoning_content")) {
      if (!assistant || !r->is_string())
        reject(path + ".reasoning_content",
               fmt::format("{}.reasoning_content must be a string, in an assistant message only", path));
      message.reasoning_content = r->get<std::string>();
    }
    messages.push_back(std::move(message));
  }
  return messages;
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json finish_json(std::optional<FinishReason> finish) { return finish ? json(to_string(*finish)) : json(nullptr); }

json head(const ResponseHeader& h, std::string_view object) {
  return {{"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}};
}

}  // namespace

json to_json(const ApiError& e) {
  return {{"error",
           {{"message", e.message},
            {"type", e.type},
            {"param", e.param ? json(*e.param) : json(nullptr)},
            {"code", e.code ? json(*e.code) : json(nullptr)}}}};
}

RequestError::RequestError(ApiError error) : Error(error.message), error_(std::move(error)) {}

ChatCompletionRequest parse_chat_completion_request(std::string_view body) {
  const json o = parse_object(body);
  ChatCompletionRequest r;
  r.model = model_field(o);
  r.messages = messages_field(o);
  if (const json* tools = field(o, "tools"); tools && !(tools->is_array() && tools->empty()))
    reject("tools", "tools are not supported by this server");
  if (const json* kwargs = field(o, "chat_template_kwargs")) {
    if (!kwargs->is_object())
      reject("chat_template_kwargs", fmt::format("chat_template_kwargs must be an object, got {}", shown(*kwargs)));
    r.enable_thinking = bool_field(*kwargs, "enable_thinking", "chat_template_kwargs.enable_thinking");
  }
  if (auto thinking = bool_field(o, "enable_thinking", "enable_thinking")) r.enable_thinking = thinking;
  r.generation = generation_fields(o);
  return r;
}

CompletionRequest parse_completion_request(std::string_view body) {
  const json o = parse_object(body);
  CompletionRequest r;
  r.model = model_field(o);
  const json* p = field(o, "prompt");
  if (p && p->is_array() && p->size() == 1 && (*p)[0].is_string()) p = &(*p)[0];
  if (!p || !p->is_string() || p->get_ref<const std::string&>().empty())
    reject("prompt", fmt::format("prompt must be a non-empty string (or an array of one; token ids are not "
                                 "supported), got {}",
                                 p ? shown(*p) : "nothing"));
  r.prompt = p->get<std::string>();
  r.generation = generation_fields(o);
  return r;
}

std::string_view to_string(FinishReason reason) { return reason == FinishReason::kStop ? "stop" : "length"; }

json chat_completion(const ResponseHeader& h, std::string_view text, FinishReason finish, const Usage& usage) {
  json r = head(h, "chat.completion");
  r["choices"] = json::array({{{"index", 0},
                               {"message", {{"role", "assistant"}, {"content", text}}},
                               {"logprobs", nullptr},
                               {"finish_reason", to_string(finish)}}});
  r["usage"] = usage_json(usage);
  return r;
}

json text_completion(const ResponseHeader& h, std::string_view text, FinishReason finish, const Usage& usage) {
  json r = head(h, "text_completion");
  r["choices"] =
      json::array({{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", to_string(finish)}}});
  r["usage"] = usage_json(usage);
  return r;
}

json chat_completion_chunk(const ResponseHeader& h, std::optional<std::string_view> role, std::string_view text,
                           std::optional<FinishReason> finish) {
  json delta = json::object();
  if (role) delta["role"] = *role;
  if (!text.empty() || !finish) delta["content"] = text;
  json r = head(h, "chat.completion.chunk");
  r["choices"] =
      json::array({{{"index", 0}, {"delta", delta}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish)}}});
  return r;
}

json text_completion_chunk(const ResponseHeader& h, std::string_view text, std::optional<FinishReason> finish) {
  json r = head(h, "text_completion");
  r["choices"] =
      json::array({{{"index", 0}, {"text", text}, {"logprobs", nullptr}, {"finish_reason", finish_json(finish)}}});
  return r;
}

json usage_chunk(const ResponseHeader& h, std::string_view object, const Usage& usage) {
  json r = head(h, object);
  r["choices"] = json::array();
  r["usage"] = usage_json(usage);
  return r;
}

json model_list(std::string_view model, std::int64_t created) {
  return {{"object", "list"},
          {"data", json::array({{{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "tessera"}}})}};
}

std::string to_body(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse_event(const json& value) { return "data: " + to_body(value) + "\n\n"; }

}  // namespace qwen3::openai
