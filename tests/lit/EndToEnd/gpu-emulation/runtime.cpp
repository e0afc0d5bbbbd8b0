// runtime.cpp: host emulation of CTAs and clusters for the gpu-emulation lit
// tests.
//
// emulate.py rewrites the nvvm ops (and the cluster inline asm) of a
// gpu-lowered kernel into calls of the emu_* functions below and runs the
// kernel once per (CTA, thread) in std::threads: emu_barrier is a barrier of
// the T threads of the caller's CTA, emu_shfl_* a butterfly exchange among the
// threads of one (emulated) warp, emu_mma_{bf16,f16}_* a warp's mma.sync and
// emu_ldmatrix_* its ldmatrix (both exchange operands through the warp's
// barrier), emu_cp_async_16 a cp.async that completes at once.
// Clusters (tile.split_k = S): the S CTAs of one cluster run together, S * T
// threads, rank k's threads in the kernel's copy k (its own shared memory,
// registered by emu_shared_region); emu_cluster_barrier is a barrier of all
// S * T threads, emu_cluster_load_f32 is mapa + ld.shared::cluster. All state
// of a CTA lives in its Cta, reached through thread_locals, so that the CTAs
// of a cluster do not share ids, barriers, warps or fragments.
#include <array>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace emu {
int threads = 1, cluster = 1;
int nctaid[2] = {1, 1};

int warp_size() { return threads < 32 ? threads : 32; }

struct Cta {
  int ctaid[2];
  int rank;  // within its cluster
  std::barrier<> bar{threads};
  std::vector<std::unique_ptr<std::barrier<>>> warps;
  std::vector<uint32_t> lanes = std::vector<uint32_t>(threads);
  std::vector<std::array<uint32_t, 6>> frags = std::vector<std::array<uint32_t, 6>>(threads);
  std::vector<const unsigned char*> rows = std::vector<const unsigned char*>(threads);
  Cta(int x, int y, int r) : ctaid{x, y}, rank(r) {
    for (int w = 0; w < threads / warp_size(); ++w) warps.push_back(std::make_unique<std::barrier<>>(warp_size()));
  }
};

thread_local int tid;
thread_local Cta* cta;
std::unique_ptr<std::barrier<>> cluster_bar;
// The shared memory of each rank's copy of the kernel, in the same order for
// every rank: region i of rank k is region i of rank 0 in CTA k.
struct Region {
  unsigned char* base;
  int64_t bytes;
};
std::vector<std::vector<Region>> shared;

uint32_t shuffle_xor(uint32_t v, int32_t offset) {
  int w = warp_size();
  std::barrier<>& bar = *cta->warps[tid / w];
  cta->lanes[tid] = v;
  bar.arrive_and_wait();
  uint32_t r = cta->lanes[(tid & ~(w - 1)) | ((tid % w) ^ offset)];
  bar.arrive_and_wait();
  return r;
}

// A bf16 (the upper half of an f32) as f32.
float bf16_to_f32(uint32_t h) {
  uint32_t bits = h << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// An IEEE f16 as f32 (subnormals, infinities and NaN included).
float f16_to_f32(uint32_t h) {
  uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float mag = exp == 0    ? std::ldexp(float(man), -24)
              : exp == 31 ? (man ? NAN : INFINITY)
                          : std::ldexp(float(man | 0x400), int(exp) - 25);
  return sign ? -mag : mag;
}

// mma.sync.m16n8k16.row.col.f32.{bf16,f16}.f32 of one warp: each lane gives
// its fragments (a: four words of two 16-bit floats, b: two, c: four f32) and
// gets element `i` of its d fragment; `decode` reads one 16-bit float.
// Products are added to c in k order, as the cpu target's mma does.
float mma_b16(const uint32_t* a, const uint32_t* b, const float* c, int i, float (*decode)(uint32_t)) {
  int w = warp_size();
  std::barrier<>& bar = *cta->warps[tid / w];
  auto& frags = cta->frags;
  for (int j = 0; j < 4; ++j) frags[tid][j] = a[j];
  frags[tid][4] = b[0];
  frags[tid][5] = b[1];
  bar.arrive_and_wait();
  int base = tid & ~(w - 1), lane = tid % w;
  int row = lane / 4 + (i >= 2 ? 8 : 0), col = (lane % 4) * 2 + i % 2;
  auto half = [&](uint32_t word, int high) { return decode(high ? word >> 16 : word & 0xffff); };
  float d = c[i];
  for (int k = 0; k < 16; ++k) {
    int ka = k % 8, khi = k / 8;
    float x = half(frags[base + (row % 8) * 4 + ka / 2][row / 8 + 2 * khi], ka % 2);
    float y = half(frags[base + col * 4 + ka / 2][4 + khi], ka % 2);
    d += x * y;
  }
  bar.arrive_and_wait();
  return d;
}

// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 of one warp: lane l
// gives the address of row l % 8 (16 bytes, 8 b16) of matrix l / 8 and gets
// word `i` of its four, matrix i's elements (r, c) and (r, c + 1) with
// r = l / 4 and c = 2 (l % 4) in its low and high half; `trans` loads the
// matrix transposed: elements (c, r) and (c + 1, r) of the rows as
// addressed. One call per word, as for mma_b16.
uint32_t ldmatrix_b16(const unsigned char* row, bool trans, int i) {
  int w = warp_size();
  std::barrier<>& bar = *cta->warps[tid / w];
  cta->rows[tid] = row;
  bar.arrive_and_wait();
  const unsigned char* const* m = &cta->rows[(tid & ~(w - 1)) + 8 * i];
  int r = (tid % w) / 4, c = 2 * ((tid % w) % 4);
  uint16_t lo, hi;
  if (trans) {
    std::memcpy(&lo, m[c] + 2 * r, 2);
    std::memcpy(&hi, m[c + 1] + 2 * r, 2);
  } else {
    std::memcpy(&lo, m[r] + 2 * c, 2);
    std::memcpy(&hi, m[r] + 2 * c + 2, 2);
  }
  bar.arrive_and_wait();
  return lo | uint32_t(hi) << 16;
}

[[noreturn]] void fail(const char* what, uint32_t addr, int rank) {
  std::fprintf(stderr, "runtime.cpp: %s (address 0x%x, rank %d, caller's rank %d)\n", what, addr, rank, cta->rank);
  std::abort();
}
}  // namespace emu

extern "C" {
// Registers `bytes` of shared memory at `base` of the kernel's copy `rank`.
void emu_shared_region(int rank, void* base, int64_t bytes) {
  if (emu::shared.size() <= static_cast<size_t>(rank)) emu::shared.resize(rank + 1);
  emu::shared[rank].push_back({static_cast<unsigned char*>(base), bytes});
}
// Runs a grid0 x grid1 grid of CTAs of T threads, in clusters of `cluster`
// consecutive CTAs along x (grid0 a multiple of it), one cluster after
// another; rank k of a cluster runs kernels[k](context).
void emu_run(int t, int cluster_ctas, int grid0, int grid1, void (*const* kernels)(void*), void* context) {
  using namespace emu;
  threads = t;
  cluster = cluster_ctas;
  nctaid[0] = grid0;
  nctaid[1] = grid1;
  if (grid0 % cluster) {
    std::fprintf(stderr, "runtime.cpp: grid0 %d is not a multiple of the cluster size %d\n", grid0, cluster);
    std::abort();
  }
  for (int y = 0; y < grid1; ++y)
    for (int x = 0; x < grid0; x += cluster) {
      std::vector<std::unique_ptr<Cta>> ctas;
      for (int r = 0; r < cluster; ++r) ctas.push_back(std::make_unique<Cta>(x + r, y, r));
      cluster_bar = std::make_unique<std::barrier<>>(cluster * threads);
      std::vector<std::thread> pool;
      for (int r = 0; r < cluster; ++r)
        for (int i = 0; i < threads; ++i)
          pool.emplace_back([i, c = ctas[r].get(), kernel = kernels[r], context] {
            tid = i;
            cta = c;
            kernel(context);
          });
      for (auto& th : pool) th.join();
    }
}
int32_t emu_tid() { return emu::tid; }
int32_t emu_ctaid_x() { return emu::cta->ctaid[0]; }
int32_t emu_ctaid_y() { return emu::cta->ctaid[1]; }
int32_t emu_ctaid_z() { return 0; }
int32_t emu_nctaid_x() { return emu::nctaid[0]; }
int32_t emu_nctaid_y() { return emu::nctaid[1]; }
int32_t emu_nctaid_z() { return 1; }
void emu_barrier() { emu::cta->bar.arrive_and_wait(); }
// barrier.cluster.arrive.release + barrier.cluster.wait.acquire.
void emu_cluster_barrier() { emu::cluster_bar->arrive_and_wait(); }
// mapa.shared::cluster.u32 + ld.shared::cluster.f32: `addr` is a 32-bit
// shared-window address of the caller's CTA (the low 32 bits of a host pointer
// into one of its rank's regions); the float at the same offset of the same
// region of CTA `rank` of the cluster.
float emu_cluster_load_f32(uint32_t addr, int32_t rank) {
  using namespace emu;
  if (rank < 0 || rank >= cluster) fail("mapa to a rank outside the cluster", addr, rank);
  const auto& mine = shared[cta->rank];
  for (size_t i = 0; i < mine.size(); ++i) {
    uint32_t offset = addr - static_cast<uint32_t>(reinterpret_cast<uintptr_t>(mine[i].base));
    if (uint64_t(offset) + 4 <= static_cast<uint64_t>(mine[i].bytes)) {
      float v;
      std::memcpy(&v, shared[rank][i].base + offset, 4);
      return v;
    }
  }
  fail("mapa of an address outside the caller's shared memory", addr, rank);
}
// cp.async.cg.shared.global [dst], [src], 16, src_bytes: the first src_bytes
// from global memory, zeros after them. It completes at once (a GPU may
// complete it at any time before the wait_group that covers it), so
// emulate.py drops commit_group and wait_group.
void emu_cp_async_16(void* dst, const void* src, int32_t src_bytes) {
  if (src_bytes < 0 || src_bytes > 16) {
    std::fprintf(stderr, "runtime.cpp: cp.async of %d source bytes into 16\n", src_bytes);
    std::abort();
  }
  std::memcpy(dst, src, src_bytes);
  std::memset(static_cast<unsigned char*>(dst) + src_bytes, 0, 16 - src_bytes);
}
#define EMU_LDMATRIX(I)                                                                                  \
  uint32_t emu_ldmatrix_row_##I(const unsigned char* row) { return emu::ldmatrix_b16(row, false, I); } \
  uint32_t emu_ldmatrix_col_##I(const unsigned char* row) { return emu::ldmatrix_b16(row, true, I); }
EMU_LDMATRIX(0)
EMU_LDMATRIX(1)
EMU_LDMATRIX(2)
EMU_LDMATRIX(3)
int32_t emu_shfl_i32(int32_t v, int32_t offset) { return static_cast<int32_t>(emu::shuffle_xor(static_cast<uint32_t>(v), offset)); }
#define EMU_MMA(T, I)                                                                                       \
  float emu_mma_##T##_##I(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1, float c0, \
                          float c1, float c2, float c3) {                                                      \
    const uint32_t a[4] = {a0, a1, a2, a3}, b[2] = {b0, b1};                                                  \
    const float c[4] = {c0, c1, c2, c3};                                                                      \
    return emu::mma_b16(a, b, c, I, emu::T##_to_f32);                                                         \
  }
EMU_MMA(bf16, 0)
EMU_MMA(bf16, 1)
EMU_MMA(bf16, 2)
EMU_MMA(bf16, 3)
EMU_MMA(f16, 0)
EMU_MMA(f16, 1)
EMU_MMA(f16, 2)
EMU_MMA(f16, 3)
float emu_shfl_f32(float v, int32_t offset) {
  uint32_t bits;
  std::memcpy(&bits, &v, 4);
  bits = emu::shuffle_xor(bits, offset);
  std::memcpy(&v, &bits, 4);
  return v;
}
// f32 -> bf16 (round to nearest even), which LLVM calls on x86. The result is
// returned in the low half of xmm0 as the __bf16 ABI wants, typed as float
// since not every host compiler has __bf16.
float __truncsfbf2(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  uint32_t h = (b & 0x7fffffffu) > 0x7f800000u ? (b >> 16) | 0x40u : (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  float r;
  std::memcpy(&r, &h, 4);
  return r;
}
}
