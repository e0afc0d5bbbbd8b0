// matvec_chain_common.cuh: what the plain-CUDA matrix-vector experiments share (not tessera
// code): the error check, the block size, a bf16 x 8 multiply-add, a step's loads and products, the
// row reduction that ends an R x 512 product at 256 threads, that product from registers, an
// attention stand-in, a chain timer, a copy kernel, a weight fill, the copy bandwidth, the 4B
// chain's weights and buffers, what a chain experiment starts with, a programmatic (cluster)
// launch and one layer of the chain.
#pragma once
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

#define CK(x) do { cudaError_t ck_err_ = (x); if (ck_err_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(ck_err_)); exit(1);} } while (0)

constexpr int T = 256;

__device__ __forceinline__ void fma8(float* acc, uint4 w, const float* xv) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&w);
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    float2 f = __bfloat1622float2(h[i]);
    *acc += f.x * xv[2 * i] + f.y * xv[2 * i + 1];
  }
}

template <int R>
__device__ __forceinline__ void finish(float* acc, float* y, int row0, int N) {
  // thread t: rows (t / 64) + 4 c ... generalized: rows_per_pass = T*8/BK
  __shared__ float red[T / 32][R];
  constexpr int BK = 512, TPR = BK / 8;  // threads per row
  constexpr int RPP = T / TPR;            // rows per pass
  int t = threadIdx.x;
#pragma unroll
  for (int c = 0; c < R / RPP; ++c) {
    float v = acc[c];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);
    if ((t & 31) == 0) red[t / 32][c] = v;
  }
  __syncthreads();
  if (t < R) {
    // row r = r0 + RPP*c where r0 = t/TPR: warps of r0 are r0*TPR/32 .. +TPR/32
    int c = t / RPP, r0 = t % RPP;
    float s = 0;
    for (int w = 0; w < TPR / 32; ++w) s += red[r0 * TPR / 32 + w][c];
    if (row0 + t < N) y[row0 + t] = s;
  }
}

// acc[c] += this thread's weight chunk w[c] (8 bf16) times the 8 vector elements at xs.
template <int C>
__device__ __forceinline__ void step_products(float* acc, const uint4* w, const float* xs) {
  float4 xa = *reinterpret_cast<const float4*>(xs);
  float4 xb = *reinterpret_cast<const float4*>(xs + 4);
  float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
  for (int c = 0; c < C; ++c) fma8(&acc[c], w[c], xv);
}

// This thread's C weight chunks of the step at column k0: rows row0 + rsub + RPP c, columns col
// to col + 7.
template <int C, int RPP>
__device__ __forceinline__ void load_step(uint4* w, const __nv_bfloat16* __restrict__ W, int row0, int rsub, int K,
                                          int k0, int col) {
#pragma unroll
  for (int c = 0; c < C; ++c)
    w[c] = __ldg(reinterpret_cast<const uint4*>(W + size_t(row0 + rsub + RPP * c) * K + k0 + col));
}

// y[row0 .. row0 + R) = W x for the R rows of this CTA (blockIdx.x), from registers: chunk c of
// thread t is element (c*T + t)*8 of the R x 512 tile, the layout tessera uses at 256 threads.
template <int R>
__device__ __forceinline__ void rows_from_registers(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                                    float* __restrict__ y, int N, int K) {
  constexpr int BK = 512, TPR = BK / 8, RPP = T / TPR, C = R / RPP;
  int t = threadIdx.x, row0 = blockIdx.x * R;
  int col = (t % TPR) * 8, rsub = t / TPR;
  float acc[C] = {};
#pragma unroll 2
  for (int k0 = 0; k0 < K; k0 += BK) {
    uint4 w[C];
    load_step<C, RPP>(w, W, row0, rsub, K, k0, col);
    step_products<C>(acc, w, x + k0 + col);
  }
  finish<R>(acc, y, row0, N);
}

// A small dependent kernel (an attention stand-in in the chains): `grid` CTAs each reading
// `iters` x 4 KiB of a buffer (as a split reads K/V) and writing one value.
__global__ void __launch_bounds__(T) small(const __nv_bfloat16* __restrict__ W, const float* __restrict__ x,
                                           float* __restrict__ y, int N, int iters) {
  asm volatile("griddepcontrol.launch_dependents;\n griddepcontrol.wait;" ::: "memory");
  float a = x[threadIdx.x];
  for (int i = 0; i < iters; ++i) {
    uint4 v = __ldg(reinterpret_cast<const uint4*>(W) + (size_t(blockIdx.x) * iters + i) * T + threadIdx.x);
    a += __uint_as_float(v.x) * 1e-30f;
  }
  for (int o = 16; o > 0; o >>= 1) a += __shfl_xor_sync(0xffffffff, a, o);
  if (threadIdx.x == 0) y[blockIdx.x] = a;
}

// The median time of `iters` calls of f() (after 3 untimed), by events, in ms.
template <class F>
float chain_ms(F f, int iters = 20) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) f();
  std::vector<float> ts;
  for (int i = 0; i < iters; ++i) {
    cudaEventRecord(a);
    f();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    ts.push_back(ms);
  }
  std::sort(ts.begin(), ts.end());
  return ts[ts.size() / 2];
}

__global__ void copyk(const uint4* a, uint4* o, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) o[i] = a[i];
}

__global__ void fill(__nv_bfloat16* w, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    unsigned h = (unsigned)(i * 2654435761u) ^ seed;
    h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    w[i] = __float2bfloat16(((int)(h % 2048) - 1024) / 1024.0f);
  }
}

// The copy bandwidth of a 1 GiB copy (bytes read and written per second), printed.
inline double copy_bandwidth() {
  size_t cn = (size_t(1) << 30) / 16;
  uint4 *ca, *co;
  CK(cudaMalloc(&ca, cn * 16));
  CK(cudaMalloc(&co, cn * 16));
  CK(cudaMemset(ca, 1, cn * 16));
  float cms = chain_ms([&] { copyk<<<132 * 8, 512>>>(ca, co, cn); });
  double copy_bw = 2.0 * cn * 16 / (cms * 1e-3);
  printf("copy %.3f TB/s\n", copy_bw / 1e12);
  CK(cudaFree(ca));
  CK(cudaFree(co));
  return copy_bw;
}

// The five products of each of 36 Qwen3-4B layers (QKV, o_proj, gate, up, down), distinct
// weights filled with values: w[l * 5 + m] is product m of layer l, `total` their bytes.
struct ChainWeights {
  static constexpr int L = 36;
  struct Shape { int n, k; };
  static constexpr Shape ms[5] = {{6144, 2560}, {2560, 4096}, {9728, 2560}, {9728, 2560}, {2560, 9728}};
  std::vector<__nv_bfloat16*> w = std::vector<__nv_bfloat16*>(L * 5);
  double total = 0;
  ChainWeights() {
    for (int l = 0; l < L; ++l)
      for (int m = 0; m < 5; ++m) {
        size_t e = size_t(ms[m].n) * ms[m].k;
        CK(cudaMalloc(&w[l * 5 + m], e * 2));
        fill<<<1024, 256>>>(w[l * 5 + m], e, l * 5 + m);
        total += e * 2.0;
      }
  }
};

// A programmatic launch of `grid` programs of `cluster` CTAs each (T threads).
template <class Kern, class... A>
void launch_cluster(Kern k, int grid, int cluster, A... a) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid * cluster);
  cfg.blockDim = dim3(T);
  cfg.stream = 0;
  cudaLaunchAttribute attr[2];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  attr[1].id = cudaLaunchAttributeClusterDimension;
  attr[1].val.clusterDim.x = cluster;
  attr[1].val.clusterDim.y = 1;
  attr[1].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = cluster > 1 ? 2 : 1;
  CK(cudaLaunchKernelEx(&cfg, k, a...));
}
template <class Kern, class... A>
void launch(Kern k, int grid, A... a) {
  launch_cluster(k, grid, 1, a...);
}

// The chain's other buffers: the stand-ins' KV bytes, the vector x (zeros) and the output y.
struct ChainBuffers {
  __nv_bfloat16* kv = nullptr;
  float *x = nullptr, *y = nullptr;
  ChainBuffers() {
    CK(cudaMalloc(&kv, size_t(64) << 20));
    CK(cudaMemset(kv, 0, size_t(64) << 20));
    CK(cudaMalloc(&x, 16384 * 4));
    CK(cudaMalloc(&y, 16384 * 4));
    CK(cudaMemset(x, 0, 16384 * 4));
  }
};

// What a chain experiment starts with: the copy bandwidth, the 4B chain's weights and buffers, and
// a printed line with the weights' bytes and their time at that bandwidth.
struct ChainSetup {
  const double copy_bw = copy_bandwidth();
  const ChainWeights chain;
  const ChainBuffers buffers;
  const double total = chain.total;
  ChainSetup() { printf("chain %.2f GB: weights at the copy bandwidth %.3f ms\n", total / 1e9, total / copy_bw * 1e3); }
};

// Layer l of the chain: QKV at 16 rows (k16), the three attention stand-ins where `attn`
// (qk_norm: 8 CTAs, split: 24 CTAs x 2 chunks of K and V, combine: 8 CTAs), o_proj and down as
// `kn` at `rows_n` rows in clusters of `cluster`, gate and up at 8 rows (k8); only product
// `only` (0-4 in that order) where it is not -1.
template <class K16, class K8, class KN>
void launch_layer(const ChainWeights& c, const ChainBuffers& b, int l, int only, bool attn, K16 k16, K8 k8, KN kn,
                  int rows_n, int cluster) {
  auto w = [&](int m) { return (const __nv_bfloat16*)c.w[l * 5 + m]; };
  auto wanted = [&](int m) { return only < 0 || only == m; };
  const float* x = b.x;
  if (wanted(0)) launch(k16, 6144 / 16, w(0), x, b.y, 6144, 2560);
  if (attn) {
    launch(small, 8, (const __nv_bfloat16*)b.kv, x, b.y, 8, 1);
    launch(small, 24, (const __nv_bfloat16*)b.kv, x, b.y, 24, 8);
    launch(small, 8, (const __nv_bfloat16*)b.kv, x, b.y, 8, 2);
  }
  if (wanted(1)) launch_cluster(kn, 2560 / rows_n, cluster, w(1), x, b.y, 2560, 4096);
  if (wanted(2)) launch(k8, 9728 / 8, w(2), x, b.y, 9728, 2560);
  if (wanted(3)) launch(k8, 9728 / 8, w(3), x, b.y, 9728, 2560);
  if (wanted(4)) launch_cluster(kn, 2560 / rows_n, cluster, w(4), x, b.y, 2560, 9728);
}
