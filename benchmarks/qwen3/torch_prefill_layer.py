"""PyTorch's time for the projections and the attention of one Qwen3-4B prefill layer at T tokens.

The baseline beside bench_prefill_layers (benchmarks/prefill_layers.cpp), which times tessera's
kernels of the same layer one by one: F.linear (cuBLAS) on the QKV, o_proj, gate, up and down
shapes, and SDPA (causal, GQA) on the attention, bf16, CUDA events around each call, the median of
50 calls after 5 warm-up calls, each behind an L2 reset (a 256 MB buffer zeroed before it, outside
the events), as bench_prefill_layers resets L2 before each of its launches.

    python3 benchmarks/qwen3/torch_prefill_layer.py [--tokens 32 128 1024]

Prints one JSON line per (case, tokens).
"""
import argparse
import json

HIDDEN, HEADS, KV, HEAD, INTER = 2560, 32, 8, 128, 9728


def median_us(fn, runs=50):
    import torch
    flush = torch.empty(256 << 20, dtype=torch.uint8, device="cuda")
    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        flush.zero_()
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    times.sort()
    return times[len(times) // 2]


def main():
    import torch
    import torch.nn.functional as F
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, nargs="+", default=[32, 128, 1024])
    args = p.parse_args()
    dev, bf16 = "cuda", torch.bfloat16
    weights = {
        "qkv": torch.randn(HEADS * HEAD + 2 * KV * HEAD, HIDDEN, device=dev, dtype=bf16),
        "o_proj": torch.randn(HIDDEN, HEADS * HEAD, device=dev, dtype=bf16),
        "gate": torch.randn(INTER, HIDDEN, device=dev, dtype=bf16),
        "up": torch.randn(INTER, HIDDEN, device=dev, dtype=bf16),
        "down": torch.randn(HIDDEN, INTER, device=dev, dtype=bf16),
    }
    for t in args.tokens:
        for name, w in weights.items():
            x = torch.randn(t, w.shape[1], device=dev, dtype=bf16)
            us = median_us(lambda: F.linear(x, w))
            flops = 2.0 * t * w.shape[0] * w.shape[1]
            print(json.dumps({"bench": "torch_prefill_layer", "case": name, "tokens": t, "us": round(us, 2),
                              "tflops": round(flops / us / 1e6, 1)}), flush=True)
        q = torch.randn(1, HEADS, t, HEAD, device=dev, dtype=bf16)
        k = torch.randn(1, KV, t, HEAD, device=dev, dtype=bf16)
        v = torch.randn(1, KV, t, HEAD, device=dev, dtype=bf16)
        us = median_us(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
        flops = 4.0 * HEAD * HEADS * (t * (t + 1) / 2)
        print(json.dumps({"bench": "torch_prefill_layer", "case": "attention", "tokens": t, "us": round(us, 2),
                          "tflops": round(flops / us / 1e6, 1)}), flush=True)


if __name__ == "__main__":
    main()
