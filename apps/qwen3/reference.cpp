// reference.cpp: the host forward pass and sampling rule of reference.h.
#include "reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "attention_reference.h"
#include "errors.h"
#include "model_weights.h"
#include "rope_table.h"
#include "synthetic_model.h"

namespace qwen3 {

namespace {

std::vector<float> read_all(const WeightSource& source, const std::string& name, std::vector<std::int64_t> shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  std::vector<std::uint16_t> bits(n);
  source.read(name, shape, 0, bits);
  std::vector<float> out(n);
  for (std::int64_t i = 0; i < n; ++i) out[i] = bf16_to_float(bits[i]);
  return out;
}

float round_bf16(double v) { return bf16_to_float(float_to_bf16(static_cast<float>(v))); }

// y = W v for W [rows, cols] row-major, accumulated in double.
std::vector<float> product(const std::vector<float>& w, std::int64_t rows, std::int64_t cols,
                           const std::vector<float>& v) {
  std::vector<float> y(rows);
  for (std::int64_t i = 0; i < rows; ++i) {
    double acc = 0;
    for (std::int64_t j = 0; j < cols; ++j) acc += static_cast<double>(w[i * cols + j]) * v[j];
    y[i] = static_cast<float>(acc);
  }
  return y;
}

// x * rsqrt(mean(x^2) + eps) * g over x[begin, begin + n).
std::vector<double> rmsnorm(const float* x, std::int64_t n, const std::vector<float>& g, double eps) {
  double ss = 0;
  for (std::int64_t j = 0; j < n; ++j) ss += static_cast<double>(x[j]) * x[j];
  const double inv = 1 / std::sqrt(ss / static_cast<double>(n) + eps);
  std::vector<double> y(n);
  for (std::int64_t j = 0; j < n; ++j) y[j] = x[j] * inv * g[j];
  return y;
}

std::vector<float> to_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }

}  // namespace

ReferenceModel::ReferenceModel(const ModelConfig& c, const WeightSource& source, std::int64_t context,
                               ReferenceNumerics numerics)
    : config_(c), context_(context), numerics_(numerics) {
  const std::int64_t h = c.hidden_size, q = c.q_width(), kv = c.kv_width(), ff = c.intermediate_size;
  embed_ = read_all(source, "model.embed_tokens.weight", {c.vocab_size, h});
  final_norm_ = read_all(source, "model.norm.weight", {h});
  if (!c.tie_word_embeddings) lm_head_ = read_all(source, "lm_head.weight", {c.vocab_size, h});
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    layers_.push_back(Layer{
        read_all(source, p + "input_layernorm.weight", {h}), read_all(source, p + "self_attn.q_proj.weight", {q, h}),
        read_all(source, p + "self_attn.k_proj.weight", {kv, h}),
        read_all(source, p + "self_attn.v_proj.weight", {kv, h}),
        read_all(source, p + "self_attn.o_proj.weight", {h, q}),
        read_all(source, p + "self_attn.q_norm.weight", {c.head_dim}),
        read_all(source, p + "self_attn.k_norm.weight", {c.head_dim}),
        read_all(source, p + "post_attention_layernorm.weight", {h}),
        read_all(source, p + "mlp.gate_proj.weight", {ff, h}), read_all(source, p + "mlp.up_proj.weight", {ff, h}),
        read_all(source, p + "mlp.down_proj.weight", {h, ff})});
    k_cache_.emplace_back(kv * context, 0.0f);
    v_cache_.emplace_back(kv * context, 0.0f);
  }
  RopeTable rope = make_rope_table(c.rope_theta, c.head_dim, context);
  cos_ = std::move(rope.cos);
  sin_ = std::move(rope.sin);
}

std::vector<float> ReferenceModel::step(std::int32_t token, std::int64_t position) {
  const ModelConfig& c = config_;
  const std::int64_t h = c.hidden_size, d = c.head_dim, half = d / 2, n_kv = c.num_key_value_heads;
  const std::int64_t group = c.gqa_group(), q_heads = c.num_attention_heads, ff = c.intermediate_size;
  if (token < 0 || token >= c.vocab_size) throw Error(fmt::format("reference: token {} out of range", token));
  if (position < 0 || position >= context_) throw Error(fmt::format("reference: position {} out of range", position));
  const double eps = c.rms_norm_eps;
  const double scale = 1 / std::sqrt(static_cast<double>(d));
  // A GEMM operand, the QKV and gate outputs, and the residual stream: rounded to bf16 in the
  // prefill's numerics.
  const bool prefill = numerics_ == ReferenceNumerics::kPrefill;
  auto operand = [&](std::vector<float> v) {
    if (prefill)
      for (float& e : v) e = round_bf16(e);
    return v;
  };
  auto stream = [&](double v) { return prefill ? round_bf16(v) : static_cast<float>(v); };

  std::vector<float> x(embed_.begin() + token * h, embed_.begin() + (token + 1) * h);
  // rope(rmsnorm(head) * g) of the head at `at`, in double.
  auto norm_rope = [&](const float* head, const std::vector<float>& g) {
    std::vector<double> y = rmsnorm(head, d, g, eps), out(d);
    for (std::int64_t i = 0; i < half; ++i) {
      const double cs = cos_[position * half + i], sn = sin_[position * half + i];
      out[i] = y[i] * cs - y[i + half] * sn;
      out[i + half] = y[i + half] * cs + y[i] * sn;
    }
    return out;
  };
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const Layer& w = layers_[l];
    const std::vector<float> n = operand(to_float(rmsnorm(x.data(), h, w.input_norm, eps)));
    const std::vector<float> q = operand(product(w.q, q_heads * d, h, n)), kk = operand(product(w.k, n_kv * d, h, n)),
                             v = operand(product(w.v, n_kv * d, h, n));
    std::vector<float>& kc = k_cache_[l];
    std::vector<float>& vc = v_cache_[l];
    for (std::int64_t kh = 0; kh < n_kv; ++kh) {
      const std::vector<double> kr = norm_rope(kk.data() + kh * d, w.k_norm);
      for (std::int64_t i = 0; i < d; ++i) {
        kc[(kh * context_ + position) * d + i] = round_bf16(kr[i]);
        vc[(kh * context_ + position) * d + i] = round_bf16(v[kh * d + i]);
      }
    }
    std::vector<float> attn(q_heads * d);
    for (std::int64_t qh = 0; qh < q_heads; ++qh) {
      const std::int64_t kh = qh / group;
      const std::vector<double> qr = norm_rope(q.data() + qh * d, w.q_norm);
      std::vector<double> qb(d);
      for (std::int64_t i = 0; i < d; ++i) qb[i] = round_bf16(qr[i]);
      const AttentionReference a = attention_reference(
          [&](std::int64_t i) { return qb[i]; },
          [&](std::int64_t t, std::int64_t i) { return double(kc[(kh * context_ + t) * d + i]); },
          [&](std::int64_t t, std::int64_t i) { return double(vc[(kh * context_ + t) * d + i]); }, position + 1, d,
          scale);
      for (std::int64_t i = 0; i < d; ++i) attn[qh * d + i] = static_cast<float>(a.out[i]);
    }
    const std::vector<float> o = product(w.o, h, q_heads * d, operand(attn));
    for (std::int64_t j = 0; j < h; ++j) x[j] = stream(static_cast<double>(x[j]) + o[j]);
    const std::vector<float> n2 = operand(to_float(rmsnorm(x.data(), h, w.post_norm, eps)));
    const std::vector<float> gate = operand(product(w.gate, ff, h, n2)), up = product(w.up, ff, h, n2);
    std::vector<float> m(ff);
    for (std::int64_t j = 0; j < ff; ++j) {
      const double g = gate[j];
      m[j] = static_cast<float>(g / (1 + std::exp(-g)) * up[j]);
    }
    const std::vector<float> down = product(w.down, h, ff, operand(m));
    for (std::int64_t j = 0; j < h; ++j) x[j] = stream(static_cast<double>(x[j]) + down[j]);
  }
  const std::vector<float> n = to_float(rmsnorm(x.data(), h, final_norm_, eps));
  return product(lm_head_.empty() ? embed_ : lm_head_, c.vocab_size, h, n);
}

std::int64_t argmax_first(std::span<const float> values) {
  return std::max_element(values.begin(), values.end()) - values.begin();
}

std::int64_t sample_rank(std::span<const double> sorted_values, double inv_temperature, std::int64_t top_k,
                         double top_p, double u) {
  const std::int64_t k = static_cast<std::int64_t>(sorted_values.size());
  std::vector<double> p(k, 0.0);
  for (std::int64_t i = 0; i < k && i < top_k; ++i)
    p[i] = std::exp((sorted_values[i] - sorted_values[0]) * inv_temperature);
  const double total = std::accumulate(p.begin(), p.end(), 0.0);
  std::vector<double> kept(k, 0.0);
  double before = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    if (before < top_p * total) kept[i] = p[i];
    before += p[i];
  }
  const double kept_total = std::accumulate(kept.begin(), kept.end(), 0.0);
  double cumulative = 0;
  std::int64_t last = 0;
  for (std::int64_t i = 0; i < k; ++i) {
    if (kept[i] <= 0) continue;
    cumulative += kept[i];
    last = i;
    if (cumulative > u * kept_total) return i;
  }
  return last;
}

}  // namespace qwen3
