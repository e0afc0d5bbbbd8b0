// device_weights.cpp: DeviceWeights::load, through host staging and a copy kernel (see the header).
#include "device_weights.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <thread>

#include "kernels/weight_copy.h"

namespace qwen3 {

using tessera::bfloat16;
using tessera::Tensor;

namespace {

constexpr std::int64_t kStagingElements = std::int64_t{4} << 20;  // 8 MB of bf16 per staging buffer

// Copies source tensors into row ranges of device tensors, staging buffer by staging buffer.
class Uploader {
 public:
  Uploader(const WeightSource& source, tessera::Target target, unsigned threads)
      : source_(source), threads_(threads ? threads : std::max(1u, std::thread::hardware_concurrency())) {
    options_.target = target;
    options_.stream = tessera::Stream::create();
  }

  // Source tensor `name` of shape [rows, cols] into rows [row0, row0 + rows) of dst [*, cols].
  void copy(Tensor<bfloat16, 2>& dst, std::int64_t row0, const std::string& name, std::int64_t rows) {
    const std::int64_t cols = dst.shape(1);
    const std::int64_t shape[] = {rows, cols};
    copy_rows(dst, row0, name, shape, rows, cols);
  }
  // A 1-D source tensor into the 1-D dst of its size.
  void copy(Tensor<bfloat16, 1>& dst, const std::string& name) {
    const std::int64_t n = dst.shape(0);
    const std::int64_t shape[] = {n};
    auto as_matrix = dst.slice(0, 0, n).reshape<2>({1, n});
    copy_rows(as_matrix, 0, name, shape, 1, n);
  }
  void finish() { options_.stream.synchronize(); }

 private:
  void copy_rows(Tensor<bfloat16, 2>& dst, std::int64_t row0, const std::string& name,
                 std::span<const std::int64_t> shape, std::int64_t rows, std::int64_t cols) {
    auto& buffers = staging_[cols];
    if (buffers.empty()) {
      const std::int64_t staging_rows = std::max<std::int64_t>(1, kStagingElements / cols);
      for (int i = 0; i < 2; ++i) buffers.emplace_back(std::array<std::int64_t, 2>{staging_rows, cols});
    }
    const std::int64_t per_buffer = buffers[0].shape(0);
    for (std::int64_t r = 0; r < rows; r += per_buffer) {
      const std::int64_t n = std::min(per_buffer, rows - r);
      Tensor<bfloat16, 2>& buffer = buffers[next_ = 1 - next_];
      fill(buffer.data(), name, shape, static_cast<std::uint64_t>(r * cols), n * cols);  // waits for its last copy
      auto from = buffer.slice(0, 0, n);
      auto to = dst.slice(0, row0 + r, row0 + r + n);
      std::move(kernels::weight_copy<kernels::kCopyRows, kernels::kCopyCols>().launch_async(
                    options_, to.partition<kernels::kCopyRows, kernels::kCopyCols>(), from))
          .detach();
    }
  }

  // Elements [first, first + count) of the source tensor into out, on up to threads_ threads.
  void fill(bfloat16* out, const std::string& name, std::span<const std::int64_t> shape, std::uint64_t first,
            std::int64_t count) const {
    constexpr std::int64_t kMinPerThread = 1 << 16;
    const std::int64_t parts = std::clamp<std::int64_t>(count / kMinPerThread, 1, threads_);
    auto part = [&](std::int64_t i) {
      const std::int64_t begin = count * i / parts, end = count * (i + 1) / parts;
      std::vector<std::uint16_t> bits(end - begin);
      source_.read(name, shape, first + begin, bits);
      std::memcpy(out + begin, bits.data(), bits.size() * sizeof(std::uint16_t));
    };
    std::vector<std::jthread> workers;
    std::exception_ptr failure;
    std::mutex failure_mutex;
    for (std::int64_t i = 1; i < parts; ++i)
      workers.emplace_back([&, i] {
        try {
          part(i);
        } catch (...) {
          std::lock_guard lock(failure_mutex);
          failure = std::current_exception();
        }
      });
    part(0);
    workers.clear();  // joins
    if (failure) std::rethrow_exception(failure);
  }

  const WeightSource& source_;
  unsigned threads_;
  tessera::LaunchOptions options_;
  std::map<std::int64_t, std::vector<Tensor<bfloat16, 2>>> staging_;  // by column count: two buffers
  int next_ = 0;
};

Tensor<bfloat16, 1> vector_of(std::int64_t n) { return Tensor<bfloat16, 1>({n}); }
Tensor<bfloat16, 2> matrix_of(std::int64_t rows, std::int64_t cols) { return Tensor<bfloat16, 2>({rows, cols}); }

}  // namespace

std::int64_t DeviceWeights::bytes() const {
  std::int64_t n = embed.numel() + final_norm.numel() + (lm_head ? lm_head->numel() : 0);
  for (const LayerWeights& l : layers)
    n += l.input_norm.numel() + l.q_norm.numel() + l.k_norm.numel() + l.post_norm.numel() + l.qkv.numel() +
         l.o.numel() + l.gate.numel() + l.up.numel() + l.down.numel();
  return 2 * n;
}

DeviceWeights DeviceWeights::load(const ModelConfig& c, const WeightSource& source, tessera::Target target,
                                  unsigned threads) {
  const std::int64_t h = c.hidden_size, q = c.q_width(), kv = c.kv_width(), ff = c.intermediate_size;
  DeviceWeights w{matrix_of(c.vocab_size, h), {}, vector_of(h), std::nullopt};
  if (!c.tie_word_embeddings) w.lm_head.emplace(matrix_of(c.vocab_size, h));
  Uploader up(source, target, threads);
  up.copy(w.embed, 0, "model.embed_tokens.weight", c.vocab_size);
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = fmt::format("model.layers.{}.", i);
    LayerWeights& l = w.layers.emplace_back(LayerWeights{vector_of(h), vector_of(c.head_dim), vector_of(c.head_dim),
                                                         vector_of(h), matrix_of(q + 2 * kv, h), matrix_of(h, q),
                                                         matrix_of(ff, h), matrix_of(ff, h), matrix_of(h, ff)});
    up.copy(l.input_norm, p + "input_layernorm.weight");
    up.copy(l.qkv, 0, p + "self_attn.q_proj.weight", q);
    up.copy(l.qkv, q, p + "self_attn.k_proj.weight", kv);
    up.copy(l.qkv, q + kv, p + "self_attn.v_proj.weight", kv);
    up.copy(l.o, 0, p + "self_attn.o_proj.weight", h);
    up.copy(l.q_norm, p + "self_attn.q_norm.weight");
    up.copy(l.k_norm, p + "self_attn.k_norm.weight");
    up.copy(l.post_norm, p + "post_attention_layernorm.weight");
    up.copy(l.gate, 0, p + "mlp.gate_proj.weight", ff);
    up.copy(l.up, 0, p + "mlp.up_proj.weight", ff);
    up.copy(l.down, 0, p + "mlp.down_proj.weight", h);
  }
  up.copy(w.final_norm, "model.norm.weight");
  if (w.lm_head) up.copy(*w.lm_head, 0, "lm_head.weight", c.vocab_size);
  up.finish();
  // The weights never change again. Frozen, a decode product may start copying its weight tiles
  // while the kernel before it ends (EngineOptions::stream_stages).
  for (const LayerWeights& l : w.layers)
    for (const auto* t : {&l.input_norm, &l.q_norm, &l.k_norm, &l.post_norm}) t->freeze();
  for (const LayerWeights& l : w.layers)
    for (const auto* t : {&l.qkv, &l.o, &l.gate, &l.up, &l.down}) t->freeze();
  w.embed.freeze();
  w.final_norm.freeze();
  if (w.lm_head) w.lm_head->freeze();
  return w;
}

}  // namespace qwen3
