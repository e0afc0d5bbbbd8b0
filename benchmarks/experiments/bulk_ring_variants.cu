// bulk_ring_variants.cu: a measurement, in plain CUDA, of the differences between tessera's bulk
// rings (issue #23) and the hand-written ring of bulk_matvec_chain.cu; not tessera code and not
// built by CMake (`nvcc -O3 -arch=sm_90a -std=c++17 -o bulk_ring_variants bulk_ring_variants.cu`,
// then run it on the GPU). Batch-1 products y = W x at 256 threads, R x 512 tiles, rings of S
// slots filled by warp 0, each product alone with its weight rotated through 400 MB (past L2),
// no programmatic launch. Variants: L2 cache hints on the copies (evict_first for W, evict_last
// for x) or none; one barrier set for a slot's W and x, or one per ring (as tessera's rings
// have); thread 0 copying every row, or lane r row r (as tessera's rings do). Ratios are to this
// program's own copy kernel.
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1);} } while (0)
constexpr int T = 256;
__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
__device__ __forceinline__ void minit(unsigned a, unsigned n) { asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(a), "r"(n)); }
__device__ __forceinline__ void mexp(unsigned a, unsigned b) { asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(a), "r"(b) : "memory"); }
__device__ __forceinline__ void marr(unsigned a) { asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(a) : "memory"); }
__device__ __forceinline__ void mwait(unsigned a, unsigned par) {
  unsigned ok = 0;
  do { asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}" : "=r"(ok) : "r"(a), "r"(par) : "memory"); } while (!ok);
}
template <bool HINT>
__device__ __forceinline__ void bulk(unsigned dst, const void* src, unsigned bytes, unsigned bar, uint64_t pol) {
  if (HINT) asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar), "l"(pol) : "memory");
  else asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src), "r"(bytes), "r"(bar) : "memory");
}
// R x 512 tiles; S slots. HINT: L2 hints; TWO: separate barrier sets for W and x; LANES: warp 0's lanes issue rows.
template <int R, int S, bool HINT, bool TWO, bool LANES>
__global__ void __launch_bounds__(T) mv(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x, float* __restrict__ y, int N, int K) {
  constexpr int BK = 512, TPR = BK / 8, RPP = T / TPR, C = R / RPP, WB = R * BK * 2, XB = BK * 4, SLOT = WB + XB;
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ __align__(8) unsigned long long full[2][S], empty[2][S];
  int t = threadIdx.x, row0 = blockIdx.x * R, col = (t % TPR) * 8, rsub = t / TPR, steps = K / BK;
  uint64_t pol = 0, keep = 0;
  if (HINT) { asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(pol)); asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(keep)); }
  if (t == 0) {
    for (int b = 0; b < 2; ++b) for (int s = 0; s < S; ++s) { minit(sa(&full[b][s]), 1); minit(sa(&empty[b][s]), T / 32); }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](int i) {  // by warp 0
    int s = i % S, lane = t & 31;
    unsigned base = sa(ring + s * SLOT), fw = sa(&full[0][s]), fx = sa(&full[TWO ? 1 : 0][s]);
    if (i >= S) {
      if (LANES || lane == 0) { mwait(sa(&empty[0][s]), ((i / S) - 1) & 1); if (TWO) mwait(sa(&empty[1][s]), ((i / S) - 1) & 1); }
    }
    if (lane == 0) { if (TWO) { mexp(fw, WB); mexp(fx, XB); } else mexp(fw, SLOT); }
    if (LANES) { __syncwarp(); if (lane < R) bulk<HINT>(base + lane * BK * 2, W + size_t(row0 + lane) * K + size_t(i) * BK, BK * 2, fw, pol); if (lane == 0) bulk<HINT>(base + WB, x + size_t(i) * BK, XB, fx, keep); }
    else if (lane == 0) { for (int r = 0; r < R; ++r) bulk<HINT>(base + r * BK * 2, W + size_t(row0 + r) * K + size_t(i) * BK, BK * 2, fw, pol); bulk<HINT>(base + WB, x + size_t(i) * BK, XB, fx, keep); }
  };
  if (t < 32) for (int i = 0; i < S - 1 && i < steps; ++i) issue(i);
  float acc[C] = {};
  for (int i = 0; i < steps; ++i) {
    int s = i % S;
    if (t < 32 && i + S - 1 < steps) issue(i + S - 1);
    mwait(sa(&full[0][s]), (i / S) & 1);
    if (TWO) mwait(sa(&full[1][s]), (i / S) & 1);
    const unsigned char* slot = ring + s * SLOT;
    float4 xa = *reinterpret_cast<const float4*>(slot + WB + col * 4), xb = *reinterpret_cast<const float4*>(slot + WB + col * 4 + 16);
    float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
    for (int c = 0; c < C; ++c) {
      uint4 w = *reinterpret_cast<const uint4*>(slot + ((rsub + RPP * c) * BK + col) * 2);
      const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&w);
#pragma unroll
      for (int q = 0; q < 4; ++q) { float2 f = __bfloat1622float2(h[q]); acc[c] += f.x * xv[2 * q] + f.y * xv[2 * q + 1]; }
    }
    __syncwarp();
    if ((t & 31) == 0) { marr(sa(&empty[0][s])); if (TWO) marr(sa(&empty[1][s])); }
  }
  __shared__ float red[T / 32][C];
  for (int c = 0; c < C; ++c) { float v = acc[c]; for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o); if ((t & 31) == 0) red[t / 32][c] = v; }
  __syncthreads();
  if (t < R) { int c = t / RPP, r0 = t % RPP; float sum = 0; for (int w = 0; w < TPR / 32; ++w) sum += red[r0 * TPR / 32 + w][c]; y[row0 + t] = sum; }
}
__global__ void copyk(const uint4* a, uint4* o, size_t n) { for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) o[i] = a[i]; }
__global__ void fill(__nv_bfloat16* w, size_t n) { for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) w[i] = __float2bfloat16(((i * 2654435761u) % 1000) / 1000.0f - 0.5f); }
template <class F> float tms(F f, int iters = 50) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b); for (int i = 0; i < 5; ++i) f(i);
  std::vector<float> ts; for (int i = 0; i < iters; ++i) { cudaEventRecord(a); f(i); cudaEventRecord(b); cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); ts.push_back(ms); }
  std::sort(ts.begin(), ts.end()); return ts[ts.size() / 2];
}
int main() {
  size_t cn = (size_t(1) << 30) / 16; uint4 *ca, *co; CK(cudaMalloc(&ca, cn * 16)); CK(cudaMalloc(&co, cn * 16)); CK(cudaMemset(ca, 1, cn * 16));
  float cms = tms([&](int) { copyk<<<132 * 8, 512>>>(ca, co, cn); }); double bw = 2.0 * cn * 16 / (cms * 1e-3); printf("copy %.3f TB/s\n", bw / 1e12); cudaFree(ca); cudaFree(co);
  struct Sh { const char* nm; int n, k; } shs[] = {{"qkv", 6144, 2560}, {"o_proj", 2560, 4096}, {"down", 2560, 9728}, {"gate", 9728, 2560}};
  for (auto sh : shs) {
    size_t el = size_t(sh.n) * sh.k; int copies = std::max<size_t>(1, (size_t(400) << 20) / (el * 2));
    std::vector<__nv_bfloat16*> ws(copies); for (auto& w : ws) { CK(cudaMalloc(&w, el * 2)); fill<<<1024, 256>>>(w, el); }
    float *x, *y; CK(cudaMalloc(&x, sh.k * 4)); CK(cudaMalloc(&y, sh.n * 4)); CK(cudaMemset(x, 0, sh.k * 4));
    auto run = [&](auto kern, int R, int S, const char* nm) {
      size_t smem = size_t(S) * (R * 1024 + 2048); CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
      float ms = tms([&](int i) { kern<<<sh.n / R, T, smem>>>(ws[i % copies], x, y, sh.n, sh.k); }); CK(cudaGetLastError());
      printf("%s %dx%d R%d S%d %s: %.3f\n", sh.nm, sh.n, sh.k, R, S, nm, el * 2.0 / (ms * 1e-3) / bw);
    };
    run(mv<8, 4, true, false, false>, 8, 4, "hint one thread0");
    run(mv<8, 4, false, false, false>, 8, 4, "nohint one thread0");
    run(mv<8, 4, false, true, false>, 8, 4, "nohint two thread0");
    run(mv<8, 4, false, true, true>, 8, 4, "nohint two lanes");
    run(mv<8, 4, false, false, true>, 8, 4, "nohint one lanes");
    run(mv<16, 4, true, false, false>, 16, 4, "hint one thread0");
    run(mv<16, 4, false, true, true>, 16, 4, "nohint two lanes");
    for (auto w : ws) cudaFree(w); cudaFree(x); cudaFree(y);
  }
}
