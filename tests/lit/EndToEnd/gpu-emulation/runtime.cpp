// runtime.cpp: host emulation of one CTA for the gpu-emulation lit tests.
//
// emulate.py rewrites the nvvm ops of a gpu-lowered kernel into calls of the
// emu_* functions below and runs the kernel once per (CTA, thread) in
// std::threads: emu_barrier is a barrier of all T threads, emu_shfl_* a
// butterfly exchange among the threads of one (emulated) warp.
#include <barrier>
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
