"""compare_decode.py: one JSON line comparing tessera's Qwen3 decode with its baselines.

usage: compare_decode.py --shape SHAPE --tessera STATS.json --baselines BASELINES.json
                         [--tessera-ttft TTFT_STATS.json]

Reads the engine's `tessera-qwen3 --stats-json` file and the `baselines.py --out` file of the
same shape (same weights and prompt, see run_decode.sh) and prints: each side's decode tokens/s,
tessera's ratio to each baseline, every fraction of the roofline (the copy bandwidth over the
weight bytes, both measured by baselines.py), the issue's target and whether it is met, the
times to first token (tessera's from the --tessera-ttft run, transformers' and torch_qwen3's from
baselines.py), and how far tessera's greedy tokens agree with transformers' eager ones (with
hf_eager's gap between its two largest logits at the first difference: near 0 is a tie that
rounding may break either way). A missing or unreadable file is named in "missing" and its
numbers are left out. Standard library only.
"""
import argparse
import json

# Issue #23's decode targets (H200, batch 1, 32-token prompt, 128 new tokens), tokens/s.
TARGETS = {"0.6B": 1000, "4B": 455, "32B": 55}
BASELINES = ("hf_eager", "hf_compile", "torch_graph")


def load(path, missing):
    if not path:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        missing.append(f"{path}: {e}")
        return None


def common_prefix(a, b):
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def compare(shape, tessera, baselines, ttft):
    line = {"shape": shape}
    rate = tessera.get("decode_tokens_per_s") if tessera else None
    if tessera:
        line.update({"tessera_tokens_per_s": rate, "target": tessera.get("target"),
                     "prompt_tokens": tessera.get("prompt_tokens"), "new_tokens": tessera.get("new_tokens"),
                     "tessera_stop": tessera.get("stop")})
    if shape in TARGETS:
        line["issue_target_tokens_per_s"] = TARGETS[shape]
        if rate:
            line["meets_target"] = rate >= TARGETS[shape]
    if baselines:
        roofline = baselines.get("roofline_tokens_per_s")
        line.update({"copy_bandwidth_gbs": baselines.get("copy_bandwidth_gbs"), "weight_bytes": baselines.get(
            "weight_bytes"), "roofline_tokens_per_s": roofline, "device_name": baselines.get("device_name")})
        if rate and roofline:
            line["tessera_fraction_of_roofline"] = round(rate / roofline, 4)
        for name in BASELINES:
            b = baselines.get(name)
            if not isinstance(b, dict):
                continue
            if "error" in b:
                line[name + "_error"] = b["error"][:300]
                continue
            line[name + "_tokens_per_s"] = b.get("tokens_per_s")
            line[name + "_fraction_of_roofline"] = b.get("fraction_of_roofline")
            if rate and b.get("tokens_per_s"):
                line["ratio_vs_" + name] = round(rate / b["tokens_per_s"], 3)
        t = baselines.get("ttft")
        if isinstance(t, dict) and "error" not in t:
            line.update({"ttft_prompt_tokens": t.get("prompt_tokens"), "ttft_hf_eager_s": t.get("hf_eager_s"),
                         "ttft_torch_prefill_s": t.get("torch_prefill_s")})
        reference = baselines.get("hf_eager", {})
        if tessera and isinstance(reference, dict) and reference.get("tokens"):
            ours, theirs = tessera.get("tokens", []), reference["tokens"]
            n = common_prefix(ours, theirs)
            line["tessera_matching_prefix_vs_hf_eager"] = n
            gaps = reference.get("top2_gaps", [])
            if n < min(len(ours), len(theirs)) and n < len(gaps):
                line["hf_eager_top2_gap_at_mismatch"] = gaps[n]
    if ttft:
        line["tessera_ttft_s"] = ttft.get("prefill_s")
        line["tessera_ttft_prompt_tokens"] = ttft.get("prompt_tokens")
    return line


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--shape", required=True)
    p.add_argument("--tessera", required=True, help="tessera-qwen3 --stats-json file")
    p.add_argument("--baselines", required=True, help="baselines.py --out file")
    p.add_argument("--tessera-ttft", help="tessera-qwen3 --stats-json file of the long-prompt run")
    args = p.parse_args()
    missing = []
    tessera = load(args.tessera, missing)
    baselines = load(args.baselines, missing)
    ttft = load(args.tessera_ttft, missing)
    line = compare(args.shape, tessera, baselines, ttft)
    if missing:
        line["missing"] = missing
    print(json.dumps(line), flush=True)


if __name__ == "__main__":
    main()
