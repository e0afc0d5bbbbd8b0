// l2_side_prefetch_chain.cu: a measurement, in plain CUDA, of whether Qwen3-4B's decode chain
// (issue #23) gains when the weights of the products after attention are pulled into L2 while
// attention runs, HBM being nearly idle then; not tessera code and not built by CMake
// (`nvcc -O3 -arch=sm_90a -std=c++17 -o l2_side_prefetch_chain l2_side_prefetch_chain.cu`, then
// run it on the GPU). The chain is matvec_chain_common.cuh's 36 layers with the three attention
// stand-ins; the first stand-in gets P extra CTAs which, after griddepcontrol.wait (the QKV
// product done), issue `cp.async.bulk.prefetch.L2` for the first `bytes` of the weights that
// follow (o_proj's, then gate's) and exit. Variants: nothing prefetched; o_proj's 21 MB; o_proj
// and 10 or 20 MB of gate; each with plain prefetches and with an evict_last policy. Times are
// per chain; the ratio is the weights' bytes at the copy bandwidth over the chain's time.
#include "matvec_chain_common.cuh"
#include <cstdint>

template <int R>
__global__ void __launch_bounds__(T) mv(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                        float* __restrict__ y, int N, int K) {
  asm volatile("griddepcontrol.launch_dependents;\n griddepcontrol.wait;" ::: "memory");
  rows_from_registers<R>(W, x, y, N, K);
}

// The first attention stand-in (8 CTAs) with `gridDim.x - 8` prefetching CTAs: those split the
// ranges [a, a + an) and [b, b + bn) into 32 KiB pieces, one per thread, and exit.
template <bool EvictLast>
__global__ void __launch_bounds__(T) small_prefetch(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                                    float* __restrict__ y, const char* a, size_t an, const char* b,
                                                    size_t bn) {
  asm volatile("griddepcontrol.launch_dependents;\n griddepcontrol.wait;" ::: "memory");
  if (blockIdx.x >= 8) {
    constexpr size_t piece = 32 << 10;
    size_t pieces_a = (an + piece - 1) / piece, pieces = pieces_a + (bn + piece - 1) / piece;
    size_t threads = size_t(gridDim.x - 8) * T;
    uint64_t policy = 0;
    if (EvictLast) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
    for (size_t i = (blockIdx.x - 8) * size_t(T) + threadIdx.x; i < pieces; i += threads) {
      const char* p = i < pieces_a ? a + i * piece : b + (i - pieces_a) * piece;
      size_t left = i < pieces_a ? an - i * piece : bn - (i - pieces_a) * piece;
      unsigned n = unsigned(left < piece ? left : piece);
      if (EvictLast)
        asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(p), "r"(n), "l"(policy)
                     : "memory");
      else
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p), "r"(n) : "memory");
    }
    return;
  }
  float v = x[threadIdx.x];
  uint4 w = __ldg(reinterpret_cast<const uint4*>(W) + size_t(blockIdx.x) * T + threadIdx.x);
  v += __uint_as_float(w.x) * 1e-30f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
  if (threadIdx.x == 0) y[blockIdx.x] = v;
}

int main() {
  const ChainSetup setup;
  const auto& [copy_bw, chain, buffers, total] = setup;
  // gate_mb < 0: no prefetching CTAs at all (the chain of register_prewait_chain.cu).
  auto run = [&](const char* nm, int ctas, double gate_mb, bool evict_last) {
    const float* x = buffers.x;
    const __nv_bfloat16* kv = buffers.kv;
    float t = chain_ms([&] {
      for (int l = 0; l < ChainWeights::L; ++l) {
        auto w = [&](int m) { return (const __nv_bfloat16*)chain.w[l * 5 + m]; };
        launch(mv<16>, 6144 / 16, w(0), x, buffers.y, 6144, 2560);
        size_t an = gate_mb < 0 ? 0 : size_t(2560) * 4096 * 2;
        size_t bn = gate_mb <= 0 ? 0 : size_t(gate_mb * 1e6);
        if (evict_last)
          launch(small_prefetch<true>, 8 + ctas, kv, x, buffers.y, (const char*)w(1), an, (const char*)w(2), bn);
        else
          launch(small_prefetch<false>, 8 + ctas, kv, x, buffers.y, (const char*)w(1), an, (const char*)w(2), bn);
        launch(small, 24, kv, x, buffers.y, 24, 8);
        launch(small, 8, kv, x, buffers.y, 8, 2);
        launch(mv<16>, 2560 / 16, w(1), x, buffers.y, 2560, 4096);
        launch(mv<8>, 9728 / 8, w(2), x, buffers.y, 9728, 2560);
        launch(mv<8>, 9728 / 8, w(3), x, buffers.y, 9728, 2560);
        launch(mv<16>, 2560 / 16, w(4), x, buffers.y, 2560, 9728);
      }
    });
    printf("{\"chain\": \"%s\", \"ctas\": %d, \"gate_mb\": %.0f, \"evict_last\": %d, \"ms\": %.4f, \"us_per_layer\": %.2f, "
           "\"of_copy\": %.3f}\n",
           nm, ctas, gate_mb, evict_last, t, t * 1e3 / ChainWeights::L, total / copy_bw * 1e3 / t);
  };
  for (int rep = 0; rep < 2; ++rep) {
    run("none", 0, -1, false);
    for (int ctas : {16, 64})
      for (bool el : {false, true}) {
        run("o_proj", ctas, 0, el);
        run("o_proj + gate 10 MB", ctas, 10, el);
        run("o_proj + gate 20 MB", ctas, 20, el);
      }
  }
  return 0;
}
