"""A tiled Triton matrix product: the second baseline of bench_matmul (torch_baselines.py's
matmul family runs it when Triton imports).

c = a @ b for row-major a: M x K and b: K x N (bf16 or f16), accumulated in f32 and stored in the
inputs' dtype; optionally with a bias row of N added and the tanh approximation of GELU applied
before the store (the fused-epilogue case). For 8-bit float inputs (f8e4m3, b any strided view,
e.g. column-major as torch._scaled_mm takes it) the sum is multiplied by a scale (the product of
per-tensor scales) and stored in the output dtype asked for (bf16). Each program computes one BLOCK_M x BLOCK_N tile of c
with a loop over K in BLOCK_K steps; programs are ordered in groups of GROUP_M row tiles so that
programs running at the same time share rows of a and columns of b in L2. Tiles past an edge are
masked (read as zero, not stored), so any M, N and K work. The tile shape, pipeline depth and warp
count are autotuned per (M, N, K) over a few configurations, including narrow ones for the
batch-1 shapes (M = 1). Triton is imported on first use, so that this file loads without it.
With DISABLE_MMA_V3=1 in the environment (read by Triton when it compiles) an sm_90 GPU runs
Triton's Ampere lowering (mma.sync) instead of wgmma: the baseline of tessera's sm_80 code.
"""

_kernel = None
_tuner = None  # the autotuned kernel, whose best_config is the last shape's choice
_last = None  # what the last launch returned: its compiled kernel, where Triton returns it


def _configs(triton):
    def cfg(bm, bn, bk, stages, warps, group=8):
        return triton.Config({"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": group},
                             num_stages=stages, num_warps=warps)

    return [
        cfg(128, 256, 64, 3, 8),
        cfg(256, 128, 64, 3, 8),
        cfg(128, 128, 64, 4, 4),
        cfg(128, 128, 32, 4, 4),
        cfg(64, 128, 64, 4, 4),
        # Few rows: a narrow M tile, wide K steps, many programs along N.
        cfg(16, 64, 256, 4, 4, group=1),
        cfg(16, 128, 128, 4, 4, group=1),
    ]


def _build():
    import triton
    import triton.language as tl

    @triton.autotune(configs=_configs(triton), key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, bias_ptr, M, N, K,
                      stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn, scale,
                      HAS_BIAS: tl.constexpr, GELU: tl.constexpr, HAS_SCALE: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        # Program -> output tile, GROUP_M row tiles at a time (column-major inside a group).
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        per_group = GROUP_M * tiles_n
        first_m = (pid // per_group) * GROUP_M
        rows = tl.minimum(tiles_m - first_m, GROUP_M)
        tile_m = first_m + (pid % per_group) % rows
        tile_n = (pid % per_group) // rows

        rm = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        a_tile = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
        b_tile = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for step in range(0, tl.cdiv(K, BLOCK_K)):
            k_left = K - step * BLOCK_K
            x = tl.load(a_tile, mask=(rm[:, None] < M) & (rk[None, :] < k_left), other=0.0)
            y = tl.load(b_tile, mask=(rk[:, None] < k_left) & (rn[None, :] < N), other=0.0)
            acc = tl.dot(x, y, acc)
            a_tile += BLOCK_K * stride_ak
            b_tile += BLOCK_K * stride_bk

        if HAS_SCALE:
            acc *= scale
        if HAS_BIAS:
            acc += tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)[None, :]
        if GELU:
            # 0.5 x (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x^3), tanh(u) = 1 - 2 / (exp(2u) + 1)
            u = 0.7978845608028654 * (acc + 0.044715 * acc * acc * acc)
            acc = 0.5 * acc * (2.0 - 2.0 / (tl.exp(2.0 * u) + 1.0))
        c_tile = c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn
        tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))

    global _tuner
    _tuner = matmul_kernel

    def launch(a, b, bias=None, gelu=False, scale=None, out_dtype=None):
        import torch

        m, k = a.shape
        k2, n = b.shape
        assert k == k2 and a.dtype == b.dtype, "matmul: a is M x K and b is K x N, of one dtype"
        c = torch.empty((m, n), device=a.device, dtype=out_dtype or a.dtype)
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
        global _last
        _last = matmul_kernel[grid](a, b, c, bias if bias is not None else c, m, n, k,
                                    a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
                                    1.0 if scale is None else float(scale),
                                    HAS_BIAS=bias is not None, GELU=gelu, HAS_SCALE=scale is not None)
        return c

    return launch


def matmul(a, b, bias=None, gelu=False, scale=None, out_dtype=None):
    """(a @ b) * scale (+ bias, then GELU-tanh, if asked) on the GPU, stored in out_dtype (default
    the inputs'); the first call per shape autotunes."""
    global _kernel
    if _kernel is None:
        _kernel = _build()
    return _kernel(a, b, bias, gelu, scale, out_dtype)


def last_ptx():
    """The PTX of the kernel the last matmul() ran, or None where Triton does not return it."""
    asm = getattr(_last, "asm", None)
    return asm.get("ptx") if asm else None


def last_config():
    """The configuration the autotuner chose for the last matmul() shape, as Triton prints it
    (tile, GROUP_M, warps, stages), or None."""
    config = getattr(_tuner, "best_config", None)
    return str(config) if config is not None else None


def available():
    """Whether Triton imports (the baseline is skipped otherwise)."""
    try:
        import triton  # noqa: F401
        import triton.language  # noqa: F401
    except Exception:
        return False
    return True
