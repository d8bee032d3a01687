#!/usr/bin/env python3
"""One layer's GEMMs, forward and backward, against NeuSight's per-node times.

Every whole-model run NeuSight publishes with a per-op profile (the .csv
beside the run's .json under scripts/asplos/label/<GPU>/ in its
repository, github.com/sitar-lab/NeuSight, MIT) times each traced node of
one layer alone: its forward (fw_latency) and, for training runs, its
backward (bw_latency: the node's own autograd functions called on a
tensor of ones, neusight/Tracing/analysis.py).  data/neusight/model-runs
keeps the forward rows, imported; the backward ones are used only here.

This script groups layer 0's GEMM nodes by the module gpusim tags their
kernels with (an nn.Linear or GPT-2 Conv1D module; the attention's two
matmuls or bmms together as <attention module>.matmul), runs the built
gpusim on the same run (`gpusim run --format json`), sums the layer-0
kernels of each group (forward: GEMM kernels and the copies matmul makes
of head views it cannot reshape, which the node's time includes: NeuSight
times each node on its real, strided arguments; backward: GEMM kernels and
the bias gradient's sum) and
prints both with gpusim's signed error: per group with --detail, per run
and per GPU (mean absolute error over the groups, and the error of the
summed time).

Each node's time includes the harness's own cost, CUDA events around a
Python call (about 10-25 us; the backward times every autograd function
of the node apart, views and clones included), so nodes of a few tenths
of a millisecond (BERT-Large at batch 2) read long against gpusim's
kernels; the large ones carry the evidence.

Only GEMM nodes are compared: the backward times NeuSight records for
memory-bound nodes run 1.7-2.7 times their forward (dropout 0.95 ms
against 0.36 on the H100 for GPT-3 XL's attention probabilities, though
both move the same bytes), which the runs' end-to-end backward times do
not show, so they are not used (docs/models.md, "Known gaps").

Usage: GPUSIM_ARCH_PATH=arch bench/neusight-nodes.py NEUSIGHT_CHECKOUT
           [--gpusim PATH] [--arch A ...] [--run SUBSTRING] [--detail]
           [--jobs N]
NEUSIGHT_CHECKOUT is a clone of NeuSight's repository (a work tree, or a
bare git directory, read with `git show`).  Python 3 standard library only.
"""

import concurrent.futures
import csv
import io
import json
import os
import re
import statistics
import subprocess
import sys

from neusight_labels import (LAYER0, LABELS, MODELS_DIR, Checkout,
                             arguments, files)

MODELS = ["bert_large", "gpt2_large", "gpt3_27", "gpt3_xl", "opt_13"]
RUN = re.compile(r"^([a-z0-9_]+)-(inf|train)-(\d+)-(\d+)\.csv$")
MODULE = re.compile(r"\('([^']+)', <class '([^']+)'>\)")
GEMM_FN = re.compile(r"\b(addmm|matmul|bmm|mm)\b")


def gemm_group(row):
    """The gpusim tag of a layer-0 GEMM node's kernels, or None."""
    stack = MODULE.findall(row.get("meta", ""))
    if row["op"] == "call_module":
        cls = stack[-1][1] if stack else ""
        if cls.endswith(".Linear") or cls.endswith(".Conv1D"):
            return row["target"]
        return None
    if row["op"] != "call_function" or not stack:
        return None
    m = GEMM_FN.search(row["target"])
    if m is None:
        return None
    if m.group(1) == "addmm":                 # GPT-2's Conv1D, traced through
        return stack[-1][0]
    return stack[-1][0] + ".matmul"


def label_groups(text):
    """{group: [fw_ms, bw_ms]} over layer 0's GEMM nodes."""
    csv.field_size_limit(1 << 30)
    groups = {}
    for row in csv.DictReader(io.StringIO(text)):
        if not LAYER0.search(row.get("meta", "")):
            continue
        g = gemm_group(row)
        if g is None:
            continue
        t = groups.setdefault(g, [0.0, 0.0])
        t[0] += float(row.get("fw_latency") or 0)
        t[1] += float(row.get("bw_latency") or 0)
    return groups


def predict(args, run):
    arch, model, mode, seq, batch = run[:5]
    cmd = [args.gpusim, "run", os.path.join(MODELS_DIR, model + ".json"),
           "--arch", arch, "--batch", batch, "--seq", seq,
           "--mode", "training" if mode == "train" else "inference",
           "--format", "json"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d"
                                                        % p.returncode])[-1]
    groups = {}
    for k in json.loads(p.stdout)["kernels"]:
        if k.get("layer") != 0:
            continue
        fw = k["phase"] == "forward" and k["op_class"] in ("gemm", "copy")
        bw = k["phase"] == "backward" and k["op_class"] in ("gemm", "reduce")
        if fw or bw:
            t = groups.setdefault(k["tag"], [0.0, 0.0])
            t[0 if fw else 1] += k["time_ms"]
    return groups, None


def err(pred, meas):
    return (pred - meas) / meas * 100 if meas > 0 else None


def fmt(e):
    return f"{e:+7.1f}" if e is not None else f"{'-':>7s}"


def main():
    ap = arguments(__doc__)
    ap.add_argument("--run", help="only runs whose name contains this")
    ap.add_argument("--detail", action="store_true",
                    help="also every GEMM group of every run")
    args = ap.parse_args()
    src = Checkout(args.checkout)

    runs = []
    for gpu, arch, name, m in files(src, args.arch, RUN, MODELS):
        if args.run and args.run not in name:
            continue
        labels = label_groups(src.read(gpu, name))
        if labels:
            runs.append((arch,) + m.groups() + (name[:-4], labels))
    if not runs:
        sys.exit(f"no per-op profiles under {args.checkout}/{LABELS}")

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda r: predict(args, r), runs))

    print(f"{'gpu':16s} {'run':26s} {'fw ms':>8s} {'gpusim':>8s} {'err%':>7s}"
          f" {'bw ms':>8s} {'gpusim':>8s} {'err%':>7s}")
    per_gpu = {}
    failed = 0
    for run, (pred, why) in zip(runs, results):
        arch, name, labels = run[0], run[5], run[6]
        if pred is None:
            failed += 1
            print(f"{arch:16s} {name:26s} gpusim failed: {why}")
            continue
        sums = [0.0, 0.0, 0.0, 0.0]
        stats = per_gpu.setdefault(arch, {"fw": [], "bw": [],
                                          "sums": [0.0, 0.0, 0.0, 0.0]})
        lines = []
        for g in sorted(labels):
            lf, lb = labels[g]
            pf, pb = pred.get(g, (0.0, 0.0))
            ef = err(pf, lf) if lf > 0 and pf > 0 else None
            eb = err(pb, lb) if lb > 0 and pb > 0 else None
            if ef is not None:
                sums[0] += lf
                sums[1] += pf
                stats["fw"].append(abs(ef))
            if eb is not None:
                sums[2] += lb
                sums[3] += pb
                stats["bw"].append(abs(eb))
            lines.append(f"  {g[-40:]:40s} {lf:8.3f} {pf:8.3f} {fmt(ef)}"
                         f" {lb:8.3f} {pb:8.3f} {fmt(eb)}")
        for i in range(4):
            stats["sums"][i] += sums[i]
        print(f"{arch:16s} {name:26s} {sums[0]:8.3f} {sums[1]:8.3f} "
              f"{fmt(err(sums[1], sums[0]))} {sums[2]:8.3f} {sums[3]:8.3f} "
              f"{fmt(err(sums[3], sums[2]))}")
        if args.detail:
            print("\n".join(lines))

    print()
    print(f"{'gpu':16s} {'groups':>6s} {'fw MAPE%':>9s} {'fw sum%':>8s} "
          f"{'groups':>6s} {'bw MAPE%':>9s} {'bw sum%':>8s}")
    for arch, s in per_gpu.items():
        f, b, t = s["fw"], s["bw"], s["sums"]
        print(f"{arch:16s} {len(f):6d} "
              f"{statistics.mean(f) if f else 0:9.2f} {fmt(err(t[1], t[0]))}"
              f"  {len(b):6d} {statistics.mean(b) if b else 0:9.2f} "
              f"{fmt(err(t[3], t[2]))}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
