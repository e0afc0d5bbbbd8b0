// matvec_chain_common.cuh: what the plain-CUDA matrix-vector experiments share (not tessera
// code): the error check, the block size, a bf16 x 8 multiply-add, the row reduction that ends an
// R x 512 product at 256 threads, that product from registers, a copy kernel for the copy bandwidth and a weight fill.
#pragma once
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>

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
    float4 xa = *reinterpret_cast<const float4*>(x + k0 + col);
    float4 xb = *reinterpret_cast<const float4*>(x + k0 + col + 4);
    uint4 w[C];
#pragma unroll
    for (int c = 0; c < C; ++c)
      w[c] = __ldg(reinterpret_cast<const uint4*>(W + size_t(row0 + rsub + RPP * c) * K + k0 + col));
    float xv[8] = {xa.x, xa.y, xa.z, xa.w, xb.x, xb.y, xb.z, xb.w};
#pragma unroll
    for (int c = 0; c < C; ++c) fma8(&acc[c], w[c], xv);
  }
  finish<R>(acc, y, row0, N);
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
