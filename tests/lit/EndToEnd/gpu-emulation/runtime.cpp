// runtime.cpp: host emulation of one CTA for the gpu-emulation lit tests.
//
// emulate.py rewrites the nvvm ops of a gpu-lowered kernel into calls of the
// emu_* functions below and runs the kernel once per (CTA, thread) in
// std::threads: emu_barrier is a barrier of all T threads, emu_shfl_* a
// butterfly exchange among the threads of one (emulated) warp, emu_mma_bf16_*
// a warp's bf16 mma.sync.
#include <array>
#include <barrier>
#include <mutex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace emu {
int threads = 1;
int ctaid[2], nctaid[2] = {1, 1};
thread_local int tid;
std::unique_ptr<std::barrier<>> cta;
std::vector<std::unique_ptr<std::barrier<>>> warps;
std::vector<uint32_t> lanes;

int warp_size() { return threads < 32 ? threads : 32; }

uint32_t shuffle_xor(uint32_t v, int32_t offset) {
  int w = warp_size();
  std::barrier<>& bar = *warps[tid / w];
  lanes[tid] = v;
  bar.arrive_and_wait();
  uint32_t r = lanes[(tid & ~(w - 1)) | ((tid % w) ^ offset)];
  bar.arrive_and_wait();
  return r;
}

// mma.sync.m16n8k16.row.col.f32.bf16.bf16.f32 of one warp: each lane gives its
// fragments (a: four words of two bf16, b: two, c: four f32) and gets element
// `i` of its d fragment. Products are added to c in k order, as the cpu
// target's mma does.
float mma_bf16(const uint32_t* a, const uint32_t* b, const float* c, int i) {
  int w = warp_size();
  std::barrier<>& bar = *warps[tid / w];
  static std::vector<std::array<uint32_t, 6>> frags;
  {
    static std::mutex m;
    std::lock_guard<std::mutex> lock(m);
    if (frags.size() < static_cast<size_t>(threads)) frags.resize(threads);
  }
  for (int j = 0; j < 4; ++j) frags[tid][j] = a[j];
  frags[tid][4] = b[0];
  frags[tid][5] = b[1];
  bar.arrive_and_wait();
  int base = tid & ~(w - 1), lane = tid % w;
  int row = lane / 4 + (i >= 2 ? 8 : 0), col = (lane % 4) * 2 + i % 2;
  auto bf16 = [](uint32_t word, int high) {
    uint32_t bits = (high ? word >> 16 : word & 0xffff) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  };
  float d = c[i];
  for (int k = 0; k < 16; ++k) {
    int ka = k % 8, khi = k / 8;
    float x = bf16(frags[base + (row % 8) * 4 + ka / 2][row / 8 + 2 * khi], ka % 2);
    float y = bf16(frags[base + col * 4 + ka / 2][4 + khi], ka % 2);
    d += x * y;
  }
  bar.arrive_and_wait();
  return d;
}
}  // namespace emu

extern "C" {
// Runs kernel(context) for every CTA of a grid0 x grid1 grid, T threads each.
void emu_run(int t, int grid0, int grid1, void (*kernel)(void*), void* context) {
  using namespace emu;
  threads = t;
  nctaid[0] = grid0;
  nctaid[1] = grid1;
  for (int y = 0; y < grid1; ++y)
    for (int x = 0; x < grid0; ++x) {
      ctaid[0] = x;
      ctaid[1] = y;
      cta = std::make_unique<std::barrier<>>(threads);
      warps.clear();
      for (int w = 0; w < threads / warp_size(); ++w) warps.push_back(std::make_unique<std::barrier<>>(warp_size()));
      lanes.assign(threads, 0);
      std::vector<std::thread> pool;
      for (int i = 0; i < threads; ++i) pool.emplace_back([i, kernel, context] { tid = i; kernel(context); });
      for (auto& th : pool) th.join();
    }
}
int32_t emu_tid() { return emu::tid; }
int32_t emu_ctaid_x() { return emu::ctaid[0]; }
int32_t emu_ctaid_y() { return emu::ctaid[1]; }
int32_t emu_ctaid_z() { return 0; }
int32_t emu_nctaid_x() { return emu::nctaid[0]; }
int32_t emu_nctaid_y() { return emu::nctaid[1]; }
int32_t emu_nctaid_z() { return 1; }
void emu_barrier() { emu::cta->arrive_and_wait(); }
int32_t emu_shfl_i32(int32_t v, int32_t offset) { return static_cast<int32_t>(emu::shuffle_xor(static_cast<uint32_t>(v), offset)); }
#define EMU_MMA(I)                                                                                            \
  float emu_mma_bf16_##I(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1, float c0, \
                         float c1, float c2, float c3) {                                                        \
    const uint32_t a[4] = {a0, a1, a2, a3}, b[2] = {b0, b1};                                                    \
    const float c[4] = {c0, c1, c2, c3};                                                                        \
    return emu::mma_bf16(a, b, c, I);                                                                           \
  }
EMU_MMA(0)
EMU_MMA(1)
EMU_MMA(2)
EMU_MMA(3)
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
