// read_ceiling.cu: a measurement, in plain CUDA, of the ceiling of a batch-1 product (a kernel that
// reads its weight once) when it is timed alone as bench_matmul and torch_baselines.py time it:
// behind an L2 reset and a GPU spin, CUDA events around the one launch, median of 30. Beside it a
// copy of the same bytes timed the same way (issue #22 compares the batch-1 products with that
// copy) and an empty kernel (the fixed cost of one timed launch). Sizes from 12 MiB to 1 GiB, so
// that the fixed cost and the L2 (50 MB on the H100 and H200) show: a copy of 50 MB leaves much
// of what it writes in L2 when it ends, a read has no such help. Not tessera code and not built by
// CMake (`nvcc -O3 -arch=sm_90a -std=c++20 -o read_ceiling read_ceiling.cu`, then run it on the
// GPU; it prints one JSON line per size).
#include <cuda_bf16.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "matvec_chain_common.cuh"  // CK, copyk

__global__ void spin(long long cycles) {
  long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
}

__global__ void sum_reset(const float4* p, size_t n, float* out) {
  float s = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = p[i];
    s += v.x + v.y + v.z + v.w;
  }
  if (s == 12345.f) out[0] = s;
}

static float4* g_scratch;
static float* g_sink;
static int g_sms;

// The median of 30 timed calls of f (after 5), each behind an L2 reset (128 MiB read) and a spin.
template <class F>
float timed_ms(F f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  for (int i = 0; i < 5; ++i) f();
  std::vector<float> ts;
  for (int i = 0; i < 30; ++i) {
    sum_reset<<<g_sms * 4, 512>>>(g_scratch, (128u << 20) / 16, g_sink);
    spin<<<1, 1>>>(1 << 20);
    CK(cudaEventRecord(a));
    f();
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    ts.push_back(ms);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  return ts[15];
}

// Each thread sums U chunks of 16 bytes per iteration, all loads issued before the adds.
template <int U>
__global__ void read_sum(const uint4* __restrict__ a, size_t n, float* out) {
  float s = 0;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (U - 1) * stride < n; i += U * stride) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = __ldcs(a + i + u * stride);
#pragma unroll
    for (int u = 0; u < U; ++u) s += __uint_as_float(v[u].x ^ v[u].y ^ v[u].z ^ v[u].w);
  }
  for (; i < n; i += stride) s += __uint_as_float(a[i].x);
  if (s == 12345.f) out[0] = s;
}

__global__ void empty_kernel() {}

int main() {
  CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
  CK(cudaMalloc(&g_scratch, 128u << 20));
  CK(cudaMemset(g_scratch, 0, 128u << 20));
  CK(cudaMalloc(&g_sink, 64));
  const size_t big = 1ull << 30;
  uint4 *src, *dst;
  CK(cudaMalloc(&src, big));
  CK(cudaMalloc(&dst, big));
  CK(cudaMemset(src, 0x3c, big));
  auto tbps = [](double bytes, float ms) { return bytes / (ms * 1e-3) / 1e12; };
  float em = timed_ms([&] { empty_kernel<<<g_sms, 32>>>(); });
  printf("{\"form\":\"empty_kernel\",\"us\":%.2f}\n", em * 1e3);
  const size_t mb = 1 << 20;
  for (size_t bytes : {12 * mb, 25 * mb, size_t(9728) * 2560 * 2, 100 * mb, 200 * mb, 400 * mb, 1024 * mb}) {
    size_t n = bytes / 16;
    float cm = timed_ms([&] { copyk<<<g_sms * 8, 512>>>(src, dst, n); });
    float dm = timed_ms([&] { cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice); });
    float rm = timed_ms([&] { read_sum<4><<<g_sms * 4, 512>>>(src, n, g_sink); });
    printf("{\"bytes\":%zu,\"copy_kernel_us\":%.2f,\"copy_kernel_tbps\":%.3f,\"memcpy_us\":%.2f,\"memcpy_tbps\":%.3f,"
           "\"read_us\":%.2f,\"read_tbps\":%.3f,\"read_over_memcpy\":%.3f}\n",
           bytes, cm * 1e3, tbps(2.0 * bytes, cm), dm * 1e3, tbps(2.0 * bytes, dm), rm * 1e3, tbps(bytes, rm),
           tbps(bytes, rm) / tbps(2.0 * bytes, dm));
  }
  CK(cudaDeviceSynchronize());
  return 0;
}
