"""Joins tessera's benchmark JSON lines with the PyTorch baselines of the same run.

usage: compare.py TESSERA.jsonl TORCH.jsonl [CHART.png]
Prints, per case, tessera's TB/s, eager's, torch.compile's and the ratio to the best of them, as
JSON lines; with a third argument draws a bar chart (needs matplotlib, which the development
machine has; the GPU machine may not).
"""
import json
import sys


def load(path):
    rows = []
    for line in open(path):
        line = line.strip()
        if line.startswith("{"):
            rows.append(json.loads(line))
    return rows


def main():
    ours = [r for r in load(sys.argv[1]) if "tbps" in r]
    base = load(sys.argv[2])
    out = []
    for r in ours:
        key = (r["bench"], r.get("baseline", r["case"]), r["dtype"])
        peers = {b["impl"]: b["tbps"] for b in base if (b["bench"], b["case"], b["dtype"]) == key}
        best = max(peers.values()) if peers else None
        row = {"case": f"{r['case']} {r['dtype']}", "tessera_tbps": r["tbps"], **{f"{k}_tbps": v for k, v in peers.items()},
               "ratio_to_best": round(r["tbps"] / best, 3) if best else None}
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
