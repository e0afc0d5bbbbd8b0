// test_attention_mma_sync.cpp: attention kernels as users write them (an online softmax over key
// tiles: q k^T, a causal mask, row max and sum, p v), which convert-tile-attention-to-mma-sync
// lowers on every NVIDIA target from sm_80 with the scores, the softmax and the output in
// registers (docs/compiler.md, "Attention on the tensor cores").
//
// Compile tests (no GPU needed): the PTX for sm_80, sm_86, sm_89, sm_90, sm_100a and sm_120 holds
// cp.async, ldmatrix (transposed for V), mma.sync and the quad shuffles of the row reductions, and
// nvJitLink's ptxas reports no spills at the engine's 64 x 64 tile of head dimension 128.
//
// Results: random bf16 and f16 queries, keys and values against a host reference in double, with
// grouped-query heads, causal from a start position, ragged query and key counts (cache rows past
// the last query hold large values that an unmasked key would let dominate), several tiles. On
// the GPU the kernels launch for sm_90 and for sm_80 (whose PTX runs on any GPU from sm_80); on
// the CPU target they take the loop lowering.
#include "driver/nvjitlink.h"
#include "execution_helpers.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

using namespace tessera;

namespace {

using exec_test::random_tensor;

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// out[r, head D .. head D + D) = softmax over keys p <= start + r of scale q[head, r] . k[head /
// group, p], times v[head / group, p]: one program per (BQ queries, head), key tiles of BKV.
template <class T, int BQ, int BKV, int D>
auto attention() {
  return kernel(fmt::format("test_attention_{}_{}x{}x{}", dtype_name(dtype_v<T>), BQ, BKV, D),
                [](auto out, auto q, auto k, auto v, auto start, auto group, auto scale) {
                  auto head = program_id<1>();
                  auto kv_head = head / group;
                  auto first = start + program_id<0>() * c<BQ>;
                  auto limit = minimum(first + c<BQ>, start + dim<1>(q));
                  auto query_pos = reshape<BQ, 1>(iota<BQ>() + first);
                  auto qt = reshape<BQ, D>(load<1, BQ, D>(q, head, program_id<0>(), c<0>));
                  auto r = for_range(
                      (limit + c<BKV - 1>) / c<BKV>,
                      [=](auto i, auto m, auto l, auto o) {
                        auto kt = reshape<BKV, D>(load<1, BKV, D>(k, kv_head, i, c<0>));
                        auto vt = reshape<BKV, D>(load<1, BKV, D>(v, kv_head, i, c<0>));
                        auto key_pos = reshape<1, BKV>(iota<BKV>() + i * c<BKV>);
                        auto s = select(key_pos <= query_pos, mma(qt, transpose(kt), c<0.0>) * scale, c<-inf>);
                        auto m_new = maximum(m, max<1>(s));
                        auto alpha = exp(m - m_new);
                        auto p = exp(s - m_new);
                        return carry(m_new, l * alpha + sum<1>(p), mma(cast<dtype_v<T>>(p), vt, o * alpha));
                      },
                      full<DType::f32, BQ, 1>(c<-inf>), full<DType::f32, BQ, 1>(c<0.0>),
                      full<DType::f32, BQ, D>(c<0.0>));
                  return out.store(cast<dtype_v<T>>(get<2>(r) / get<1>(r)));
                });
}

double d(bfloat16 x) { return static_cast<double>(static_cast<float>(x)); }
double d(half x) { return static_cast<double>(static_cast<float>(x)); }

template <class T, int BQ, int BKV, int D>
void check_attention(Target target, int64_t t, int64_t start, unsigned seed) {
  const int64_t heads = 4, kv_heads = 2, group = 2, context = start + t + 20;
  INFO(dtype_name(dtype_v<T>) << " " << BQ << "x" << BKV << " tiles, D " << D << ", " << t << " queries from "
                              << start);
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  auto q = random_tensor<T, 3>({heads, t, D}, -2, 2, seed);
  auto k = random_tensor<T, 3>({kv_heads, context, D}, -2, 2, seed + 1);
  auto v = random_tensor<T, 3>({kv_heads, context, D}, -1, 1, seed + 2);
  // Past the last query's position: keys that would dominate and values far off, if not masked.
  for (int64_t h = 0; h < kv_heads; ++h)
    for (int64_t p = start + t; p < context; ++p)
      for (int64_t i = 0; i < D; ++i) k(h, p, i) = T(40.0f), v(h, p, i) = T(1000.0f);
  Tensor<T, 2> out({t, heads * D});
  attention<T, BQ, BKV, D>().launch(exec_test::on(target), out.template partition<BQ, D>(), q, k, v,
                                 static_cast<int32_t>(start), static_cast<int32_t>(group), scale);
  // p is rounded to T before p v (2^-8 relative for bf16, 2^-11 for f16, at most twice that with
  // the f32 roundings of the scores and sums); the output rounds once more.
  const double unit = std::is_same_v<T, bfloat16> ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11);
  int bad = 0;
  for (int64_t r = 0; r < t; ++r)
    for (int64_t head = 0; head < heads; ++head) {
      const int64_t kvh = head / group, n = start + r + 1;
      std::vector<double> s(n);
      double top = -INFINITY;
      for (int64_t p = 0; p < n; ++p) {
        double dot = 0;
        for (int64_t i = 0; i < D; ++i) dot += d(q(head, r, i)) * d(k(kvh, p, i));
        s[p] = dot * scale;
        top = std::max(top, s[p]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - top));
      for (int64_t i = 0; i < D; ++i) {
        double want = 0, magnitude = 0;
        for (int64_t p = 0; p < n; ++p) {
          want += s[p] / sum * d(v(kvh, p, i));
          magnitude += s[p] / sum * std::abs(d(v(kvh, p, i)));
        }
        const double got = d(out(r, head * D + i));
        const double bound = 2 * unit * magnitude + unit * std::abs(want) + 1e-6;
        if (!(std::abs(got - want) <= bound) && bad++ < 5)
          FAIL_CHECK("out(" << r << ", " << head * D + i << ") = " << got << ", want " << want << " +- " << bound);
      }
    }
  CHECK(bad == 0);
}

template <class T, int BQ, int BKV, int D>
void check_sizes(Target target) {
  check_attention<T, BQ, BKV, D>(target, 2 * BQ, 0, 1);        // whole query tiles, from position 0
  check_attention<T, BQ, BKV, D>(target, BQ + 37, 7, 4);       // ragged queries and keys
  check_attention<T, BQ, BKV, D>(target, 1, 3 * BKV + 5, 7);   // one query after several key tiles
}

void attention_results(Target target) {
  check_sizes<bfloat16, 64, 64, 128>(target);  // the Qwen3 engine's prefill tile
  check_sizes<bfloat16, 32, 32, 64>(target);
  check_sizes<bfloat16, 16, 16, 16>(target);
  check_sizes<half, 64, 32, 64>(target);
  check_sizes<half, 128, 64, 32>(target);
}

}  // namespace

TEST_CASE("attention kernels: results against the host reference (cpu)", "[cpu][mma][attention]") {
  attention_results(Target::cpu);
}

TEST_CASE("attention kernels: results against the host reference (gpu, sm_90 and sm_80 code)",
          "[gpu][mma][attention]") {
  if (!gpu_available()) {
    WARN("no GPU on this machine: skipped");
    return;
  }
  attention_results(Target::sm_90);
  attention_results(Target::sm_80);
}

TEST_CASE("attention kernels take the mma.sync attention lowering on sm_80 and newer, with no spills",
          "[mma][attention][compile]") {
  if (!exec_test::toolchain_present()) return;
  Tensor<bfloat16, 3> q({8, 300, 128}), k({2, 300, 128}), v({2, 300, 128});
  Tensor<bfloat16, 2> out({300, 8 * 128});
  for (Target t : {Target::sm_80, Target::sm_86, Target::sm_89, Target::sm_90, Target::sm_100a, Target::sm_120}) {
    const std::string arch(to_string(t));
    INFO(arch);
    const CompiledArtifact a = attention<bfloat16, 64, 64, 128>().compile(t, out.partition<64, 128>(), q, k, v, int32_t{0},
                                                                 int32_t{4}, 0.1f);
    CHECK(has(a.ptx, "cp.async.cg.shared.global"));
    CHECK(has(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.shared.b16"));
    CHECK(has(a.ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
    CHECK(has(a.ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
    CHECK(has(a.ptx, "shfl.sync.bfly"));
    const std::string log = detail::ptx_to_cubin(a.ptx, arch, std::vector<std::string>{"-verbose"}).info_log;
    INFO(log);
    CHECK(has(log, " 0 bytes spill stores"));
    CHECK(has(log, " 0 bytes spill loads"));
  }
}
