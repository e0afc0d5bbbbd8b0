// occupancy.h: how many programs of a compiled GPU kernel an SM holds at once, from the resources
// its cubin records (registers per thread, static shared memory) and its block size. Used to pick
// between block sizes after ptxas has run (variant_search.cpp). The SM's limits (registers, threads,
// blocks, shared memory) are those of the target's architecture (gpu_arch.h).
#pragma once

#include <optional>
#include <span>

#include "driver/gpu_arch.h"

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

// Blocks of `block_size` threads that fit on one SM of `sm` at once.
int resident_blocks(const GpuArch& sm, const KernelResources& r, int block_size);

// The inverse for registers: the most registers per thread (a multiple of 8, at most 255) with
// which `blocks` blocks of `block_size` threads fit in an SM's registers.
int register_cap(const GpuArch& sm, int blocks, int block_size);

}  // namespace tessera::detail
