"""PyTorch baselines for the benchmarks (run on the GPU machine, in the same run).

usage: torch_baselines.py [FAMILY ...]   (elementwise rows row_widths transpose matmul matmul_sm80;
                                          default all but matmul_sm80, which needs DISABLE_MMA_V3=1)

Runs the same cases as bench_elementwise, bench_rows, bench_row_widths and bench_transpose through
PyTorch eager and torch.compile, and those of bench_matmul through torch.matmul (cuBLAS; for the
f8e4m3 cases torch._scaled_mm, also cuBLAS), a Triton
matmul (triton_matmul.py, when Triton imports), torch.compile of the fused-epilogue function and,
for the batch-1 and M = 16 shapes, a copy of the weight's bytes and a Triton sum of them (one read, triton_read.py). Everything is timed the same way (CUDA events
around each call, median of 30 after 5 warm-ups, each call behind an L2 reset (a read of 128 MiB
of other data, as ours) and a GPU spin of about half a millisecond so that the host's work to
submit it, e.g. torch.compile's guards, is not counted), and prints one JSON line per case and
implementation. Bytes count each byte read and written once; matmul lines also have "tflops"
(2 M N K per second).
"""
import json
import os
import sys


_l2_scratch = None


def reset_l2():
    """Puts L2 in the same state before every timed call, as bench::reset_l2 (common.h) does for
    ours: reads 128 MiB of other data with plain loads, so that L2 holds clean lines of that data
    and nothing of the benchmark's tensors."""
    global _l2_scratch
    if _l2_scratch is None:
        _l2_scratch = torch.zeros(32 << 20, dtype=torch.float32, device="cuda")
    _l2_scratch.sum()


def median_ms(fn, warmup=5, iters=30):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(iters):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        reset_l2()
        torch.cuda._sleep(1 << 20)  # cycles: the GPU waits while the host submits fn
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def report(bench, case, dtype, impl, nbytes, fn):
    ms = median_ms(fn)
    print(json.dumps({"bench": bench, "case": case, "dtype": dtype, "impl": impl, "bytes": nbytes, "ms": round(ms, 4),
                      "tbps": round(nbytes / (ms * 1e-3) / 1e12, 3)}), flush=True)


def both(bench, case, dtype, nbytes, fn, *args):
    report(bench, case, dtype, "eager", nbytes, lambda: fn(*args))
    # Static shapes: a function compiled again for another shape (torch.add for f32 then bf16, the
    # row_widths lambdas per width) would otherwise be recompiled with dynamic shapes.
    compiled = torch.compile(fn, dynamic=False)
    compiled(*args)
    report(bench, case, dtype, "compile", nbytes, lambda: compiled(*args))


def main(which):
    dev = "cuda"
    if "elementwise" in which:
        for dtype, n in ((torch.float32, 1 << 29), (torch.bfloat16, 1 << 30)):
            name = "f32" if dtype == torch.float32 else "bf16"
            x = torch.rand(n, dtype=dtype, device=dev) * 2 - 1
            y = torch.rand(n, dtype=dtype, device=dev) * 2 - 1
            nb = 3 * n * x.element_size()
            both("elementwise", "add", name, nb, torch.add, x, y)
            if dtype == torch.bfloat16:
                both("elementwise", "scale_add", name, nb, lambda a, b: a * 2.5 + b, x, y)
                def chain(a, b):
                    p, q = a.float(), b.float()
                    return (torch.tanh(p * q + 0.5) * p + torch.exp(q * -0.5) - torch.sqrt(p.abs() + 1.0)).bfloat16()
                both("elementwise", "fused_chain", name, nb, chain, x, y)
            del x, y
    if "rows" in which:
        R, C = 32768, 8192
        x = torch.rand(R, C, dtype=torch.bfloat16, device=dev) * 2 - 1
        w = torch.rand(C, dtype=torch.bfloat16, device=dev)
        b = torch.rand(C, dtype=torch.bfloat16, device=dev)
        mat = R * C * 2
        # The ceiling of the kernels that read the matrix once and write it once.
        y = torch.empty_like(x)
        both("rows", "copy", "bf16", 2 * mat, lambda t: y.copy_(t), x)
        del y
        both("rows", "row_sum", "bf16", mat + R * 4, lambda t: t.float().sum(-1), x)
        both("rows", "row_max", "bf16", mat + R * 4, lambda t: t.float().amax(-1), x)
        both("rows", "softmax", "bf16", 2 * mat, lambda t: torch.softmax(t.float(), -1).bfloat16(), x)
        both("rows", "rmsnorm", "bf16", 2 * mat + C * 2,
             lambda t: torch.nn.functional.rms_norm(t, (C,), w, 1e-6), x)
        both("rows", "layernorm", "bf16", 2 * mat + 2 * C * 2,
             lambda t: torch.nn.functional.layer_norm(t, (C,), w, b, 1e-5), x)
        del x
    if "row_widths" in which:
        for W in (1024, 4096, 16384, 32768):
            R = (1 << 28) // W
            x = torch.rand(R, W, dtype=torch.bfloat16, device=dev) * 2 - 1
            w = torch.rand(W, dtype=torch.bfloat16, device=dev)
            mat = R * W * 2
            both("row_widths", f"row_sum_w{W}", "bf16", mat + R * 4, lambda t: t.float().sum(-1), x)
            both("row_widths", f"softmax_w{W}", "bf16", 2 * mat, lambda t: torch.softmax(t.float(), -1).bfloat16(), x)
            both("row_widths", f"rmsnorm_w{W}", "bf16", 2 * mat + W * 2,
                 lambda t, W=W, w=w: torch.nn.functional.rms_norm(t, (W,), w, 1e-6), x)
            b = torch.rand(W, dtype=torch.bfloat16, device=dev)
            both("row_widths", f"layernorm_w{W}", "bf16", 2 * mat + 2 * W * 2,
                 lambda t, W=W, w=w, b=b: torch.nn.functional.layer_norm(t, (W,), w, b, 1e-5), x)
            del x
    if "transpose" in which:
        n = 16384
        x = torch.rand(n, n, dtype=torch.bfloat16, device=dev)
        both("transpose", "transpose", "bf16", 2 * n * n * 2, lambda t: t.t().contiguous(), x)
    if "matmul" in which:
        matmul(dev)
    if "matmul_sm80" in which:
        matmul_sm80(dev)


def matmul_dtype_names():
    """The matmul lines' dtype names (bench_matmul's)."""
    return {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32", torch.float8_e4m3fn: "f8e4m3"}


def matmul_dtypes():
    """BENCH_MATMUL_DTYPES as a list of dtype names (None: every dtype)."""
    names = os.environ.get("BENCH_MATMUL_DTYPES")
    return names.split(",") if names else None


def matmul_case_wanted(case):
    """Whether BENCH_MATMUL_CASES (as bench_matmul reads it) names `case`: unset, every case."""
    only = os.environ.get("BENCH_MATMUL_CASES")
    return not only or case in only


def matmul_wanted(m, n, k, dtype):
    """Whether bench_matmul runs the product mm_MxNxK in `dtype`: its case is wanted, and
    BENCH_MATMUL_DTYPES (a comma-separated list) names the dtype of a square size."""
    dtypes = matmul_dtypes()
    return matmul_case_wanted(f"mm_{m}x{n}x{k}") and not (
        dtypes and m == n == k and matmul_dtype_names()[dtype] not in dtypes)


def uniform(dev, *shape, dtype):
    """A tensor of `shape` uniform in [-1, 1) on `dev` (as bench_matmul's fill_random)."""
    return torch.rand(*shape, dtype=dtype, device=dev) * 2 - 1


def matmul_lines(case, dtype, m, n, k, impls, out_dtype=None):
    """One JSON line per (impl, fn) of `impls`: fn's median time (its first call, which autotunes
    or compiles, untimed), its TB/s (A, B and the output each once) and TFLOP/s."""
    size = torch.tensor([], dtype=dtype).element_size()
    out_size = torch.tensor([], dtype=out_dtype or dtype).element_size()
    nbytes = size * (m * k + k * n) + out_size * m * n
    for impl, fn in impls:
        fn()  # autotunes (Triton) or compiles (torch.compile) outside the timing
        ms = median_ms(fn)
        print(json.dumps({"bench": "matmul", "case": case, "dtype": matmul_dtype_names()[dtype], "impl": impl,
                          "m": m, "n": n, "k": k, "bytes": nbytes, "ms": round(ms, 4),
                          "tbps": round(nbytes / (ms * 1e-3) / 1e12, 3),
                          "tflops": round(2 * m * n * k / (ms * 1e-3) / 1e12, 2)}), flush=True)


def matmul(dev):
    """bench_matmul's cases (matmul.cpp): a is M x K and b is K x N, row-major, uniform in [-1, 1)."""
    import triton_matmul  # beside this file
    import triton_read

    triton = triton_matmul.available()
    if not triton:
        print(json.dumps({"bench": "matmul", "skipped": "triton does not import: no Triton baseline"}), flush=True)

    def rand(*shape, dtype):
        return uniform(dev, *shape, dtype=dtype)

    # f32: cuBLAS with tf32 allowed (bench_matmul's f32 products run on tf32 tensor cores).
    torch.backends.cuda.matmul.allow_tf32 = True
    shapes = [(n, n, n, dt) for n in (4096, 8192) for dt in (torch.bfloat16, torch.float16, torch.float32)]
    shapes += [(m, n, k, torch.bfloat16) for m, n, k in ((4096, 9728, 2560), (4096, 2560, 9728), (128, 151936, 2560),
                                                          (128, 2560, 9728), (1, 9728, 2560), (1, 2560, 9728), (1, 151936, 2560),
                                                          (16, 9728, 2560), (16, 2560, 9728), (16, 151936, 2560))]
    dtypes = matmul_dtypes()
    for m, n, k, dtype in shapes:
        if not matmul_wanted(m, n, k, dtype):
            continue
        a = rand(m, k, dtype=dtype)
        # As bench_matmul runs M = 16: b the transpose of an N x K weight (K-major); else row-major.
        b = rand(n, k, dtype=dtype).t() if m == 16 else rand(k, n, dtype=dtype)
        impls = [("cublas", lambda: torch.matmul(a, b))]
        if triton and dtype != torch.float32:
            impls.append(("triton", lambda: triton_matmul.matmul(a, b)))
        matmul_lines(f"mm_{m}x{n}x{k}", dtype, m, n, k, impls)
        if m <= 16:
            # The ceiling of a product that reads b once: a copy of b (its bytes read and written).
            y = torch.empty_like(b)
            ms = median_ms(lambda: y.copy_(b))
            nb = 2 * b.numel() * b.element_size()
            print(json.dumps({"bench": "matmul", "case": f"mm_{m}x{n}x{k}", "dtype": "bf16", "impl": "copy",
                              "bytes": nb, "ms": round(ms, 4), "tbps": round(nb / (ms * 1e-3) / 1e12, 3)}), flush=True)
            del y
            # The ceiling of a kernel that reads b once, timed the same way: triton_read's sum of
            # b's elements (its bytes read once), the fastest of its block sizes. At 50 MB it is
            # below the copy, whose writes partly stay in L2 when it ends.
            if triton:
                timed = []
                for blk, w in triton_read.configs():
                    partial = triton_read.read(b, blk, w)  # its partial sums, allocated once
                    timed.append((median_ms(lambda: triton_read.read(b, blk, w, partial)), f"{blk}/{w}warps"))
                ms, config = min(timed)
                nb = b.numel() * b.element_size()
                print(json.dumps({"bench": "matmul", "case": f"mm_{m}x{n}x{k}", "dtype": "bf16", "impl": "read",
                                  "config": config, "bytes": nb, "ms": round(ms, 4),
                                  "tbps": round(nb / (ms * 1e-3) / 1e12, 3)}), flush=True)
        del a, b

    # f8e4m3 at the square sizes as bench_matmul runs them: torch._scaled_mm (cuBLAS) with f32
    # per-tensor scales and a bf16 output; b column-major (the transpose of an N x K row-major
    # matrix), as _scaled_mm requires.
    for n in (4096, 8192):
        if not matmul_case_wanted(f"mm_{n}x{n}x{n}") or (dtypes and "f8e4m3" not in dtypes):
            continue
        a = rand(n, n, dtype=torch.bfloat16).to(torch.float8_e4m3fn)
        b = rand(n, n, dtype=torch.bfloat16).to(torch.float8_e4m3fn).t()
        scale_a = torch.tensor(0.5, device=dev)
        scale_b = torch.tensor(0.25, device=dev)
        impls = [("cublas", lambda: torch._scaled_mm(a, b, scale_a=scale_a, scale_b=scale_b, out_dtype=torch.bfloat16))]
        if triton:
            impls.append(("triton", lambda: triton_matmul.matmul(a, b, scale=0.125, out_dtype=torch.bfloat16)))
        matmul_lines(f"mm_{n}x{n}x{n}", torch.float8_e4m3fn, n, n, n, impls, out_dtype=torch.bfloat16)
        del a, b

    # The fused epilogue: bf16(gelu_tanh(a @ b + bias)), eager and torch.compile of that function,
    # and the Triton kernel with the same epilogue fused.
    m = n = k = 4096
    if not matmul_case_wanted(f"mm_bias_gelu_{m}x{n}x{k}"):
        return
    a, b = rand(m, k, dtype=torch.bfloat16), rand(k, n, dtype=torch.bfloat16)
    bias = rand(n, dtype=torch.bfloat16)

    def epilogue(x, w, r):
        return torch.nn.functional.gelu(x @ w + r, approximate="tanh").to(torch.bfloat16)

    compiled = torch.compile(epilogue, dynamic=False)
    impls = [("eager", lambda: epilogue(a, b, bias)), ("compile", lambda: compiled(a, b, bias))]
    if triton:
        impls.append(("triton", lambda: triton_matmul.matmul(a, b, bias, gelu=True)))
    matmul_lines(f"mm_bias_gelu_{m}x{n}x{k}", torch.bfloat16, m, n, k, impls)


def matmul_sm80(dev):
    """bench_matmul's sm_80 cases (BENCH_MATMUL_SM80=1: "<case>_sm80"): Triton's matmul with its
    Ampere lowering (cp.async + mma.sync), which this process gets only when started with
    DISABLE_MMA_V3=1 (Triton reads it when it compiles); cuBLAS beside it for scale (on an sm_90
    GPU its kernels use wgmma)."""
    import triton_matmul  # beside this file

    if os.environ.get("DISABLE_MMA_V3") != "1" or not triton_matmul.available():
        print(json.dumps({"bench": "matmul", "skipped": "matmul_sm80 needs Triton and DISABLE_MMA_V3=1"}), flush=True)
        return
    shapes = [(n, n, n, dt) for n in (4096, 8192) for dt in (torch.bfloat16, torch.float16)]
    shapes += [(4096, 9728, 2560, torch.bfloat16), (4096, 2560, 9728, torch.bfloat16)]
    for m, n, k, dtype in shapes:
        if not matmul_wanted(m, n, k, dtype):
            continue
        case = f"mm_{m}x{n}x{k}"
        a = uniform(dev, m, k, dtype=dtype)
        b = uniform(dev, k, n, dtype=dtype)
        impls = [("cublas", lambda: torch.matmul(a, b))]
        triton_matmul.matmul(a, b)  # autotunes; then its PTX says which lowering ran
        ptx = triton_matmul.last_ptx()
        print(json.dumps({"bench": "matmul", "case": case + "_sm80", "triton_config": triton_matmul.last_config()}),
              flush=True)
        if ptx is not None and "wgmma" in ptx:
            print(json.dumps({"bench": "matmul", "skipped": f"{case}: Triton used wgmma despite DISABLE_MMA_V3"}),
                  flush=True)
        else:
            impls.insert(0, ("triton", lambda: triton_matmul.matmul(a, b)))
        matmul_lines(case + "_sm80", dtype, m, n, k, impls)
        del a, b


if __name__ == "__main__":
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        sys.exit(0)
    import torch  # here, so that --help works without PyTorch; the functions above use it

    main(sys.argv[1:] or ["elementwise", "rows", "row_widths", "transpose", "matmul"])
