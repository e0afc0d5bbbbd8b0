"""A Triton kernel that reads a tensor once: the ceiling of a batch-1 product, which reads its
weight once (torch_baselines.py's matmul family times it beside the batch-1 and M = 16 cases).

read(x) sums the elements of a contiguous tensor in blocks: each program loads one block of BLOCK
elements at once (every load in flight together), adds them in f32 and stores its partial sum, so
nothing but the tensor's bytes crosses HBM. torch.sum is not that ceiling: at 50 MB it ran 20%
slower than cuBLAS's matrix-vector product of the same bytes on the H100. A copy is not either: a
copy of 50 MB leaves much of what it writes in the 50 MB L2 when it ends, and timed alone it beats
any kernel that reads 50 MB once (benchmarks/experiments/read_ceiling.cu). The block size and
warp count are the caller's; `configs()` lists those torch_baselines.py tries, keeping the fastest.
Triton is imported on first use, so that this file loads without it.
"""

_kernel = None


def configs():
    """(BLOCK, num_warps) pairs: 8-64 KiB of bf16 per program."""
    return [(4096, 4), (8192, 4), (8192, 8), (16384, 8), (32768, 8)]


def _build():
    import triton
    import triton.language as tl

    @triton.jit
    def read_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
        pid = tl.program_id(0)
        offs = pid.to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        v = tl.load(x_ptr + offs, mask=offs < n, other=0.0, eviction_policy="evict_first")
        tl.store(out_ptr + pid, tl.sum(v.to(tl.float32), axis=0))

    return read_sum


def read(x, block, warps, out=None):
    """Launches the read of `x` (contiguous, or the transpose of a contiguous matrix) in blocks of `block` elements; returns the partial sums
    (one f32 per block; `out`, if given, must hold them)."""
    import torch
    import triton

    global _kernel
    if _kernel is None:
        _kernel = _build()
    # The bytes in memory order: a transposed view (B K-major) is read as the matrix it views.
    flat = x.view(-1) if x.is_contiguous() else x.t().view(-1)
    programs = triton.cdiv(flat.numel(), block)
    if out is None:
        out = torch.empty(programs, dtype=torch.float32, device=x.device)
    _kernel[(programs,)](flat, out, flat.numel(), BLOCK=block, num_warps=warps)
    return out
