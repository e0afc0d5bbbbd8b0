// bulk_matvec_chain.cu: a measurement, in plain CUDA, of what bulk rings and programmatic launches
// could give Qwen3-4B's decode products (issue #23); not tessera code and not built by CMake
// (`nvcc -O3 -arch=sm_90a -std=c++17 -o bulk_matvec_chain bulk_matvec_chain.cu`, then run it on
// the GPU). Batch-1 products y = W x (W bf16 [N, K], x f32 [K]) at 256 threads per CTA, R x 512
// tiles: per-thread register loads (tessera's layout at 256 threads) against rings of S slots in
// shared memory that one thread fills with cp.async.bulk per row (the vector chunk too), completed
// on a full mbarrier, released per warp on an empty one. The chain runs the products of 36 layers
// (QKV, o_proj, gate, up, down; distinct weights, 7.27 GB) back to back with programmatic
// dependent launch; a ring's first S - 1 weight tiles are copied before griddepcontrol.wait
// (weights no earlier kernel writes) or after it ("postwait"). Ratios are to this program's own
// copy kernel. SHAPES=1 also times each shape alone (events around one launch: launch-bound).
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <cstdlib>
#include <vector>
#include <algorithm>

#include "matvec_chain_common.cuh"

// Register loads (rows_from_registers), after the grid wait with programmatic launches.
template <int R, bool PDL = false>
__global__ void __launch_bounds__(T) mv_regs(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                             float* __restrict__ y, int N, int K) {
  if (PDL) asm volatile("griddepcontrol.launch_dependents;\n griddepcontrol.wait;" ::: "memory");
  rows_from_registers<R>(W, x, y, N, K);
}

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void mbar_init(unsigned a, unsigned n) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(n));
}
__device__ __forceinline__ void mbar_expect(unsigned a, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(unsigned a) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(a) : "memory");
}
__device__ __forceinline__ void mbar_wait(unsigned a, unsigned parity) {
  unsigned ok = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(ok)
        : "r"(a), "r"(parity)
        : "memory");
  } while (!ok);
}
__device__ __forceinline__ void bulk(unsigned dst, const void* src, unsigned bytes, unsigned bar, uint64_t policy) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "l"(policy)
      : "memory");
}

// Bulk ring: S slots of R x 512 bf16 + 512 f32. Thread 0 issues step i + S - 1 at step i after
// the slot's empty barrier (every warp arrives once it has read the slot).
template <int R, int S, bool WARP_ARRIVE, bool PDL = false, bool PRE = true>
__global__ void __launch_bounds__(T) mv_bulk(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                             float* __restrict__ y, int N, int K) {
  constexpr int BK = 512, TPR = BK / 8, RPP = T / TPR, C = R / RPP;
  constexpr int WB = R * BK * 2, XB = BK * 4, SLOT = WB + XB;
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[S], empty[S];
  int t = threadIdx.x, row0 = blockIdx.x * R;
  int col = (t % TPR) * 8, rsub = t / TPR;
  int steps = K / BK;
  uint64_t policy, keep;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep));
  if (t == 0) {
    for (int s = 0; s < S; ++s) {
      mbar_init(smem_addr(&full[s]), 1);
      mbar_init(smem_addr(&empty[s]), WARP_ARRIVE ? T / 32 : T);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  auto issue_w = [&](int i) {
    int s = i % S;
    unsigned base = smem_addr(ring + s * SLOT);
    unsigned fb = smem_addr(&full[s]);
    mbar_expect(fb, SLOT);
    for (int r = 0; r < R; ++r)
      bulk(base + r * BK * 2, W + size_t(row0 + r) * K + size_t(i) * BK, BK * 2, fb, policy);
  };
  auto issue_x = [&](int i) {
    int s = i % S;
    bulk(smem_addr(ring + s * SLOT) + WB, x + size_t(i) * BK, XB, smem_addr(&full[s]), keep);
  };
  auto issue = [&](int i) { issue_w(i); issue_x(i); };
  if (PDL) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if (PDL && !PRE) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (t == 0)
    for (int i = 0; i < S - 1 && i < steps; ++i) issue_w(i);
  if (PDL && PRE) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (t == 0)
    for (int i = 0; i < S - 1 && i < steps; ++i) issue_x(i);
  float acc[C] = {};
  for (int i = 0; i < steps; ++i) {
    int s = i % S;
    if (t == 0 && i + S - 1 < steps) {
      int j = i + S - 1;
      if (j >= S) mbar_wait(smem_addr(&empty[j % S]), ((j / S) - 1) & 1);
      issue(j);
    }
    mbar_wait(smem_addr(&full[s]), (i / S) & 1);
    const unsigned char* slot = ring + s * SLOT;
    float4 xa = *reinterpret_cast<const float4*>(slot + WB + col * 4);
    float4 xb = *reinterpret_cast<const float4*>(slot + WB + col * 4 + 16);
    float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
    for (int c = 0; c < C; ++c) {
      uint4 w = *reinterpret_cast<const uint4*>(slot + ((rsub + RPP * c) * BK + col) * 2);
      fma8(&acc[c], w, xv);
    }
    if (WARP_ARRIVE) {
      __syncwarp();
      if ((t & 31) == 0) mbar_arrive(smem_addr(&empty[s]));
    } else {
      mbar_arrive(smem_addr(&empty[s]));
    }
  }
  finish<R>(acc, y, row0, N);
}

template <class F>
float time_ms(F f, int iters = 50) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f(i);
  std::vector<float> ts;
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(a);
    f(i);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}


// The products of 36 4B layers back to back (qkv, o, gate, up, down; distinct weights), with
// or without programmatic dependent launch; products-only "tokens/s" against the copy roofline.
template <class Kern>
void launch(Kern k, dim3 grid, size_t smem, bool pdl, const __nv_bfloat16* w, const float* x, float* y, int n, int kk) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid; cfg.blockDim = dim3(T); cfg.dynamicSmemBytes = smem; cfg.stream = 0;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr; cfg.numAttrs = pdl ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, k, w, x, y, n, kk));
}

void chain(double copy_bw) {
  struct M { int n, k; };
  M ms[5] = {{6144, 2560}, {2560, 4096}, {9728, 2560}, {9728, 2560}, {2560, 9728}};
  const int L = 36;
  std::vector<__nv_bfloat16*> w(L * 5);
  double total = 0;
  for (int l = 0; l < L; ++l)
    for (int m = 0; m < 5; ++m) {
      size_t e = size_t(ms[m].n) * ms[m].k;
      CK(cudaMalloc(&w[l * 5 + m], e * 2));
      fill<<<1024, 256>>>(w[l * 5 + m], e, l * 5 + m);
      total += e * 2.0;
    }
  float *x, *y;
  CK(cudaMalloc(&x, 16384 * 4)); CK(cudaMalloc(&y, 16384 * 4));
  CK(cudaMemset(x, 0, 16384 * 4));
  double roof = copy_bw / total;
  printf("chain: %.2f GB, roofline %.1f steps/s\n", total / 1e9, roof);
  auto run = [&](const char* nm, auto kern, int R, size_t smem, bool pdl) {
    if (smem) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    float t = time_ms([&](int) {
      for (int l = 0; l < L; ++l)
        for (int m = 0; m < 5; ++m)
          launch(kern, dim3(ms[m].n / R), smem, pdl, w[l * 5 + m], x, y, ms[m].n, ms[m].k);
    }, 10);
    printf("{\"chain\": \"%s\", \"pdl\": %d, \"ms\": %.4f, \"steps_per_s\": %.1f, \"of_roofline\": %.3f}\n", nm, pdl, t,
           1e3 / t, 1e3 / t / roof);
  };
  const char* names[6] = {"all", "qkv", "o_proj", "gate", "up", "down"};
  for (int only = 0; only < 6; ++only) {
    double bytes = 0;
    for (int l = 0; l < L; ++l)
      for (int m = 0; m < 5; ++m)
        if (only == 0 || only == m + 1) bytes += double(ms[m].n) * ms[m].k * 2;
    auto run1 = [&](const char* nm, auto kern, int R, size_t smem) {
      if (smem) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      float t = time_ms([&](int) {
        for (int l = 0; l < L; ++l)
          for (int m = 0; m < 5; ++m)
            if (only == 0 || only == m + 1)
              launch(kern, dim3(ms[m].n / R), smem, true, w[l * 5 + m], x, y, ms[m].n, ms[m].k);
      }, 10);
      printf("{\"chain\": \"%s\", \"variant\": \"%s\", \"ms\": %.4f, \"of_copy\": %.3f}\n", names[only], nm, t,
             bytes / (t * 1e-3) / copy_bw);
    };
    run1("regs 16x512", mv_regs<16, true>, 16, 0);
    run1("regs 8x512", mv_regs<8, true>, 8, 0);
    run1("bulk 16x512 S4", mv_bulk<16, 4, true, true>, 16, 4 * (16 * 1024 + 2048));
    run1("bulk 8x512 S4", mv_bulk<8, 4, true, true>, 8, 4 * (8 * 1024 + 2048));
    run1("bulk 8x512 S6", mv_bulk<8, 6, true, true>, 8, 6 * (8 * 1024 + 2048));
    run1("bulk 16x512 S4 postwait", mv_bulk<16, 4, true, true, false>, 16, 4 * (16 * 1024 + 2048));
    run1("bulk 8x512 S4 postwait", mv_bulk<8, 4, true, true, false>, 8, 4 * (8 * 1024 + 2048));
    run1("bulk 8x512 S6 postwait", mv_bulk<8, 6, true, true, false>, 8, 6 * (8 * 1024 + 2048));
    run1("bulk 16x512 S6", mv_bulk<16, 6, true, true>, 16, 6 * (16 * 1024 + 2048));
    run1("bulk 8x512 S5", mv_bulk<8, 5, true, true>, 8, 5 * (8 * 1024 + 2048));
  }
}

int main() {
  // copy bandwidth: 1 GiB
  size_t cn = (size_t(1) << 30) / 16;
  uint4 *ca, *co;
  CK(cudaMalloc(&ca, cn * 16)); CK(cudaMalloc(&co, cn * 16));
  CK(cudaMemset(ca, 1, cn * 16));
  float cms = time_ms([&](int) { copyk<<<132 * 8, 512>>>(ca, co, cn); });
  double copy_bw = 2.0 * cn * 16 / (cms * 1e-3);
  printf("copy %.3f TB/s\n", copy_bw / 1e12);
  CK(cudaFree(ca)); CK(cudaFree(co));

  struct Shape { const char* name; int n, k; };
  Shape shapes[] = {{"qkv", 6144, 2560}, {"o_proj", 2560, 4096}, {"gate", 9728, 2560}, {"down", 2560, 9728},
                    {"lm_head", 151936, 2560}};
  for (auto sh : shapes) {
    if (!getenv("SHAPES")) break;
    size_t elems = size_t(sh.n) * sh.k;
    int copies = std::max<size_t>(1, (size_t(400) << 20) / (elems * 2));  // rotate > L2
    std::vector<__nv_bfloat16*> ws(copies);
    for (int c = 0; c < copies; ++c) {
      CK(cudaMalloc(&ws[c], elems * 2));
      fill<<<1024, 256>>>(ws[c], elems, 17);
    }
    float *x, *y, *yref;
    CK(cudaMalloc(&x, sh.k * 4)); CK(cudaMalloc(&y, sh.n * 4)); CK(cudaMalloc(&yref, sh.n * 4));
    std::vector<float> hx(sh.k);
    for (int i = 0; i < sh.k; ++i) hx[i] = ((i * 37) % 101 - 50) / 50.0f;
    CK(cudaMemcpy(x, hx.data(), sh.k * 4, cudaMemcpyHostToDevice));
    double bytes = elems * 2.0;
    std::vector<float> href(sh.n), hy(sh.n);
    auto check = [&](const char* what) {
      CK(cudaMemcpy(hy.data(), y, sh.n * 4, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (int i = 0; i < sh.n; ++i) worst = std::max(worst, (double)std::abs(hy[i] - href[i]) / std::max(1.0, (double)std::abs(href[i])));
      if (worst > 1e-3) printf("  %s MISMATCH %g\n", what, worst);
    };
    auto report = [&](const char* what, float ms) {
      printf("{\"shape\": \"%s\", \"n\": %d, \"k\": %d, \"variant\": \"%s\", \"ms\": %.4f, \"ratio_to_copy\": %.3f}\n", sh.name,
             sh.n, sh.k, what, ms, bytes / (ms * 1e-3) / copy_bw);
    };
    mv_regs<16><<<sh.n / 16, T>>>(ws[0], x, yref, sh.n, sh.k);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(href.data(), yref, sh.n * 4, cudaMemcpyDeviceToHost));
    auto run_regs = [&](auto R_, const char* nm) {
      constexpr int R = decltype(R_)::value;
      mv_regs<R><<<sh.n / R, T>>>(ws[0], x, y, sh.n, sh.k);
      check(nm);
      report(nm, time_ms([&](int i) { mv_regs<R><<<sh.n / R, T>>>(ws[i % copies], x, y, sh.n, sh.k); }));
    };
    auto run_bulk = [&](auto R_, auto S_, auto WA_, const char* nm) {
      constexpr int R = decltype(R_)::value, S = decltype(S_)::value;
      constexpr bool WA = decltype(WA_)::value;
      size_t smem = size_t(S) * (R * 512 * 2 + 512 * 4);
      CK(cudaFuncSetAttribute(mv_bulk<R, S, WA>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      mv_bulk<R, S, WA><<<sh.n / R, T, smem>>>(ws[0], x, y, sh.n, sh.k);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      check(nm);
      report(nm, time_ms([&](int i) { mv_bulk<R, S, WA><<<sh.n / R, T, smem>>>(ws[i % copies], x, y, sh.n, sh.k); }));
    };
    using std::integral_constant;
    run_regs(integral_constant<int, 16>{}, "regs 16x512");
    run_regs(integral_constant<int, 8>{}, "regs 8x512");
    run_bulk(integral_constant<int, 16>{}, integral_constant<int, 4>{}, std::true_type{}, "bulk 16x512 S4 warp");
    run_bulk(integral_constant<int, 16>{}, integral_constant<int, 3>{}, std::true_type{}, "bulk 16x512 S3 warp");
    run_bulk(integral_constant<int, 16>{}, integral_constant<int, 4>{}, std::false_type{}, "bulk 16x512 S4 thread");
    run_bulk(integral_constant<int, 8>{}, integral_constant<int, 4>{}, std::true_type{}, "bulk 8x512 S4 warp");
    run_bulk(integral_constant<int, 8>{}, integral_constant<int, 8>{}, std::true_type{}, "bulk 8x512 S8 warp");
    run_bulk(integral_constant<int, 16>{}, integral_constant<int, 6>{}, std::true_type{}, "bulk 16x512 S6 warp");
    run_bulk(integral_constant<int, 4>{}, integral_constant<int, 8>{}, std::true_type{}, "bulk 4x512 S8 warp");
    for (auto w : ws) cudaFree(w);
    cudaFree(x); cudaFree(y); cudaFree(yref);
  }
  chain(copy_bw);
  return 0;
}
