"""Joins tessera's benchmark JSON lines with the PyTorch baselines of the same run.

usage: compare.py TESSERA.jsonl TORCH.jsonl [CHART.png]
Prints, per case, tessera's TB/s, eager's, torch.compile's and the ratio to the best of them, as
JSON lines; with a third argument draws a bar chart (needs matplotlib, which the development
machine has; the GPU machine may not). A case measured in several rounds (run_on_gpu.sh alternates
the two sides) counts with each side's median TB/s over the rounds; the per-round numbers are
printed beside it.
"""
import json
import statistics
import sys


def load(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def rounds_by(rows, key):
    """TB/s per key, in the order of the rounds."""
    out = {}
    for r in rows:
        out.setdefault(key(r), []).append(r["tbps"])
    return out


def main():
    ours = rounds_by([r for r in load(sys.argv[1]) if "tbps" in r],
                     lambda r: (r["bench"], r["case"], r.get("baseline", r["case"]), r["dtype"]))
    base = rounds_by(load(sys.argv[2]), lambda b: (b["bench"], b["case"], b["dtype"], b["impl"]))
    out = []
    for (bench, case, baseline, dtype), tbps in ours.items():
        theirs = {impl: v for (b, c, d, impl), v in base.items() if (b, c, d) == (bench, baseline, dtype)}
        peers = {impl: statistics.median(v) for impl, v in theirs.items()}
        mine = statistics.median(tbps)
        best = max(peers.values()) if peers else None
        row = {"case": f"{case} {dtype}", "tessera_tbps": round(mine, 3), **{f"{k}_tbps": round(v, 3) for k, v in peers.items()},
               "ratio_to_best": round(mine / best, 3) if best else None}
        if len(tbps) > 1:
            row["rounds"] = {"tessera": tbps, **theirs}
        out.append(row)
        print(json.dumps(row))
    if len(sys.argv) > 3:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [o["case"] for o in out]
        series = [("tessera", "tessera_tbps"), ("PyTorch eager", "eager_tbps"), ("torch.compile", "compile_tbps")]
        fig, ax = plt.subplots(figsize=(max(6, len(names) * 1.3), 4))
        width = 0.27
        for i, (label, k) in enumerate(series):
            ax.bar([x + (i - 1) * width for x in range(len(names))], [o.get(k) or 0 for o in out], width, label=label)
        ax.set_xticks(range(len(names)))
        ax.set_xticklabels(names, rotation=20, ha="right")
        ax.set_ylabel("TB/s (each byte read and written once)")
        ax.set_title("Memory-bound kernels on H200")
        ax.legend()
        fig.tight_layout()
        fig.savefig(sys.argv[3], dpi=120)


if __name__ == "__main__":
    main()
