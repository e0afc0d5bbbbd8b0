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
  const ChainSetup setup;
  const auto& [copy_bw, chain, buffers, total] = setup;
  auto run = [&](const char* nm, bool attn, auto k16, auto k8) {
    float t = chain_ms([&] {
      for (int l = 0; l < ChainWeights::L; ++l) launch_layer(chain, buffers, l, -1, attn, k16, k8, k16, 16, 1);
    });
    printf("{\"chain\": \"%s\", \"attention\": %d, \"ms\": %.4f, \"us_per_layer\": %.2f, \"of_copy\": %.3f}\n", nm, attn, t,
           t * 1e3 / ChainWeights::L, total / copy_bw * 1e3 / t);
  };
  for (int rep = 0; rep < 2; ++rep)
    for (bool attn : {false, true}) {
      run("no prefetch", attn, mv<16, 0>, mv<8, 0>);
      run("prefetch 2 steps", attn, mv<16, 1>, mv<8, 1>);
      run("prefetch whole rows", attn, mv<16, 2>, mv<8, 2>);
    }
  return 0;
}
