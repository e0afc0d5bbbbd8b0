// occupancy.h: how many programs of a compiled GPU kernel an SM holds at once, from the resources
// its cubin records (registers per thread, static shared memory) and its block size. Used to pick
// between block sizes after ptxas has run (launcher.cpp). The limits are those of sm_90 and
// sm_100a (64K registers, 64 warps, 32 blocks and 228 KiB of shared memory per SM).
#pragma once

#include <optional>
#include <span>

namespace tessera::detail {

struct KernelResources {
  int registers = 0;     // per thread
  int shared_bytes = 0;  // shared memory per block (static; the launcher adds the dynamic)
  int frame_bytes = 0;   // the largest stack frame of its functions (grows when ptxas spills)
};

// What the cubin records for its functions: the most registers any of them uses (EIATTR_REGCOUNT
// in the .nv.info sections), the largest stack frame (EIATTR_FRAME_SIZE) and the total static
// shared memory (.nv.shared.* sections).
// std::nullopt when the bytes are not an ELF file with a register count.
std::optional<KernelResources> cubin_resources(std::span<const char> cubin);

// Threads resident on one SM at most (64 warps on sm_90 and sm_100).
inline constexpr int kThreadsPerSm = 2048;

// Blocks of `block_size` threads that fit on one SM at once.
int resident_blocks(const KernelResources& r, int block_size);

// The inverse for registers: the most registers per thread (a multiple of 8, at most 255) with
// which `blocks` blocks of `block_size` threads fit in an SM's registers.
int register_cap(int blocks, int block_size);

}  // namespace tessera::detail
