"""PyTorch baselines for the memory-bound benchmarks (run on the GPU machine, in the same run).

Runs the same cases as bench_elementwise, bench_rows and bench_transpose through PyTorch eager and
torch.compile, timed the same way (CUDA events around each call, median of 30 after 5 warm-ups,
each call behind an L2 reset (a read of 128 MiB of other data, as ours) and a GPU spin of about
half a millisecond so that the host's work to submit it, e.g. torch.compile's guards, is not
counted), and prints one JSON line per case and implementation.
Bytes count each byte read and written once.
"""
import json
import sys

import torch


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


if __name__ == "__main__":
    main(sys.argv[1:] or ["elementwise", "rows", "row_widths", "transpose"])
