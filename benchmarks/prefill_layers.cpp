// prefill_layers.cpp: where a Qwen3-4B prefill layer's time goes, kernel by kernel, and what other
// tile shapes and hints would give.
//
// The engine's prefill (apps/qwen3/model.cpp, launch_prefill_chunk) runs a chunk of T prompt
// tokens through each layer as ten kernels: RMSNorm, the QKV GEMM, q and k/v norm + RoPE, causal
// attention, the o_proj GEMM with the residual, RMSNorm, the gate GEMM, the up GEMM with SwiGLU,
// the down GEMM with the residual. This benchmark launches each of them alone on the shapes of one
// 4B layer at T tokens (default 1024, the prompt of the time to first token, attending
// to a cache of T positions from position 0), the engine's tile sizes first, then other tile
// sizes or CompilerHints, and the engine's earlier forms of kernels it changed ("(before)": f32
// outputs and residual stream, the accurate SwiGLU), and prints one JSON line per case: the
// median time of a launch (each behind an L2 reset, as every benchmark here) and its TFLOP/s
// where it multiplies. The results
// are not checked: the kernels' results are tested in qwen3_engine_tests, and only the times of
// these launches matter here (inputs are hashes in [-1, 1), not a model's activations).
//
//   bench_prefill_layers [--tokens T] [--cases SUBSTRING]   (T a multiple of 16; only the cases whose
//                                                           names contain SUBSTRING)
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <initializer_list>
#include <string>

#include "common.h"
#include "kernels/prefill_attention.h"
#include "kernels/prefill_matmul.h"
#include "kernels/prefill_qk_norm_rope.h"
#include "kernels/prefill_rmsnorm.h"
#include "kernels/prefill_tiles.h"

using namespace tessera;
namespace k = qwen3::kernels;

namespace {

// Qwen3-4B.
constexpr std::int64_t kHidden = 2560, kHeads = 32, kKv = 8, kGroup = kHeads / kKv, kHead = 128, kInter = 9728;
constexpr std::int64_t kQWidth = kHeads * kHead, kKvWidth = kKv * kHead, kQkv = kQWidth + 2 * kKvWidth;

void line(const std::string& name, double ms, double flops) {
  std::printf("{\"bench\": \"prefill_layers\", \"case\": \"%s\", \"ms\": %.4f, \"tflops\": %.1f}\n", name.c_str(), ms,
              flops > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0);
  std::fflush(stdout);
}

std::string only;  // --cases: only the cases whose names contain it

template <class K, class... A>
void time_case(const std::string& name, double flops, const CompilerHints& hints, const K& kernel, A&&... args) {
  if (name.find(only) == std::string::npos) return;
  line(name, bench::median_ms([&] { return bench::timed_hinted(hints, kernel, args...); }, 3, 20), flops);
}

template <class T, int R>
void fill(Tensor<T, R>& t, int seed) {
  std::int64_t n = 1;
  for (int d = 0; d < R; ++d) n *= t.shape(d);
  Tensor<T, 2> flat = t.slice(0, 0, t.shape(0)).template reshape<2>({n / 1024, 1024});  // a view
  bench::fill_device(flat, seed);
}

// The up GEMM with SwiGLU as the engine wrote it before 2026-12-06: silu through the accurate exp
// and division, the gate tile read as it is stored (f32 then, bf16 in the engine now).
template <int BM, int BN, int BK>
auto swiglu_accurate() {
  return kernel(k::tiled_name("bench_prefill_swiglu_accurate", BM, BN, BK), [](auto out, auto a, auto b, auto gate) {
    auto up = k::matmul_detail::product_tile<BM, BN, BK>(a, b);
    auto g = cast<DType::f32>(load<BM, BN>(gate, program_id<0>(), program_id<1>()));
    return out.store(cast<DType::bf16>(g / (c<1.0> + exp(-g)) * up));
  });
}

}  // namespace

int main(int argc, char** argv) {
  if (!bench::have_gpu()) return 0;
  std::int64_t t = 1024;
  for (int i = 1; i + 1 < argc; i += 2)
    if (std::strcmp(argv[i], "--tokens") == 0)
      t = std::stoll(argv[i + 1]);
    else if (std::strcmp(argv[i], "--cases") == 0)
      only = argv[i + 1];
  if (t <= 0 || t % 16 != 0) {
    std::fprintf(stderr, "bench_prefill_layers: --tokens must be a positive multiple of 16\n");
    return 2;
  }
  constexpr int BM = k::kPrefillGemmRows, BN = k::kPrefillGemmCols, BK = k::kPrefillGemmDepth;
  constexpr int NR = k::kPrefillNormRows, NC = k::kPrefillNormCols, BT = k::kPrefillRopeRows;
  constexpr int BQ = k::kPrefillQueryTile, BKV = k::kPrefillKeyTile;
  Tensor<float, 2> x_f32({t, kHidden}), x_mid_f32({t, kHidden});  // the earlier f32 residual stream
  Tensor<bfloat16, 2> gate({t, kInter}), qkv({t, kQkv}), x({t, kHidden}), x_mid({t, kHidden});
  Tensor<float, 2> gate_f32({t, kInter}), qkv_f32({t, kQkv});  // the earlier form's f32 outputs
  Tensor<bfloat16, 2> normed({t, kHidden}), attn({t, kQWidth}), mlp({t, kInter});
  Tensor<bfloat16, 3> q({kHeads, t, kHead}), k_cache({kKv, t, kHead}), v_cache({kKv, t, kHead});
  Tensor<float, 2> cos_rows({t, 64}), sin_rows({t, 64});
  Tensor<bfloat16, 2> w_qkv({kQkv, kHidden}), w_o({kHidden, kQWidth}), w_gate({kInter, kHidden}),
      w_up({kInter, kHidden}), w_down({kHidden, kInter});
  Tensor<bfloat16, 1> norm_w({kHidden}), head_norm({kHead});
  int seed = 1;
  for (auto* f : {&x_f32, &x_mid_f32, &qkv_f32, &gate_f32, &cos_rows, &sin_rows}) fill(*f, seed++);
  for (auto* b : {&normed, &attn, &mlp, &gate, &qkv, &x, &x_mid}) fill(*b, seed++);
  for (auto* b : {&q, &k_cache, &v_cache}) fill(*b, seed++);
  for (auto* w : {&w_qkv, &w_o, &w_gate, &w_up, &w_down}) fill(*w, seed++);
  norm_w.fill(bfloat16(1.0f));
  head_norm.fill(bfloat16(1.0f));
  const float eps = 1e-6f, scale = 1.0f / std::sqrt(float(kHead));
  const auto k_column = static_cast<std::int32_t>(kQWidth / 64), v_column = static_cast<std::int32_t>(kQkv / kHead - kKv);
  const double T = static_cast<double>(t);
  auto gemm = [&](std::int64_t n, std::int64_t kk) { return 2.0 * T * static_cast<double>(n * kk); };
  // Causal: each query attends to the positions up to its own, q K^T and p V.
  const double attention_flops = 4.0 * kHead * kHeads * (T * (T + 1) / 2);
  const CompilerHints none{};
  // `kernel` with each program's k-tiles shared by the CTAs of a cluster, at each of `splits`.
  auto split_cases = [&](const std::string& name, double flops, std::initializer_list<int> splits, const auto& kernel,
                         auto out, const auto&... args) {
    for (int split : splits)
      time_case(fmt::format("{} split {}", name, split), flops, CompilerHints{.split_k = split}, kernel, out, args...);
  };

  time_case(fmt::format("rmsnorm {}x{} (engine)", NR, NC), 0, none, k::prefill_rmsnorm<NR, NC>(),
            normed.partition<NR, NC>(), x, norm_w, eps);
  time_case("rmsnorm f32 4x1024 (before)", 0, none, k::prefill_rmsnorm<4, 1024>(), normed.partition<4, 1024>(), x_f32,
            norm_w, eps);
  time_case("rmsnorm 1x4096", 0, none, k::prefill_rmsnorm<1, 4096>(), normed.partition<1, 4096>(), x, norm_w, eps);
  time_case("rmsnorm 2x4096", 0, none, k::prefill_rmsnorm<2, 4096>(), normed.partition<2, 4096>(), x, norm_w, eps);
  // Column tiles that divide the 4B hidden size (2560 = 5 x 512 = 10 x 256): no program has a
  // ragged tile (tile-version-interior's bounds-checked copy), at the cost of more reads of each
  // row for its sum.
  time_case("rmsnorm 2x512", 0, none, k::prefill_rmsnorm<2, 512>(), normed.partition<2, 512>(), x, norm_w, eps);
  time_case("rmsnorm 4x512", 0, none, k::prefill_rmsnorm<4, 512>(), normed.partition<4, 512>(), x, norm_w, eps);
  time_case("rmsnorm 8x512", 0, none, k::prefill_rmsnorm<8, 512>(), normed.partition<8, 512>(), x, norm_w, eps);
  time_case("rmsnorm 16x512", 0, none, k::prefill_rmsnorm<16, 512>(), normed.partition<16, 512>(), x, norm_w, eps);
  time_case("rmsnorm 4x256", 0, none, k::prefill_rmsnorm<4, 256>(), normed.partition<4, 256>(), x, norm_w, eps);
  time_case("rmsnorm 8x256", 0, none, k::prefill_rmsnorm<8, 256>(), normed.partition<8, 256>(), x, norm_w, eps);
  time_case("rmsnorm 16x256", 0, none, k::prefill_rmsnorm<16, 256>(), normed.partition<16, 256>(), x, norm_w, eps);

  time_case(fmt::format("qkv {}x{}x{} (engine)", BM, BN, BK), gemm(kQkv, kHidden), none,
            k::prefill_matmul_bf16<BM, BN, BK>(), qkv.partition<BM, BN>(), normed, w_qkv.transposed());
  time_case("qkv 128x256x64", gemm(kQkv, kHidden), none, k::prefill_matmul_bf16<128, 256, 64>(),
            qkv.partition<128, 256>(), normed, w_qkv.transposed());
  split_cases(fmt::format("qkv {}x{}x{}", BM, BN, BK), gemm(kQkv, kHidden), {2, 4}, k::prefill_matmul_bf16<BM, BN, BK>(),
              qkv.partition<BM, BN>(), normed, w_qkv.transposed());
  time_case("qkv 64x64x64", gemm(kQkv, kHidden), none, k::prefill_matmul_bf16<64, 64, 64>(), qkv.partition<64, 64>(),
            normed, w_qkv.transposed());
  // The consumers taking programs in turn (CompilerHints::ping_pong).
  const CompilerHints ping_pong{.ping_pong = true};
  time_case(fmt::format("qkv {}x{}x{} ping-pong", BM, BN, BK), gemm(kQkv, kHidden), ping_pong,
            k::prefill_matmul_bf16<BM, BN, BK>(), qkv.partition<BM, BN>(), normed, w_qkv.transposed());
  time_case(fmt::format("qkv f32 {}x{}x{} (before)", BM, BN, BK), gemm(kQkv, kHidden), none,
            k::prefill_matmul<BM, BN, BK>(), qkv_f32.partition<BM, BN>(), normed, w_qkv.transposed());

  // The engine's position tile: BT, or BS for a chunk of fewer than BT positions.
  constexpr int BS = k::kPrefillRopeRowsShort;
  auto norm_rope = [&]<int R>() {
    const std::string which = fmt::format("{} positions a program{}", R, (t < BT) == (R == BS) ? " (engine)" : "");
    time_case("q_norm_rope " + which, 0, none, k::prefill_q_norm_rope<R>(), q.partition<1, R, 128>(), qkv, head_norm,
              cos_rows, sin_rows, eps);
    time_case("kv_norm_rope_append " + which, 0, none, k::prefill_kv_norm_rope_append<R>(),
              k_cache.partition<1, R, 128>(), v_cache.partition<1, R, 128>(), qkv, head_norm, cos_rows, sin_rows,
              k_column, v_column, eps);
  };
  norm_rope.template operator()<BT>();
  norm_rope.template operator()<BS>();
  time_case("q_norm_rope f32 qkv (before)", 0, none, k::prefill_q_norm_rope<BT>(), q.partition<1, BT, 128>(), qkv_f32,
            head_norm, cos_rows, sin_rows, eps);
  time_case("kv_norm_rope_append f32 qkv (before)", 0, none, k::prefill_kv_norm_rope_append<BT>(),
            k_cache.partition<1, BT, 128>(), v_cache.partition<1, BT, 128>(), qkv_f32, head_norm, cos_rows, sin_rows,
            k_column, v_column, eps);

  auto attention = [&](const std::string& name, const CompilerHints& hints, const auto& kernel, auto out) {
    time_case(name, attention_flops, hints, kernel, out, q, k_cache, v_cache, std::int32_t{0},
              static_cast<std::int32_t>(kGroup), scale);
  };
  attention(fmt::format("attention {}x{} (engine)", BQ, BKV), none, k::prefill_attention<BQ, BKV>(),
            attn.partition<BQ, 128>());
  attention(fmt::format("attention {}x{} stages 3", BQ, BKV), CompilerHints{.pipeline_stages = 3},
            k::prefill_attention<BQ, BKV>(), attn.partition<BQ, 128>());
  attention("attention 32x64", none, k::prefill_attention<32, 64>(), attn.partition<32, 128>());
  attention("attention 32x64 stages 3", CompilerHints{.pipeline_stages = 3}, k::prefill_attention<32, 64>(),
            attn.partition<32, 128>());
  attention("attention 128x64", none, k::prefill_attention<128, 64>(), attn.partition<128, 128>());
  attention("attention 64x32", none, k::prefill_attention<64, 32>(), attn.partition<64, 128>());
  attention("attention 64x32 stages 4", CompilerHints{.pipeline_stages = 4}, k::prefill_attention<64, 32>(),
            attn.partition<64, 128>());
  attention("attention 128x32", none, k::prefill_attention<128, 32>(), attn.partition<128, 128>());
  attention("attention 64x128", none, k::prefill_attention<64, 128>(), attn.partition<64, 128>());

  // The residual GEMMs (o_proj, down: out = residual + a w^T) at the engine's tile and split, the
  // forms before it (no split, an f32 stream), other splits, and other tiles: wider and deeper
  // ones, whole and with the last round split (a long chunk's 160 tiles of 128 x 128 are 80 of
  // 128 x 256), and 64-row and 64-column ones for short prompts.
  auto residual_cases = [&](const std::string& name, double flops, auto& out, auto& out_f32, const auto& a,
                            const auto& w, const auto& residual, const auto& residual_f32) {
    const CompilerHints engine_split{
        .split_k = k::prefill_residual_split(t, kHidden, a.shape(1), tessera::gpu_multiprocessor_count())};
    auto tile = [&]<int M, int N, int K>() { return k::prefill_matmul_residual<M, N, K>(); };
    time_case(fmt::format("{} {}x{}x{} (engine)", name, BM, BN, BK), flops, engine_split,
              tile.template operator()<BM, BN, BK>(), out.template partition<BM, BN>(), a, w, residual);
    time_case(fmt::format("{} {}x{}x{} no split (before)", name, BM, BN, BK), flops, none,
              tile.template operator()<BM, BN, BK>(), out.template partition<BM, BN>(), a, w, residual);
    time_case(fmt::format("{} {}x{}x{} ping-pong", name, BM, BN, BK), flops, ping_pong,
              tile.template operator()<BM, BN, BK>(), out.template partition<BM, BN>(), a, w, residual);
    time_case(fmt::format("{} f32 residual {}x{}x{} (before)", name, BM, BN, BK), flops, none,
              tile.template operator()<BM, BN, BK>(), out_f32.template partition<BM, BN>(), a, w, residual_f32);
    split_cases(fmt::format("{} {}x{}x{}", name, BM, BN, BK), flops, {2, 4, 8}, tile.template operator()<BM, BN, BK>(),
                out.template partition<BM, BN>(), a, w, residual);
    split_cases(name + " 128x256x64", flops, {0, 2, 4}, tile.template operator()<128, 256, 64>(),
                out.template partition<128, 256>(), a, w, residual);
    split_cases(name + " 128x128x128", flops, {0, 2}, tile.template operator()<128, 128, 128>(),
                out.template partition<128, 128>(), a, w, residual);
    time_case(name + " 128x64x64", flops, none, tile.template operator()<128, 64, 64>(),
              out.template partition<128, 64>(), a, w, residual);
    time_case(name + " 64x128x64", flops, none, tile.template operator()<64, 128, 64>(),
              out.template partition<64, 128>(), a, w, residual);
    split_cases(name + " 64x64x64", flops, {4}, tile.template operator()<64, 64, 64>(), out.template partition<64, 64>(),
                a, w, residual);
  };
  residual_cases("o_proj", gemm(kHidden, kQWidth), x_mid, x_mid_f32, attn, w_o.transposed(), x, x_f32);

  time_case(fmt::format("gate {}x{}x{} (engine)", BM, BN, BK), gemm(kInter, kHidden), none,
            k::prefill_matmul_bf16<BM, BN, BK>(), gate.partition<BM, BN>(), normed, w_gate.transposed());
  time_case("gate 128x256x64", gemm(kInter, kHidden), none, k::prefill_matmul_bf16<128, 256, 64>(),
            gate.partition<128, 256>(), normed, w_gate.transposed());
  split_cases(fmt::format("gate {}x{}x{}", BM, BN, BK), gemm(kInter, kHidden), {2, 4},
              k::prefill_matmul_bf16<BM, BN, BK>(), gate.partition<BM, BN>(), normed, w_gate.transposed());
  time_case("gate 64x64x64", gemm(kInter, kHidden), none, k::prefill_matmul_bf16<64, 64, 64>(),
            gate.partition<64, 64>(), normed, w_gate.transposed());
  time_case(fmt::format("up + swiglu {}x{}x{} (engine)", BM, BN, BK), gemm(kInter, kHidden), none,
            k::prefill_matmul_swiglu<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w_up.transposed(), gate);
  time_case("up + swiglu 128x256x64", gemm(kInter, kHidden), none, k::prefill_matmul_swiglu<128, 256, 64>(),
            mlp.partition<128, 256>(), normed, w_up.transposed(), gate);
  time_case(fmt::format("up + swiglu {}x{}x{} ping-pong", BM, BN, BK), gemm(kInter, kHidden), ping_pong,
            k::prefill_matmul_swiglu<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w_up.transposed(), gate);
  split_cases(fmt::format("up + swiglu {}x{}x{}", BM, BN, BK), gemm(kInter, kHidden), {2, 4},
              k::prefill_matmul_swiglu<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w_up.transposed(), gate);
  // The earlier form beside it: an f32 gate and the accurate exp and division in the epilogue;
  // and a bf16 gate with the accurate forms, to tell the two changes apart.
  time_case(fmt::format("gate f32 {}x{}x{} (before)", BM, BN, BK), gemm(kInter, kHidden), none,
            k::prefill_matmul<BM, BN, BK>(), gate_f32.partition<BM, BN>(), normed, w_gate.transposed());
  time_case(fmt::format("up + swiglu f32 gate, accurate {}x{}x{} (before)", BM, BN, BK), gemm(kInter, kHidden), none,
            swiglu_accurate<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w_up.transposed(), gate_f32);
  time_case(fmt::format("up + swiglu bf16 gate, accurate {}x{}x{}", BM, BN, BK), gemm(kInter, kHidden), none,
            swiglu_accurate<BM, BN, BK>(), mlp.partition<BM, BN>(), normed, w_up.transposed(), gate);

  residual_cases("down", gemm(kHidden, kInter), x, x_f32, mlp, w_down.transposed(), x_mid, x_mid_f32);
  return 0;
}
