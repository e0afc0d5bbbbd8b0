// attention.cpp: the Qwen3 engine's split-KV decode attention (apps/qwen3/kernels/attention.h)
// against the copy bandwidth measured in the same run.
//
// One decode step's attention for one layer of Qwen3-4B (8 KV heads, 4 query heads per KV head,
// head dim 128, bf16 cache) at several context lengths, the splits chosen as the engine chooses
// them (about 256 (KV head, split) programs, whole chunks per split). Bytes are the K and V of the
// positions read; "ratio" is that over the copy bandwidth. Each variant's split kernel is timed
// alone (the combine is the same for all), and its combined output is compared with a host
// reference in double on sampled heads. "prefetch" cases run decode_attention_split<GP, CH, true>,
// which loads each chunk during the chunk before.
#include <fmt/format.h>

#include <cmath>
#include <vector>

#include "attention_reference.h"
#include "common.h"
#include "kernels/attention.h"

using namespace tessera;
namespace k = qwen3::kernels;

namespace {

constexpr std::int64_t kKv = 8, kGroup = 4, kHead = 128, kContext = 16384 + 64, kPrograms = 256;

struct Inputs {
  Tensor<bfloat16, 3> q{{kKv, kGroup, kHead}}, k{{kKv, kContext, kHead}}, v{{kKv, kContext, kHead}};
  Inputs() {
    auto fill = [](auto& t, std::uint32_t seed) {
      bfloat16* p = t.data();
      const std::int64_t n = t.shape(0) * t.shape(1) * t.shape(2);
      for (std::int64_t i = 0; i < n; ++i) {
        const std::uint32_t h = (static_cast<std::uint32_t>(i) * 2654435761u) ^ seed;
        p[i] = bfloat16(static_cast<float>(static_cast<int>(h >> 20) - 2048) / 1024.0f);
      }
    };
    fill(q, 1);
    fill(k, 2);
    fill(v, 3);
  }
};

// max |out - reference| over KV heads 0 and kKv - 1, all their query heads.
double check(const Tensor<float, 2>& out, const Inputs& in, std::int64_t seq_len, float scale) {
  double worst = 0;
  for (std::int64_t h : {std::int64_t{0}, kKv - 1})
    for (std::int64_t g = 0; g < kGroup; ++g) {
      const qwen3::AttentionReference r = qwen3::attention_reference(
          [&](std::int64_t e) { return double(float(in.q(h, g, e))); },
          [&](std::int64_t t, std::int64_t e) { return double(float(in.k(h, t, e))); },
          [&](std::int64_t t, std::int64_t e) { return double(float(in.v(h, t, e))); }, seq_len, kHead, scale);
      for (std::int64_t e = 0; e < kHead; ++e) worst = std::max(worst, std::abs(out(h, g * kHead + e) - r.out[e]));
    }
  return worst;
}

// decode_attention_split<kGroup, CH, Prefetch> at `seq_len` positions: timed alone, its combined
// output checked.
template <int CH, bool Prefetch = false>
void chunked(Inputs& in, std::int64_t seq_len, double copy_bw) {
  const auto [per_split, splits] =
      k::attention_splits(seq_len, CH, k::max_attention_splits(kPrograms, kKv, kContext, CH));
  Tensor<float, 3> part_o({kKv, splits, kGroup * kHead}), part_m({kKv, splits, kGroup}), part_l({kKv, splits, kGroup});
  Tensor<float, 2> out({kKv, kGroup * kHead});
  // The newest position's K and V rows, as the engine's staging holds them, and the length.
  Tensor<bfloat16, 2> k_new({kKv, kHead}), v_new({kKv, kHead});
  for (std::int64_t h = 0; h < kKv; ++h)
    for (std::int64_t e = 0; e < kHead; ++e) {
      k_new(h, e) = in.k(h, seq_len - 1, e);
      v_new(h, e) = in.v(h, seq_len - 1, e);
    }
  Tensor<std::int32_t, 2> seq({1, 1});
  seq(0, 0) = static_cast<std::int32_t>(seq_len);
  Scalar<std::int32_t> cps;
  cps.set(static_cast<std::int32_t>(per_split));
  const float scale = 1.0f / std::sqrt(float(kHead));
  auto kern = k::decode_attention_split<kGroup, CH, Prefetch>();
  // Each launch takes fresh partitions of the part tensors (the only mutable handles).
  auto launch = [&](auto&& run) {
    return run(kern, part_o.partition<1, 1, kGroup * kHead>(), part_m.partition<1, 1, kGroup>(),
               part_l.partition<1, 1, kGroup>(), in.q, in.k, in.v, k_new, v_new, seq, cps, scale);
  };
  launch([](auto& kern, auto&&... a) { kern.launch(a...); });
  k::decode_attention_combine<kGroup>().launch(out.partition<1, kGroup * kHead>(), part_o, part_m, part_l);
  const double err = check(out, in, seq_len, scale);
  const double ms = bench::median_ms([&] { return launch([](auto& kern, auto&&... a) { return bench::timed(kern, a...); }); });
  const double bytes = 2.0 * kKv * seq_len * kHead * 2;
  const std::string name = fmt::format("chunk {} seq {} splits {}{}", CH, seq_len, splits, Prefetch ? " prefetch" : "");
  bench::report("attention", name, "bf16", bytes, ms, err);
  std::printf("{\"bench\": \"attention\", \"case\": \"%s\", \"ratio_to_copy\": %.3f, \"us\": %.2f}\n", name.c_str(),
              bytes / (ms * 1e-3) / copy_bw, ms * 1e3);
}

}  // namespace

int main() {
  if (!bench::have_gpu()) return 0;
  const double copy_bw = bench::copy_bandwidth("attention");
  Inputs in;
  for (std::int64_t seq_len : {33, 1024, 4096, 16384}) {
    chunked<64>(in, seq_len, copy_bw);
    chunked<64, true>(in, seq_len, copy_bw);
    chunked<32>(in, seq_len, copy_bw);
    chunked<128>(in, seq_len, copy_bw);
  }
  return 0;
}
