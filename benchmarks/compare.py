"""Joins tessera's benchmark JSON lines with the PyTorch baselines of the same run.

usage: compare.py TESSERA.jsonl TORCH.jsonl [CHART.png]
Prints, per case, tessera's TB/s, eager's, torch.compile's and the ratio to the best of them, as
JSON lines; with a third argument draws a bar chart (needs matplotlib, which the development
machine has; the GPU machine may not). A case measured in several rounds (run_on_gpu.sh alternates
the two sides) counts with each side's median TB/s over the rounds; the per-round numbers are
printed beside it.

Matmul cases (bench_matmul) print TFLOP/s instead, beside cuBLAS's, Triton's and (for the
fused-epilogue case) torch.compile's, with the ratio to each, and the first launch's time; the
batch-1 and M = 16 cases also their TB/s and the ratios to a copy of the same bytes and to one read
of them (a sum: the ceiling of a kernel that reads its weight once). Their chart is
drawn beside the other, named CHART with "_matmul" before the extension.

Lines of both GPU back ends (their "backend" field: run_on_gpu.sh's BACKENDS="nvvm tileir") give
one row each, the tileir row's case marked "[tileir]" and with its ratio to the nvvm row of the
same case ("ratio_to_nvvm"); a line without the field is nvvm's.
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


def rounds_by(rows, key, field="tbps"):
    """`field` (TB/s by default) per key, in the order of the rounds."""
    out = {}
    for r in rows:
        if field in r:
            out.setdefault(key(r), []).append(r[field])
    return out


def backend_of(r):
    return r.get("backend", "nvvm")


def case_label(case, dtype, backend):
    return f"{case} {dtype}" + ("" if backend == "nvvm" else f" [{backend}]")


def add_ratio_to_nvvm(rows, field):
    """Each other back end's row gets its `field` over the nvvm row's of the same case."""
    nvvm = {r["key"]: r[field] for r in rows if r["backend"] == "nvvm"}
    for r in rows:
        if r["backend"] != "nvvm" and nvvm.get(r["key"]):
            r["ratio_to_nvvm"] = round(r[field] / nvvm[r["key"]], 3)


def matmul_row(case, dtype, ours, base):
    """One matmul case: TFLOP/s of each side, the ratios to cuBLAS, Triton and torch.compile, the
    first launch (compile included); for M <= 16 also TB/s and the ratios to a copy and to a read."""
    tflops, tbps, first = ours
    peers = {impl: statistics.median(v) for impl, v in base["tflops"].items()}
    mine = statistics.median(tflops)
    row = {"case": f"{case} {dtype}", "tessera_tflops": round(mine, 2), **{f"{k}_tflops": round(v, 2) for k, v in peers.items()}}
    for ref in ("cublas", "triton", "compile"):
        if peers.get(ref):
            row[f"ratio_to_{ref}"] = round(mine / peers[ref], 3)
    if "copy" in base["tbps"]:
        copy = statistics.median(base["tbps"]["copy"])
        row.update({"tessera_tbps": round(statistics.median(tbps), 3), "copy_tbps": round(copy, 3),
                    "ratio_to_copy": round(statistics.median(tbps) / copy, 3)})
    if "read" in base["tbps"]:
        read = statistics.median(base["tbps"]["read"])
        row.update({"read_tbps": round(read, 3), "ratio_to_read": round(statistics.median(tbps) / read, 3)})
    row["first_launch_ms"] = round(statistics.median(first), 1)
    if len(tflops) > 1:
        row["rounds"] = {"tessera": tflops, **base["tflops"]}
    return row


def main():
    our_rows = [r for r in load(sys.argv[1]) if "tbps" in r]
    base_rows = [b for b in load(sys.argv[2]) if "tbps" in b]
    ours = rounds_by(our_rows, lambda r: (r["bench"], r["case"], r.get("baseline", r["case"]), r["dtype"], backend_of(r)))
    base = rounds_by(base_rows, lambda b: (b["bench"], b["case"], b["dtype"], b["impl"]))
    # bench_matmul's rows: TFLOP/s, TB/s and first launch per round, by (case, baseline, dtype, backend).
    mm_ours = [rounds_by([r for r in our_rows if r["bench"] == "matmul"],
                         lambda r: (r["case"], r.get("baseline", r["case"]), r["dtype"], backend_of(r)), f)
               for f in ("tflops", "tbps", "first_launch_ms")]
    mm_base = {f: rounds_by([b for b in base_rows if b["bench"] == "matmul"], lambda b: (b["case"], b["dtype"], b["impl"]), f)
               for f in ("tflops", "tbps")}
    out, mm_out = [], []
    for (bench, case, baseline, dtype, backend), tbps in ours.items():
        if bench == "matmul":
            peers = {f: {impl: v for (c, d, impl), v in mm_base[f].items() if (c, d) == (baseline, dtype)} for f in mm_base}
            row = matmul_row(case, dtype, [m.get((case, baseline, dtype, backend), [0.0]) for m in mm_ours], peers)
            row["case"] = case_label(case, dtype, backend)
            row.update(backend=backend, key=(case, dtype))
            mm_out.append(row)
            continue
        theirs = {impl: v for (b, c, d, impl), v in base.items() if (b, c, d) == (bench, baseline, dtype)}
        peers = {impl: statistics.median(v) for impl, v in theirs.items()}
        mine = statistics.median(tbps)
        best = max(peers.values()) if peers else None
        row = {"case": case_label(case, dtype, backend), "tessera_tbps": round(mine, 3), **{f"{k}_tbps": round(v, 3) for k, v in peers.items()},
               "ratio_to_best": round(mine / best, 3) if best else None}
        if len(tbps) > 1:
            row["rounds"] = {"tessera": tbps, **theirs}
        row.update(backend=backend, key=(bench, case, dtype))
        out.append(row)
    add_ratio_to_nvvm(out, "tessera_tbps")
    add_ratio_to_nvvm(mm_out, "tessera_tflops")
    for row in out + mm_out:
        del row["key"]
        print(json.dumps(row))
    if len(sys.argv) > 3 and mm_out:
        matmul_chart(mm_out, sys.argv[3])
    if len(sys.argv) > 3 and out:
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


def matmul_chart(rows, path):
    """TFLOP/s of tessera (each tile shape), cuBLAS, Triton and torch.compile per matmul case."""
    import os

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    stem, ext = os.path.splitext(path)
    names = [o["case"] for o in rows]
    series = [("tessera", "tessera_tflops"), ("cuBLAS", "cublas_tflops"), ("Triton", "triton_tflops"),
              ("torch.compile", "compile_tflops")]
    fig, ax = plt.subplots(figsize=(max(6, len(names) * 0.9), 4.5))
    width = 0.2
    for i, (label, k) in enumerate(series):
        ax.bar([x + (i - 1.5) * width for x in range(len(names))], [o.get(k) or 0 for o in rows], width, label=label)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, rotation=30, ha="right", fontsize=7)
    ax.set_ylabel("TFLOP/s (2 M N K per second)")
    ax.set_title("Matrix products on H200")
    ax.legend()
    fig.tight_layout()
    fig.savefig(stem + "_matmul" + (ext or ".png"), dpi=120)


if __name__ == "__main__":
    main()
