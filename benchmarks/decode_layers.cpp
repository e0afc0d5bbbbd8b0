// decode_layers.cpp: where a Qwen3-4B decode step's time goes inside its CUDA graph.
//
// The engine replays each token's kernels as one graph with programmatic launches, so a kernel's
// cost there is not its time alone (ncu serializes kernels and loses the overlap of one kernel's
// end with the next one's start). This benchmark captures the decode layers of Qwen3-4B (36
// layers, the engine's kernels, tile sizes and thread counts, apps/qwen3/model.cpp's
// launch_step) as one graph, and again with groups of kernels left out, and prints each graph's
// time per replay: the difference is what the left-out kernels cost in the graph (where two
// kernels share no tensor the graph has no edge between them, so a kernel whose output nothing
// reads any more runs beside the others). Some variants run the attention as one kernel:
// decode_attention_fused at chunks of 64, 128 or 256 positions (the engine's opt-in form), and
// decode_attention_short over the cache's first 128 or 256 positions (the engine's default up to
// 128; at a --seq past its positions only its time means anything). One variant also
// changes, before each replay, what the engine changes per token (the position, kv_append's K/V
// slots), so that the host's patching of the graph's nodes shows. The results are not a forward
// pass (weights hold no values that matter, left-out kernels leave their outputs stale); only the
// times are. Weights of four layers rotate, so no product reads its weight from L2. Printed per
// variant: the median time of a replay (host submission included) and of its submission alone.
//
//   bench_decode_layers [--seq N] [--layers L] [--replays R] [--split-k S] [--early-steps N]
//                       [--residual-threads T] [--early-o-proj N] [--norm-occupancy N]
//                       [--residual-occupancy N] [--attention-threads T] [--o-proj-stages S]
//                       [--split-prefetch 0|1] [--only TEXT]
//
// --split-k S runs o_proj and down with each program's K loop shared by the S CTAs of a cluster
// (CompilerHints::split_k, the engine's --split-k); --early-steps N has every kernel load its
// K loop's first N steps of weight tiles before it waits for the kernel before it
// (CompilerHints::early_frozen_steps, the engine's --early-weight-steps); --residual-threads T runs
// o_proj and down at T threads per program (CompilerHints::threads; default 0, the compiler's);
// --early-o-proj N gives o_proj (which follows the attention kernels) its own early steps;
// --norm-occupancy N and --residual-occupancy N cap the registers of the products with a folded
// RMSNorm (QKV, gate/up) and of o_proj and down so that N programs fit per SM
// (CompilerHints::occupancy; the norm products' default is the engine's 4B choice, 0 the compiler's);
// --attention-threads T runs the one-kernel attention forms at T threads per program;
// --o-proj-stages S runs o_proj at 8 x 512 and 256 threads with its weight tiles through bulk rings
// of S slots (the first S - 1 copied before it waits for the attention); --split-prefetch 1 runs
// the split-KV attention loading each chunk during the one before (the engine's
// --split-prefetch); --only TEXT
// runs only the variants whose names contain TEXT.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "common.h"
#include "kernels/attention.h"
#include "kernels/attention_fused.h"
#include "kernels/attention_short.h"
#include "kernels/decode_step.h"
#include "kernels/matvec.h"
#include "kernels/qk_norm_rope.h"

using namespace tessera;
namespace k = qwen3::kernels;

namespace {

// Qwen3-4B.
constexpr std::int64_t kHidden = 2560, kHeads = 32, kKv = 8, kGroup = 4, kHead = 128, kInter = 9728;
constexpr std::int64_t kQWidth = kHeads * kHead, kKvWidth = kKv * kHead, kQkv = kQWidth + 2 * kKvWidth;
constexpr std::int64_t kContext = 16640, kMaxSplits = 32, kWeightSets = 4;  // the engine's 16k runs' context
constexpr std::int64_t kCachePositions = k::attention_cache_positions(kContext, k::kAttentionChunk, kMaxSplits);

// The launch choices the command line sets (see the file comment); 0: the compiler's.
struct Choices {
  int split_k = 0;             // o_proj's and down's CompilerHints::split_k
  int early = 0;               // every launch's CompilerHints::early_frozen_steps
  int residual_threads = 0;    // o_proj's and down's CompilerHints::threads
  int early_o_proj = -1;       // o_proj's early_frozen_steps (-1: `early`)
  int norm_occupancy = k::kNormProductOccupancy;  // QKV's and gate/up's CompilerHints::occupancy, the engine's
  int residual_occupancy = 0;  // o_proj's and down's
  int attention_threads = 0;   // the one-kernel attention forms' CompilerHints::threads
  int o_proj_stages = 0;       // o_proj's bulk ring slots (8 x 512 tiles, 256 threads); 0: registers
  bool split_prefetch = false;  // decode_attention_split<GP, CH, true>
};

struct LayerWeights {
  Tensor<bfloat16, 2> qkv{{kQkv, kHidden}}, o{{kHidden, kQWidth}}, gate{{kInter, kHidden}}, up{{kInter, kHidden}},
      down{{kHidden, kInter}};
  Tensor<bfloat16, 1> input_norm{{kHidden}}, post_norm{{kHidden}}, q_norm{{kHead}}, k_norm{{kHead}};
  // New tensors hold zeros (made on the device, no host copy); frozen, as the engine's weights.
  LayerWeights() {
    for (auto* t : {&qkv, &o, &gate, &up, &down}) t->freeze();
    for (auto* t : {&input_norm, &post_norm, &q_norm, &k_norm}) t->freeze();
  }
};

// Which kernels of a layer a graph launches.
struct Variant {
  const char* name;
  bool qkv, qk_norm, split, combine, o_proj, gate_up, down;
  bool updates = false;  // before each replay, what the engine changes per token (update() below)
  int fused = 0;         // decode_attention_fused<GP, fused> in place of qk_norm, split and combine
  int short_chunk = 0;   // decode_attention_short<GP, short_chunk> in their place
};

struct Step {
  std::vector<LayerWeights> weights;
  // The caches of all layers, [layers * kv heads, positions, 128], and a view per layer; the
  // step's new K and V rows, [layers * kv heads, 128]; as the engine's.
  Tensor<bfloat16, 3> k_all, v_all;
  std::vector<Tensor<bfloat16, 3>> k_cache, v_cache;
  std::vector<Tensor<bfloat16, 4>> k_halves, v_halves;  // the same, [kv heads, positions, 2, 64]
  Tensor<bfloat16, 2> k_new, v_new;
  Tensor<float, 2> rope_cos{{kContext, 64}}, rope_sin{{kContext, 64}}, cos_now{{1, 64}}, sin_now{{1, 64}};
  Tensor<std::int32_t, 2> length{{1, 1}};
  Tensor<float, 1> x{{kHidden}}, qkv{{kQkv}}, attn{{kQWidth}}, mlp{{kInter}};
  Tensor<float, 4> q_in = qkv.slice(0, 0, kQWidth).reshape<4>({kKv, kGroup, 2, 64});
  Tensor<float, 3> k_in = qkv.slice(0, kQWidth, kQWidth + kKvWidth).reshape<3>({kKv, 2, 64});
  Tensor<float, 2> v_in = qkv.slice(0, kQWidth + kKvWidth, kQkv).reshape<2>({kKv, kHead});
  Tensor<bfloat16, 3> q{{kKv, kGroup, kHead}};
  Tensor<float, 3> part_o{{kKv, kMaxSplits, kGroup*kHead}}, part_m{{kKv, kMaxSplits, kGroup}},
      part_l{{kKv, kMaxSplits, kGroup}};
  Tensor<float, 2> attn_by_kv_head = attn.slice(0, 0, kQWidth).reshape<2>({kKv, kGroup* kHead});
  Scalar<std::int32_t> position, chunks_per_split, chunks;
  LaunchOptions options;

  explicit Step(std::int64_t layers)
      : weights(kWeightSets),
        k_all({layers * kKv, kCachePositions, kHead}),
        v_all({layers * kKv, kCachePositions, kHead}),
        k_new({layers * kKv, kHead}),
        v_new({layers * kKv, kHead}) {
    for (std::int64_t l = 0; l < layers; ++l) {
      k_cache.push_back(k_all.slice(0, l * kKv, (l + 1) * kKv));
      v_cache.push_back(v_all.slice(0, l * kKv, (l + 1) * kKv));
      k_halves.push_back(k_all.slice(0, l * kKv, (l + 1) * kKv).reshape<4>({kKv, kCachePositions, 2, 64}));
      v_halves.push_back(v_all.slice(0, l * kKv, (l + 1) * kKv).reshape<4>({kKv, kCachePositions, 2, 64}));
    }
    options.stream = Stream::create();
  }

  std::size_t launches = 0;  // launches since launch() began: the next one's graph index
  std::size_t append = 0;    // the graph's launch index of kv_append

  Choices choices;

  template <class Kernel, class... Args>
  void run(int threads, const Kernel& kernel, Args&&... args) {
    run_hinted(CompilerHints{.threads = threads}, kernel, std::forward<Args>(args)...);
  }
  template <class Kernel, class... Args>
  void run_hinted(const CompilerHints& hints, const Kernel& kernel, Args&&... args) {
    run_early(choices.early, hints, kernel, std::forward<Args>(args)...);
  }
  template <class Kernel, class... Args>
  void run_early(int early_steps, const CompilerHints& hints, const Kernel& kernel, Args&&... args) {
    LaunchOptions o = options;
    o.hints = hints;
    o.hints.early_frozen_steps = early_steps;
    std::move(kernel.launch_async(o, std::forward<Args>(args)...)).detach();
    ++launches;
  }

  // The engine's launches of one step at `seq` positions, those `v` keeps.
  void launch(const Variant& v, std::int64_t seq) {
    constexpr int R = k::kMatvecRows, BK = k::kMatvecCols, GP = kGroup, CH = k::kAttentionChunk;
    const auto [per_split, splits] = k::attention_splits(seq, CH, kMaxSplits);
    position.set(static_cast<std::int32_t>(seq - 1));
    chunks_per_split.set(static_cast<std::int32_t>(per_split));
    launches = 0;
    auto po = part_o.slice(1, 0, splits), pm = part_m.slice(1, 0, splits), pl = part_l.slice(1, 0, splits);
    const float eps = 1e-6f, scale = 1.0f / std::sqrt(float(kHead));
    run(0, k::step_rows(), cos_now.partition<1, 64>(), sin_now.partition<1, 64>(), length.partition<1, 1>(), rope_cos,
        rope_sin, position);
    for (std::size_t l = 0; l < k_cache.size(); ++l) {
      const LayerWeights& w = weights[l % weights.size()];
      const auto layer = static_cast<std::int64_t>(l);
      auto k_row = k_new.slice(0, layer * kKv, (layer + 1) * kKv),
           v_row = v_new.slice(0, layer * kKv, (layer + 1) * kKv);
      if (v.qkv)
        run_hinted({.occupancy = choices.norm_occupancy, .threads = k::kNormMatvecThreads}, k::rmsnorm_matvec<R, BK>(),
                   qkv.partition<R>(), w.qkv, x, w.input_norm, eps);
      // The layer's staging rows in the [kv heads, 1, 128] slot shape the writers store.
      auto k_slot = k_new.slice(0, layer * kKv, (layer + 1) * kKv).reshape<3>({kKv, 1, kHead});
      auto v_slot = v_new.slice(0, layer * kKv, (layer + 1) * kKv).reshape<3>({kKv, 1, kHead});
      if (v.qk_norm)
        run(0, k::qk_norm_rope_append<GP>(), q.partition<1, GP, 128>(), k_slot.partition<1, 1, 128>(),
            v_slot.partition<1, 1, 128>(), q_in, k_in, v_in, w.q_norm, w.k_norm, cos_now, sin_now, eps);
      auto fused = [&]<int FCH>(std::integral_constant<int, FCH>) {
        chunks.set(static_cast<std::int32_t>((seq + FCH - 1) / FCH));
        run(choices.attention_threads, k::decode_attention_fused<GP, FCH>(), attn_by_kv_head.partition<1, GP * 128>(),
            k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), q_in, k_in, v_in, w.q_norm, w.k_norm, cos_now,
            sin_now, k_cache[l], v_cache[l], length, chunks, eps, scale);
      };
      if (v.fused == 64) fused(std::integral_constant<int, 64>{});
      if (v.fused == 128) fused(std::integral_constant<int, 128>{});
      if (v.fused == 256) fused(std::integral_constant<int, 256>{});
      auto short_attention = [&]<int SCH>(std::integral_constant<int, SCH>) {
        run(choices.attention_threads, k::decode_attention_short<GP, SCH>(), attn_by_kv_head.partition<1, GP * 128>(),
            k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), q_in, k_in, v_in, w.q_norm, w.k_norm, cos_now,
            sin_now, k_halves[l], v_halves[l], length, eps, scale);
      };
      if (v.short_chunk == 128) short_attention(std::integral_constant<int, 128>{});
      if (v.short_chunk == 256) short_attention(std::integral_constant<int, 256>{});
      auto split = [&]<bool P>(std::bool_constant<P>) {
        run(0, k::decode_attention_split<GP, CH, P>(), po.partition<1, 1, GP * 128>(), pm.partition<1, 1, GP>(),
            pl.partition<1, 1, GP>(), q, k_cache[l], v_cache[l], k_row, v_row, length, chunks_per_split, scale);
      };
      if (v.split && choices.split_prefetch)
        split(std::true_type{});
      else if (v.split)
        split(std::false_type{});
      if (v.combine) run(0, k::decode_attention_combine<GP>(), attn_by_kv_head.partition<1, GP * 128>(), po, pm, pl);
      const CompilerHints residual{
          .occupancy = choices.residual_occupancy, .threads = choices.residual_threads, .split_k = choices.split_k};
      const int early_o_proj = choices.early_o_proj >= 0 ? choices.early_o_proj : choices.early;
      if (v.o_proj && choices.o_proj_stages)
        run_early(early_o_proj,
                  {.stream_stages = choices.o_proj_stages, .bulk_streams = true, .threads = k::kStreamThreads},
                  k::matvec_residual<k::kStreamResidualRows, BK>(), x.partition<k::kStreamResidualRows>(), w.o, attn);
      else if (v.o_proj)
        run_early(early_o_proj, residual, k::matvec_residual<R, BK>(), x.partition<R>(), w.o, attn);
      if (v.gate_up)
        run_hinted({.occupancy = choices.norm_occupancy, .threads = k::kSwigluThreads},
                   k::rmsnorm_swiglu<k::kSwigluTileRows, k::kSwigluTileCols>(),
            mlp.partition<k::kSwigluTileRows>(), w.gate, w.up, x, w.post_norm, eps);
      if (v.down) run_hinted(residual, k::matvec_residual<R, BK>(), x.partition<R>(), w.down, mlp);
    }
    append = launches;
    auto k_slot = k_all.slice(1, seq - 1, seq), v_slot = v_all.slice(1, seq - 1, seq);
    run(0, k::kv_append(), k_slot.partition<1, 1, 128>(), v_slot.partition<1, 1, 128>(), k_new, v_new);
  }

  // What the engine changes before each token's replay: the position and kv_append's K/V slots
  // (its parameters 0 and 1). Alternates between two positions with the same splits.
  void update(Graph& g, std::int64_t seq, std::int64_t r) {
    const std::int64_t pos = seq - 1 - (r & 1);
    position.set(static_cast<std::int32_t>(pos));
    auto k_slot = k_all.slice(1, pos, pos + 1), v_slot = v_all.slice(1, pos, pos + 1);
    g.move_view(append, 0, k_slot);
    g.move_view(append, 1, v_slot);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::int64_t seq = 160, layers = 36, replays = 50;
  std::string only;  // run only the variants whose names contain this
  Choices ch;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--seq")
      seq = std::stoll(argv[i + 1]);
    else if (a == "--layers")
      layers = std::stoll(argv[i + 1]);
    else if (a == "--replays")
      replays = std::stoll(argv[i + 1]);
    else if (a == "--split-k")
      ch.split_k = std::stoi(argv[i + 1]);
    else if (a == "--early-steps")
      ch.early = std::stoi(argv[i + 1]);
    else if (a == "--residual-threads")
      ch.residual_threads = std::stoi(argv[i + 1]);
    else if (a == "--early-o-proj")
      ch.early_o_proj = std::stoi(argv[i + 1]);
    else if (a == "--norm-occupancy")
      ch.norm_occupancy = std::stoi(argv[i + 1]);
    else if (a == "--residual-occupancy")
      ch.residual_occupancy = std::stoi(argv[i + 1]);
    else if (a == "--attention-threads")
      ch.attention_threads = std::stoi(argv[i + 1]);
    else if (a == "--split-prefetch")
      ch.split_prefetch = std::stoi(argv[i + 1]) != 0;
    else if (a == "--o-proj-stages")
      ch.o_proj_stages = std::stoi(argv[i + 1]);
    else if (a == "--only")
      only = argv[i + 1];
  }
  if (seq < 2 || seq > kContext) {
    fmt::print(stderr, "bench_decode_layers: --seq must be in [2, {}], got {}\n", kContext, seq);
    return 2;
  }
  if (!bench::have_gpu()) return 0;
  Step step(layers);
  step.choices = ch;
  const Variant variants[] = {
      {"all seven kernels", true, true, true, true, true, true, true},
      {"all, with the engine's changes per token", true, true, true, true, true, true, true, true},
      {"without combine", true, true, true, false, true, true, true},
      {"without split, combine", true, true, false, false, true, true, true},
      {"without qk_norm, split, combine", true, false, false, false, true, true, true},
      {"products only: without QKV too", false, false, false, false, true, true, true},
      {"qk_norm, split, combine only", false, true, true, true, false, false, false},
      {"all, attention fused", true, false, false, false, true, true, true, false, 64},
      {"fused attention only", false, false, false, false, false, false, false, false, 64},
      {"all, attention fused, chunks of 128", true, false, false, false, true, true, true, false, 128},
      {"all, attention fused, chunks of 256", true, false, false, false, true, true, true, false, 256},
      {"all, attention short 128", true, false, false, false, true, true, true, false, 0, 128},
      {"all, attention short 256", true, false, false, false, true, true, true, false, 0, 256},
      {"attention short 128 only", false, false, false, false, false, false, false, false, 0, 128},
      {"attention short 256 only", false, false, false, false, false, false, false, false, 0, 256},
      {"QKV only", true, false, false, false, false, false, false},
      {"o_proj only", false, false, false, false, true, false, false},
      {"gate/up only", false, false, false, false, false, true, false},
      {"down only", false, false, false, false, false, false, true},
  };
  for (const Variant& v : variants) {
    if (std::string(v.name).find(only) == std::string::npos) continue;
    Graph g;
    {
      auto recording = g.capture();
      step.launch(v, seq);
    }
    for (int i = 0; i < 3; ++i) g.replay(step.options);
    std::vector<double> ms, host_ms, update_ms;
    for (std::int64_t r = 0; r < replays; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      if (v.updates) step.update(g, seq, r);
      const auto tu = std::chrono::steady_clock::now();
      auto handle = g.replay_async(step.options);
      const auto t1 = std::chrono::steady_clock::now();
      update_ms.push_back(std::chrono::duration<double, std::milli>(tu - t0).count());
      handle.wait();
      const auto t2 = std::chrono::steady_clock::now();
      ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
      host_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    std::sort(host_ms.begin(), host_ms.end());
    std::sort(update_ms.begin(), update_ms.end());
    const double med = ms[ms.size() / 2];
    fmt::print(
        "{{\"variant\": \"{}\", \"seq\": {}, \"layers\": {}, \"split_k\": {}, \"early_steps\": {}, "
        "\"early_o_proj\": {}, \"residual_threads\": {}, \"norm_occupancy\": {}, \"residual_occupancy\": {}, "
        "\"o_proj_stages\": {}, \"split_prefetch\": {}, "
        "\"kernels\": {}, \"ms\": {:.4f}, \"us_per_layer\": {:.2f}, \"host_submit_ms\": {:.4f}, "
        "\"host_update_ms\": {:.4f}}}\n",
        v.name, seq, layers, ch.split_k, ch.early, ch.early_o_proj, ch.residual_threads, ch.norm_occupancy,
        ch.residual_occupancy, ch.o_proj_stages, ch.split_prefetch, g.size(), med, med * 1000 / double(layers),
        host_ms[host_ms.size() / 2], update_ms[update_ms.size() / 2]);
  }
  return 0;
}
