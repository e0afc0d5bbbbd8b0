// hf_goldens.cpp: reading goldens.json and its logits, and the comparison of hf_goldens.h.
#include "hf_goldens.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "errors.h"
#include "generate.h"
#include "safetensors.h"
#include "sampler.h"

namespace qwen3 {

using nlohmann::json;
using Kind = ModelError::Kind;

namespace {

std::vector<std::int32_t> token_list(const json& j, const char* key, std::int64_t vocab, const std::string& source) {
  if (!j.contains(key) || !j[key].is_array() || j[key].empty())
    throw ModelError(Kind::kMalformed, fmt::format("{}: \"{}\" must be a non-empty list of token ids", source, key));
  std::vector<std::int32_t> ids;
  for (const json& v : j[key]) {
    if (!v.is_number_integer() || v.get<std::int64_t>() < 0 || v.get<std::int64_t>() >= vocab)
      throw ModelError(Kind::kMalformed,
                       fmt::format("{}: \"{}\" holds {}, not a token id in [0, {})", source, key, v.dump(), vocab));
    ids.push_back(v.get<std::int32_t>());
  }
  return ids;
}

// The F32 tensor `name` of `file`, checked to have `shape` ([teacher tokens, vocab_size]).
std::vector<float> f32_matrix(const SafetensorsFile& file, const char* name, const std::vector<std::int64_t>& shape) {
  const TensorInfo* t = file.find(name);
  if (!t) throw ModelError(Kind::kMissingTensor, fmt::format("{}: no tensor \"{}\"", file.path().string(), name));
  if (t->dtype != DType::kF32)
    throw ModelError(Kind::kWrongDtype, fmt::format("{}: tensor \"{}\" is {}, expected F32", file.path().string(), name,
                                                    dtype_name(t->dtype)));
  if (t->shape != shape)
    throw ModelError(Kind::kWrongShape,
                     fmt::format("{}: tensor \"{}\" has shape {}, expected [{}, {}] (teacher tokens, vocab_size)",
                                 file.path().string(), name, t->shape_string(), shape[0], shape[1]));
  std::vector<float> values(static_cast<std::size_t>(shape[0] * shape[1]));
  std::memcpy(values.data(), t->data.data(), values.size() * sizeof(float));  // little-endian, as the host
  return values;
}

// max |got - want|, infinite when `got` holds a NaN (std::max would skip it).
double max_difference(std::span<const float> got, std::span<const float> want) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(static_cast<double>(got[i]) - want[i]);
    e = std::isnan(d) ? INFINITY : std::max(e, d);
  }
  return e;
}

// The largest and second largest value, and the first index of the largest (as torch.argmax).
struct Top2 {
  float first = -INFINITY, second = -INFINITY;
  std::int32_t index = 0;
};

Top2 top2(std::span<const float> v) {
  Top2 t;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (v[i] > t.first) {
      t.second = t.first;
      t.first = v[i];
      t.index = static_cast<std::int32_t>(i);
    } else if (v[i] > t.second) {
      t.second = v[i];
    }
  }
  return t;
}

}  // namespace

std::span<const float> HfGoldens::logits_at(std::size_t position) const {
  return std::span(logits).subspan(position * static_cast<std::size_t>(vocab_size), vocab_size);
}

std::span<const float> HfGoldens::logits_bf16_qkv_at(std::size_t position) const {
  return std::span(logits_bf16_qkv).subspan(position * static_cast<std::size_t>(vocab_size), vocab_size);
}

std::int64_t HfGoldens::context_needed() const {
  return static_cast<std::int64_t>(std::max(teacher_tokens.size(), prompt.size() + greedy_tokens.size()));
}

HfGoldens load_hf_goldens(const std::filesystem::path& file) {
  const std::string source = file.string();
  std::ifstream in(file, std::ios::binary);
  if (!in) throw ModelError(Kind::kMissingFile, fmt::format("{}: cannot open the goldens file", source));
  std::ostringstream text;
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: not valid JSON: {}", source, e.what()));
  }
  if (!j.is_object()) throw ModelError(Kind::kMalformed, fmt::format("{}: not a JSON object", source));

  HfGoldens g;
  try {
    g.name = j.value("name", file.parent_path().filename().string());
    g.note = j.value("note", std::string()) + "; transformers " + j.value("transformers", std::string("?")) +
             ", torch " + j.value("torch", std::string("?"));
    if (!j.contains("vocab_size") || !j["vocab_size"].is_number_integer() || j["vocab_size"].get<std::int64_t>() <= 0)
      throw ModelError(Kind::kMalformed, fmt::format("{}: \"vocab_size\" must be a positive integer", source));
    g.vocab_size = j["vocab_size"].get<std::int64_t>();
    g.teacher_tokens = token_list(j, "teacher_tokens", g.vocab_size, source);
    g.prompt = token_list(j, "prompt", g.vocab_size, source);
    g.greedy_tokens = token_list(j, "greedy_tokens", g.vocab_size, source);
    if (!j.contains("greedy_gaps") || !j["greedy_gaps"].is_array() || j["greedy_gaps"].size() != g.greedy_tokens.size())
      throw ModelError(Kind::kMalformed, fmt::format("{}: \"greedy_gaps\" must be a list of {} numbers (one per "
                                                     "greedy token)",
                                                     source, g.greedy_tokens.size()));
    g.greedy_gaps = j["greedy_gaps"].get<std::vector<double>>();

    const std::filesystem::path logits_file = file.parent_path() / j.value("logits_file", "logits.safetensors");
    const auto st = SafetensorsFile::open(logits_file);
    const std::vector<std::int64_t> shape = {static_cast<std::int64_t>(g.teacher_tokens.size()), g.vocab_size};
    g.logits = f32_matrix(*st, "logits", shape);
    g.logits_bf16_qkv = f32_matrix(*st, "logits_bf16_qkv", shape);
  } catch (const json::exception& e) {
    throw ModelError(Kind::kMalformed, fmt::format("{}: a field has the wrong type: {}", source, e.what()));
  }
  return g;
}

bool HfComparison::position_ok(const HfPositionError& e) const {
  return e.error <= tolerances.logits * e.scale && e.error_bf16_qkv <= tolerances.logits_bf16_qkv * e.scale &&
         (!argmax_checked(e) || e.want_argmax == e.got_argmax);
}

double HfComparison::worst_error() const {
  double w = 0;
  for (const HfPositionError& e : positions) w = std::max(w, e.error / e.scale);
  return w;
}

double HfComparison::worst_error_bf16_qkv() const {
  double w = 0;
  for (const HfPositionError& e : positions) w = std::max(w, e.error_bf16_qkv / e.scale);
  return w;
}

std::size_t HfComparison::argmax_checked() const {
  return static_cast<std::size_t>(
      std::count_if(positions.begin(), positions.end(), [&](const HfPositionError& e) { return argmax_checked(e); }));
}

std::size_t HfComparison::argmax_agreed() const {
  return static_cast<std::size_t>(std::count_if(positions.begin(), positions.end(), [&](const HfPositionError& e) {
    return argmax_checked(e) && e.want_argmax == e.got_argmax;
  }));
}

bool HfComparison::logits_ok() const {
  return !positions.empty() &&
         std::all_of(positions.begin(), positions.end(), [&](const HfPositionError& e) { return position_ok(e); });
}

HfComparison compare_with_hf(Model& model, const HfGoldens& goldens, const HfTolerances& tolerances) {
  if (model.config().vocab_size != goldens.vocab_size)
    throw Error(fmt::format("goldens {}: vocab_size {} differs from the model's {}", goldens.name, goldens.vocab_size,
                            model.config().vocab_size));
  HfComparison result;
  result.tolerances = tolerances;
  for (std::size_t p = 0; p < goldens.teacher_tokens.size(); ++p) {
    const std::vector<float> got =
        model.decode_step(goldens.teacher_tokens[p], static_cast<std::int64_t>(p)).to_vector();
    const std::span<const float> want = goldens.logits_at(p);
    HfPositionError e;
    e.error = max_difference(got, want);
    e.error_bf16_qkv = max_difference(got, goldens.logits_bf16_qkv_at(p));
    for (float v : want) e.scale = std::max(e.scale, std::abs(static_cast<double>(v)));
    const Top2 w = top2(want), g = top2(got);
    e.gap = static_cast<double>(w.first) - w.second;
    e.want_argmax = w.index;
    e.got_argmax = g.index;
    result.positions.push_back(e);
  }

  Sampler sampler(goldens.vocab_size, SamplingParams{}, model.target());
  GenerateOptions options;
  options.max_new_tokens = static_cast<std::int64_t>(goldens.greedy_tokens.size());
  result.greedy_tokens = generate(model, sampler, goldens.prompt, options).tokens;
  result.greedy_expected = goldens.greedy_tokens.size();
  while (result.greedy_matched < std::min(result.greedy_tokens.size(), goldens.greedy_tokens.size()) &&
         result.greedy_tokens[result.greedy_matched] == goldens.greedy_tokens[result.greedy_matched])
    ++result.greedy_matched;
  return result;
}

}  // namespace qwen3
