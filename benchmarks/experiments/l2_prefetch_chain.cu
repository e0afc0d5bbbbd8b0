// l2_prefetch_chain.cu: a measurement, in plain CUDA, of whether a batch-1 product gains from
// prefetching its weight rows into L2 before griddepcontrol.wait (while the kernel before it
// ends), for Qwen3-4B's decode (issue #23); not tessera code and not built by CMake
// (`nvcc -O3 -arch=sm_90a -std=c++17 -o l2_prefetch_chain l2_prefetch_chain.cu`, then run it on
// the GPU). The chain mimics 36 decode layers with programmatic dependent launch: QKV, three
// small kernels standing in for attention (8, 24 and 8 CTAs reading 4-32 KiB each), o_proj,
// gate, up, down, each product at R x 512 tiles and 256 threads from registers (the layout of
// bulk_matvec_chain.cu), distinct weights (7.27 GB). Each product CTA first issues
// `cp.async.bulk.prefetch.L2` of none, the first two 512-column steps, or all of each of its
// rows, then waits. Times are per chain, and the ratio is the weights' bytes at this program's
// copy bandwidth over the chain's time.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include "matvec_chain_common.cuh"
// PF: 0 none, 1 the first two 512-column steps of each row, 2 each whole row.
template <int R, int PF>
__global__ void __launch_bounds__(T) mv(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                        float* __restrict__ y, int N, int K) {
  constexpr int BK = 512;
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (PF && threadIdx.x < R) {
    const __nv_bfloat16* p = W + size_t(blockIdx.x * R + threadIdx.x) * K;
    unsigned bytes = PF == 2 ? K * 2 : min(K, 2 * BK) * 2;
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(bytes) : "memory");
  }
  asm volatile("griddepcontrol.wait;" ::: "memory");
  rows_from_registers<R>(W, x, y, N, K);
}
int main() {
  const double copy_bw = copy_bandwidth();
  const ChainWeights chain;
  const int L = ChainWeights::L;
  const auto& ms = ChainWeights::ms;
  const auto& w = chain.w;
  const double total = chain.total;
  __nv_bfloat16* kv; CK(cudaMalloc(&kv, size_t(64) << 20)); CK(cudaMemset(kv, 0, size_t(64) << 20));
  float *x, *y; CK(cudaMalloc(&x, 16384 * 4)); CK(cudaMalloc(&y, 16384 * 4)); CK(cudaMemset(x, 0, 16384 * 4));
  printf("chain %.2f GB: weights at the copy bandwidth %.3f ms\n", total / 1e9, total / copy_bw * 1e3);
  auto run = [&](const char* nm, bool attn, auto k16, auto k8) {
    float t = chain_ms([&] {
      for (int l = 0; l < L; ++l) {
        launch(k16, 6144 / 16, (const __nv_bfloat16*)w[l * 5], (const float*)x, y, 6144, 2560);
        if (attn) {  // qk_norm (8 CTAs), split (24 CTAs x 2 chunks of K and V), combine (8 CTAs)
          launch(small, 8, (const __nv_bfloat16*)kv, (const float*)x, y, 8, 1);
          launch(small, 24, (const __nv_bfloat16*)kv, (const float*)x, y, 24, 8);
          launch(small, 8, (const __nv_bfloat16*)kv, (const float*)x, y, 8, 2);
        }
        launch(k16, 2560 / 16, (const __nv_bfloat16*)w[l * 5 + 1], (const float*)x, y, 2560, 4096);
        launch(k8, 9728 / 8, (const __nv_bfloat16*)w[l * 5 + 2], (const float*)x, y, 9728, 2560);
        launch(k8, 9728 / 8, (const __nv_bfloat16*)w[l * 5 + 3], (const float*)x, y, 9728, 2560);
        launch(k16, 2560 / 16, (const __nv_bfloat16*)w[l * 5 + 4], (const float*)x, y, 2560, 9728);
      }
    });
    printf("{\"chain\": \"%s\", \"attention\": %d, \"ms\": %.4f, \"us_per_layer\": %.2f, \"of_copy\": %.3f}\n", nm, attn, t,
           t * 1e3 / L, total / copy_bw * 1e3 / t);
  };
  for (int rep = 0; rep < 2; ++rep)
    for (bool attn : {false, true}) {
      run("no prefetch", attn, mv<16, 0>, mv<8, 0>);
      run("prefetch 2 steps", attn, mv<16, 1>, mv<8, 1>);
      run("prefetch whole rows", attn, mv<16, 2>, mv<8, 2>);
    }
  return 0;
}
