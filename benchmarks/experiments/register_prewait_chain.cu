// register_prewait_chain.cu: a measurement, in plain CUDA, of whether a batch-1 product gains from
// loading its first weight steps into registers before griddepcontrol.wait (while the kernel
// before it ends), for Qwen3-4B's decode (issue #23); not tessera code and not built by CMake
// (`nvcc -O3 -arch=sm_90a -std=c++17 -o register_prewait_chain register_prewait_chain.cu`, then
// run it on the GPU). The chain is l2_prefetch_chain.cu's: 36 decode layers with programmatic
// dependent launch, QKV, optionally three small stand-ins for attention, o_proj, gate, up, down,
// R x 512 tiles at 256 threads, distinct weights (7.27 GB). Each product thread loads the weight
// chunks of its first P 512-column steps (the weights are frozen: no kernel writes them) before
// it waits, the vector's chunks after; the remaining steps are rows_from_registers' loop. The
// o_proj and down products (2560 rows, 320 programs) also run split over clusters of S CTAs
// ("split S"). Times are per chain; the ratio is the weights' bytes at this program's copy
// bandwidth over the time.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include "matvec_chain_common.cuh"
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

// y = W x for R rows per program at 256 threads, each thread's chunks of the first P steps loaded
// before griddepcontrol.wait (the weights are frozen), the vector's after. With S > 1 the
// program's steps are split over the S CTAs of a cluster (CTA s runs steps [s * steps / S,
// (s + 1) * steps / S)); the partial sums meet in CTA 0 through distributed shared memory (each
// thread adds its peers' partials of the same rows), which ends the product.
template <int R, int P, int S = 1>
__global__ void __launch_bounds__(T) mv(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                        float* __restrict__ y, int N, int K) {
  constexpr int BK = 512, TPR = BK / 8, RPP = T / TPR, C = R / RPP;
  __shared__ float part[S > 1 ? C : 1][T];
  const int s = S > 1 ? int(cg::this_cluster().block_rank()) : 0;
  int t = threadIdx.x, row0 = (blockIdx.x / S) * R;
  int col = (t % TPR) * 8, rsub = t / TPR;
  int steps = K / BK, first = s * steps / S, last = (s + 1) * steps / S;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  uint4 pre[P > 0 ? P : 1][C];
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (first + i < last) load_step<C, RPP>(pre[i], W, row0, rsub, K, (first + i) * BK, col);
  asm volatile("griddepcontrol.wait;" ::: "memory");
  float acc[C] = {};
#pragma unroll
  for (int i = 0; i < P; ++i)
    if (first + i < last) step_products<C>(acc, pre[i], x + (first + i) * BK + col);
#pragma unroll 2
  for (int k0 = (first + P) * BK; k0 < last * BK; k0 += BK) {
    uint4 w[C];
    load_step<C, RPP>(w, W, row0, rsub, K, k0, col);
    step_products<C>(acc, w, x + k0 + col);
  }
  if constexpr (S > 1) {
    cg::cluster_group cluster = cg::this_cluster();
    if (s > 0)
#pragma unroll
      for (int c = 0; c < C; ++c) part[c][t] = acc[c];
    cluster.sync();
    if (s == 0)
      for (int r = 1; r < S; ++r) {
        float* peer = cluster.map_shared_rank(&part[0][0], r);
#pragma unroll
        for (int c = 0; c < C; ++c) acc[c] += peer[c * T + t];
      }
    cluster.sync();
  }
  if (s == 0) finish<R>(acc, y, row0, N);
}
int main() {
  const double copy_bw = copy_bandwidth();
  const ChainWeights chain;
  const ChainBuffers buffers;
  const int L = ChainWeights::L;
  const auto& ms = ChainWeights::ms;
  float* x = buffers.x;
  float* y = buffers.y;
  printf("chain %.2f GB: weights at the copy bandwidth %.3f ms\n", chain.total / 1e9, chain.total / copy_bw * 1e3);
  {  // the split products equal the plain one (within f32 reassociation)
    std::vector<float> hx(9728), ref(2560), got(2560);
    for (int i = 0; i < 9728; ++i) hx[i] = ((i * 37) % 101 - 50) / 50.0f;
    CK(cudaMemcpy(x, hx.data(), 9728 * 4, cudaMemcpyHostToDevice));
    launch(mv<8, 0>, 2560 / 8, (const __nv_bfloat16*)chain.w[4], (const float*)x, y, 2560, 9728);
    CK(cudaMemcpy(ref.data(), y, 2560 * 4, cudaMemcpyDeviceToHost));
    auto compare = [&](const char* nm, auto kern, int S) {
      CK(cudaMemset(y, 0, 2560 * 4));
      launch_cluster(kern, 2560 / 8, S, (const __nv_bfloat16*)chain.w[4], (const float*)x, y, 2560, 9728);
      CK(cudaMemcpy(got.data(), y, 2560 * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int i = 0; i < 2560; ++i) worst = std::max(worst, (double)std::abs(got[i] - ref[i]) / std::max(1.0, (double)std::abs(ref[i])));
      printf("check %s: worst relative difference %.3g%s\n", nm, worst, worst > 1e-4 ? " MISMATCH" : "");
    };
    compare("prewait 8", mv<8, 8>, 1);
    compare("split 2", mv<8, 0, 2>, 2);
    compare("split 4, prewait 2", mv<8, 2, 4>, 4);
    CK(cudaMemset(x, 0, 16384 * 4));
  }
  // Each product alone (one shape, all 36 layers chained), then the whole chain.
  auto run = [&](const char* nm, int only, bool attn, auto k16, auto k8, auto kn, int S) {
    double bytes = 0;
    for (int m = 0; m < 5; ++m) if (only < 0 || only == m) bytes += L * double(ms[m].n) * ms[m].k * 2;
    float t = chain_ms([&] {
      for (int l = 0; l < L; ++l) launch_layer(chain, buffers, l, only, attn, k16, k8, kn, 8, S);
    });
    printf("{\"chain\": \"%s\", \"only\": %d, \"attention\": %d, \"ms\": %.4f, \"us_per_layer\": %.2f, \"of_copy\": %.3f}\n", nm,
           only, attn, t, t * 1e3 / L, bytes / copy_bw * 1e3 / t);
  };
  for (int rep = 0; rep < 2; ++rep)
    for (int only : {-1, 1, 4})
      for (bool attn : {false, true}) {
        if (only >= 0 && !attn && rep) continue;
        run("prewait 0", only, attn, mv<16, 0>, mv<8, 0>, mv<8, 0>, 1);
        run("prewait 1", only, attn, mv<16, 1>, mv<8, 1>, mv<8, 1>, 1);
        run("prewait 2", only, attn, mv<16, 2>, mv<8, 2>, mv<8, 2>, 1);
        run("prewait 4", only, attn, mv<16, 4>, mv<8, 4>, mv<8, 4>, 1);
        run("prewait 8", only, attn, mv<16, 4>, mv<8, 8>, mv<8, 8>, 1);
        run("split 2, prewait 0", only, attn, mv<16, 0>, mv<8, 0>, mv<8, 0, 2>, 2);
        run("split 4, prewait 0", only, attn, mv<16, 0>, mv<8, 0>, mv<8, 0, 4>, 4);
        run("split 2, prewait 2", only, attn, mv<16, 2>, mv<8, 2>, mv<8, 2, 2>, 2);
        run("split 4, prewait 2", only, attn, mv<16, 2>, mv<8, 2>, mv<8, 2, 4>, 4);
      }
  return 0;
}
