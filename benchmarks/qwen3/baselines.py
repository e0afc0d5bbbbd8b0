"""baselines.py: the decode baselines that tessera's Qwen3 engine is measured against (issue #23).

usage: baselines.py --shape 0.6B|1.7B|4B|8B|14B|32B|tiny [--device cuda|cpu] [--prompt-tokens 32]
                    [--new-tokens 128] [--ttft-tokens 1024] [--weights-seed 0] [--layers N]
                    [--prompt-ids-json FILE] [--runs 3] [--skip hf_eager,hf_compile,torch_graph,ttft]
                    [--copy-bytes 2e9] [--compile-mode reduce-overhead] [--out FILE]

On one set of weights -- the engine's synthetic weights of the preset (synthetic_weights.py, the
same bits as `tessera-qwen3 --synthetic SHAPE --weights-seed S`), made directly in device memory
-- at batch 1, it runs a prompt (random ids, or the engine's from --prompt-ids-json, a
`tessera-qwen3 --stats-json` file) and then greedy decoding through:
  hf_eager     transformers' Qwen3ForCausalLM, eager, a manual loop over its DynamicCache;
  hf_compile   the same with a StaticCache and the decode step under torch.compile (mode
               reduce-overhead: CUDA graphs); a failure is reported in the JSON, not raised;
  torch_graph  the plain PyTorch step of torch_qwen3.py (fused QKV and gate/up, static KV
               cache) captured as one CUDA graph and replayed per token (eager on the CPU);
and measures the copy bandwidth of the device (a device-to-device copy of --copy-bytes, best of
10, bytes read + written), whose ratio to the weight bytes is the roofline (tokens/s).

Decode tokens/s counts as the engine does (apps/qwen3/generate.h): of the --new-tokens new
tokens, the first comes from the prompt's pass (time to first token); the rate is the remaining
new-tokens - 1 steps over their time (host clock around them, device synchronized before and
after). Each implementation runs once untimed (warm-up; compilation for hf_compile), then
--runs times; the best run is reported, with all of them. Time to first token for a prompt of
--ttft-tokens random ids: transformers eager (a fresh DynamicCache, the prompt's forward with
logits of the last position only, argmax, read on the host) and torch_qwen3's prefill.
Greedy tokens of hf_compile and torch_graph are compared with hf_eager's: the length of the common
prefix, and at the first difference the gap between hf_eager's two largest logits there. Exact
agreement is not guaranteed: logits are bf16 (ties are common on small shapes) and different
kernels round differently, so a tie or near tie may break the other way. So each is also run
teacher-forced on hf_eager's tokens ("teacher_forced": the largest logit difference from
hf_eager's over all steps, beside the largest |logit|, and the steps whose argmax agrees).

Prints one JSON object to stdout (and to --out FILE). Exit status 0, or 1 when hf_eager or
torch_graph failed (their errors are in the JSON too). Needs torch and transformers (5.x).
"""
import argparse
import json
import math
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

IMPLEMENTATIONS = ("hf_eager", "hf_compile", "torch_graph", "ttft")


def parse_args(argv):
    from qwen3_presets import PRESETS
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", required=True, choices=list(PRESETS), help="the preset (apps/qwen3/model_presets.cpp)")
    p.add_argument("--device", default="cuda", help="cuda (default) or cpu (the smoke test)")
    p.add_argument("--layers", type=int, default=0, help="keep the widths, use this many layers (0: the preset's)")
    p.add_argument("--weights-seed", type=int, default=0, help="seed of the synthetic weights (as the engine's)")
    p.add_argument("--prompt-tokens", type=int, default=32, help="random prompt length (default 32)")
    p.add_argument("--prompt-seed", type=int, default=0, help="seed of the random prompt ids")
    p.add_argument("--prompt-ids-json", help="take the prompt from this JSON's 'prompt_ids' (tessera-qwen3 "
                   "--stats-json) instead of random ids")
    p.add_argument("--new-tokens", type=int, default=128, help="new tokens, the first from the prompt (default 128)")
    p.add_argument("--ttft-tokens", type=int, default=1024, help="prompt length of the time to first token")
    p.add_argument("--runs", type=int, default=3, help="timed runs of each implementation (default 3)")
    p.add_argument("--skip", default="", help="comma-separated: " + ",".join(IMPLEMENTATIONS))
    p.add_argument("--copy-bytes", type=float, default=2e9, help="bytes of the bandwidth copy (default 2e9)")
    p.add_argument("--compile-mode", default="reduce-overhead", help="torch.compile mode of hf_compile")
    p.add_argument("--out", help="also write the JSON object to this file")
    args = p.parse_args(argv)
    args.skip = {s for s in args.skip.split(",") if s}
    if args.skip - set(IMPLEMENTATIONS):
        p.error(f"--skip: unknown {sorted(args.skip - set(IMPLEMENTATIONS))} (known: {', '.join(IMPLEMENTATIONS)})")
    if args.new_tokens < 2 or args.runs < 1 or args.prompt_tokens < 1 or args.ttft_tokens < 1:
        p.error("--new-tokens must be at least 2, --runs, --prompt-tokens and --ttft-tokens at least 1")
    return args


def synchronize(device):
    import torch
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed(device, fn):
    """(seconds, fn's result): host clock, device synchronized before and after."""
    synchronize(device)
    start = time.perf_counter()
    out = fn()
    synchronize(device)
    return time.perf_counter() - start, out


def copy_bandwidth(device, nbytes):
    """Bytes read + written per second by the best of 10 copies of `nbytes` on the device."""
    import torch
    src = torch.ones(int(nbytes), dtype=torch.uint8, device=device)
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = math.inf
    for _ in range(10):
        if device.type == "cuda":
            begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            begin.record()
            dst.copy_(src)
            end.record()
            end.synchronize()
            best = min(best, begin.elapsed_time(end) * 1e-3)
        else:
            best = min(best, timed(device, lambda: dst.copy_(src))[0])
    return 2 * src.numel() / best


def prompt_ids(args, vocab):
    """The prompt's ids: the engine's (--prompt-ids-json) or --prompt-tokens random ones."""
    import torch
    if args.prompt_ids_json:
        with open(args.prompt_ids_json) as f:
            ids = json.load(f).get("prompt_ids")
        if not ids or not all(isinstance(i, int) and 0 <= i < vocab for i in ids):
            raise ValueError(f"{args.prompt_ids_json}: expected 'prompt_ids', a non-empty list of ids below {vocab}")
        return ids
    generator = torch.Generator().manual_seed(args.prompt_seed)
    return torch.randint(0, vocab, (args.prompt_tokens,), generator=generator).tolist()


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def best_of(device, runs, run, warm_up=None):
    """Calls warm_up() (default run) once untimed, then run() (-> (decode seconds, tokens)) `runs`
    times; returns (warm-up seconds, best seconds, all seconds, the best run's tokens)."""
    warm_s, _ = timed(device, warm_up or run)
    results = [run() for _ in range(runs)]
    best = min(results, key=lambda r: r[0])
    return warm_s, best[0], [round(r[0], 6) for r in results], best[1]


def hf_eager(model, device, prompt, new_tokens, runs, reference):
    """Also returns, from the untimed warm-up run, the gap between the two largest logits that chose
    each token (bf16 values): 0 is a tie, which any other rounding may break the other way. Fills
    `reference` with that run's tokens and float32 logits, for teacher_forced()."""
    import torch
    from transformers import DynamicCache
    logits = reference.setdefault("logits", [])

    def run(record=False):
        cache = DynamicCache(config=model.config)
        out = model(input_ids=prompt[None], past_key_values=cache, use_cache=True, logits_to_keep=1)
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        tokens = [token]
        if record:
            logits.append(out.logits[0, -1].float())

        def decode():
            nonlocal token
            for _ in range(new_tokens - 1):
                out = model(input_ids=token, past_key_values=cache, use_cache=True, logits_to_keep=1)
                token = out.logits[:, -1].argmax(-1, keepdim=True)
                tokens.append(token)
                if record:
                    logits.append(out.logits[0, -1].float())
        seconds, _ = timed(device, decode)
        return seconds, torch.cat(tokens, dim=1)[0].tolist()

    def warm_up():
        reference["tokens"] = run(record=True)[1]
    _, seconds, all_s, tokens = best_of(device, runs, run, warm_up=warm_up)
    gaps = torch.stack([row.topk(2).values for row in logits]).diff(dim=1).abs()[:, 0]
    return {"decode_s": seconds, "runs_s": all_s, "tokens": tokens, "top2_gaps": [round(g, 5) for g in gaps.tolist()]}


def teacher_forced(reference, first_logits, step):
    """Feeds hf_eager's tokens one by one to step(token id) -> logits [1, vocab] after a prefill
    whose last logits are `first_logits`, and compares every step's logits with hf_eager's: a
    check of the arithmetic that greedy tokens cannot give past a tie. Returns the largest
    absolute difference, the largest |logit| for scale, and at how many steps the argmax agrees."""
    ref_tokens, ref_logits = reference["tokens"], reference["logits"]
    diff, agree = 0.0, 0
    for i, want in enumerate(ref_logits):
        got = (first_logits if i == 0 else step(ref_tokens[i - 1]))[0].float()
        diff = max(diff, (got - want).abs().max().item())
        agree += int(got.argmax().item() == want.argmax().item())
    scale = max(r.abs().max().item() for r in ref_logits)
    return {"max_abs_logit_diff": round(diff, 5), "max_abs_logit": round(scale, 5), "argmax_agree": agree,
            "steps": len(ref_logits)}


def hf_compile(model, device, prompt, new_tokens, runs, mode, reference):
    import torch
    from transformers import StaticCache
    cache = StaticCache(config=model.config, max_cache_len=prompt.numel() + new_tokens)
    fullgraph = True
    compiled = torch.compile(model.forward, mode=mode, fullgraph=True)

    def run():
        cache.reset()
        out = model(input_ids=prompt[None], past_key_values=cache, use_cache=True, logits_to_keep=1)  # eager prefill
        token = out.logits[:, -1].argmax(-1, keepdim=True)
        tokens = [token]

        def decode():
            nonlocal token
            for _ in range(new_tokens - 1):
                torch.compiler.cudagraph_mark_step_begin()
                out = compiled(input_ids=token, past_key_values=cache, use_cache=True, logits_to_keep=1)
                token = out.logits[:, -1].argmax(-1, keepdim=True)
                tokens.append(token)
        seconds, _ = timed(device, decode)
        return seconds, torch.cat(tokens, dim=1)[0].tolist()

    first_error = None
    try:
        compile_s, seconds, all_s, tokens = best_of(device, runs, run)
    except Exception as e:  # a graph break: try again without fullgraph, and say so
        first_error = f"fullgraph=True: {type(e).__name__}: {e}"[:2000]
        torch._dynamo.reset()
        fullgraph = False
        compiled = torch.compile(model.forward, mode=mode)
        compile_s, seconds, all_s, tokens = best_of(device, runs, run)
    result = {"decode_s": seconds, "runs_s": all_s, "tokens": tokens, "warm_up_s": compile_s, "mode": mode,
              "fullgraph": fullgraph}
    if reference.get("logits"):
        cache.reset()
        first = model(input_ids=prompt[None], past_key_values=cache, use_cache=True, logits_to_keep=1).logits[:, -1]

        def step(token):
            torch.compiler.cudagraph_mark_step_begin()
            ids = torch.tensor([[token]], device=device)
            out = compiled(input_ids=ids, past_key_values=cache, use_cache=True, logits_to_keep=1)
            return out.logits[:, -1].clone()
        result["teacher_forced"] = teacher_forced(reference, first, step)
    if first_error:
        result["fullgraph_error"] = first_error
    return result


def torch_graph(shape, weights, device, prompt, new_tokens, runs, reference):
    from torch_qwen3 import TorchQwen3
    decoder = TorchQwen3(shape, weights, prompt.numel() + new_tokens, device)
    decoder.capture()

    def run():
        decoder.prefill(prompt)
        seconds, _ = timed(device, lambda: decoder.decode(new_tokens - 1))
        return seconds, decoder.tokens(prompt.numel(), new_tokens)

    _, seconds, all_s, tokens = best_of(device, runs, run)
    result = {"decode_s": seconds, "runs_s": all_s, "tokens": tokens, "cuda_graph": decoder.graph is not None}
    if reference.get("logits"):
        decoder.prefill(prompt)

        def step(token):
            decoder.token.fill_(token)
            decoder.decode(1)
            return decoder.logits
        result["teacher_forced"] = teacher_forced(reference, decoder.logits, step)
    return result


def ttft(model, shape, weights, device, length, runs, vocab, seed):
    """Time to first token for a prompt of `length` random ids: transformers eager, torch_qwen3."""
    import torch
    from transformers import DynamicCache
    from torch_qwen3 import TorchQwen3
    generator = torch.Generator().manual_seed(seed + 1)
    prompt = torch.randint(0, vocab, (length,), generator=generator).to(device)

    def hf():
        out = model(input_ids=prompt[None], past_key_values=DynamicCache(config=model.config), use_cache=True,
                    logits_to_keep=1)
        return out.logits[0, -1].argmax().item()
    decoder = TorchQwen3(shape, weights, length, device)

    def ours():
        return decoder.prefill(prompt).item()

    result = {"prompt_tokens": length}
    for name, fn in (("hf_eager", hf), ("torch_prefill", ours)):
        fn()
        times = [timed(device, fn) for _ in range(runs)]
        result[name + "_s"] = min(t for t, _ in times)
        result[name + "_first_token"] = times[0][1]
    return result


def attempt(result, name, fn):
    """result[name] = fn(), or {"error": ...} (with the traceback on stderr) if it raises."""
    try:
        result[name] = fn()
    except Exception as e:
        traceback.print_exc()
        result[name] = {"error": f"{type(e).__name__}: {e}"[:2000]}


def main(argv):
    args = parse_args(argv)
    import torch
    import transformers
    from hf_qwen3 import build
    from qwen3_presets import preset
    from synthetic_weights import check_generator

    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("baselines.py: --device cuda but torch sees no CUDA device (use --device cpu)")
    shape = preset(args.shape, args.layers)
    check_generator(device)
    ids = prompt_ids(args, shape.vocab)
    prompt = torch.tensor(ids, dtype=torch.int64, device=device)
    n = args.new_tokens
    result = {"shape": args.shape, "layers": shape.layers, "device": str(device),
              "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
              "torch": torch.__version__, "transformers": transformers.__version__, "dtype": "bfloat16",
              "weights_seed": args.weights_seed, "weight_bytes": shape.weight_bytes(), "prompt_tokens": len(ids),
              "new_tokens": n, "decode_steps": n - 1}

    build_s, (model, weights) = timed(device, lambda: build(shape, device, args.weights_seed))
    result["build_s"] = round(build_s, 3)
    result["attn_implementation"] = model.config._attn_implementation
    bandwidth = copy_bandwidth(device, args.copy_bytes)
    roofline = bandwidth / shape.weight_bytes()
    result.update({"copy_bytes": int(args.copy_bytes), "copy_bandwidth_gbs": round(bandwidth / 1e9, 2),
                   "roofline_tokens_per_s": round(roofline, 2)})

    reference = {}  # hf_eager's tokens and logits, for the others' teacher-forced comparison
    with torch.inference_mode():
        if "hf_eager" not in args.skip:
            attempt(result, "hf_eager", lambda: hf_eager(model, device, prompt, n, args.runs, reference))
        if "torch_graph" not in args.skip:
            attempt(result, "torch_graph", lambda: torch_graph(shape, weights, device, prompt, n, args.runs, reference))
        if "hf_compile" not in args.skip:
            attempt(result, "hf_compile",
                    lambda: hf_compile(model, device, prompt, n, args.runs, args.compile_mode, reference))
        reference.clear()
        if "ttft" not in args.skip:
            attempt(result, "ttft", lambda: ttft(model, shape, weights, device, args.ttft_tokens, args.runs,
                                                 shape.vocab, args.prompt_seed))

    reference = result.get("hf_eager", {}).get("tokens")
    for name in ("hf_eager", "hf_compile", "torch_graph"):
        r = result.get(name)
        if not r or "error" in r:
            continue
        r["tokens_per_s"] = round((n - 1) / r["decode_s"], 3)
        r["fraction_of_roofline"] = round(r["tokens_per_s"] / roofline, 4)
        if reference and name != "hf_eager":
            r["matching_prefix"] = common_prefix(reference, r["tokens"])
            r["matches_hf_eager"] = r["matching_prefix"] == n
            if r["matching_prefix"] < n:  # a tie (gap 0) there explains a divergence; a large gap does not
                r["hf_eager_top2_gap_at_mismatch"] = result["hf_eager"]["top2_gaps"][r["matching_prefix"]]
    text = json.dumps(result)
    print(text, flush=True)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    failed = [name for name in ("hf_eager", "torch_graph") if "error" in result.get(name, {})]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
