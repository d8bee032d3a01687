#!/usr/bin/env python3
"""Whole-model predictions against NeuSight's per-run records.

NeuSight's repository (github.com/sitar-lab/NeuSight, MIT) publishes the
end-to-end time of every whole-model run it measured, one JSON file a run:
scripts/asplos/label/<GPU>/<model>-<inf|train>-<seq>-<batch>[-fusion].json,
with e2e_latency (ms).  This script runs the built gpusim on each run of the
six models in data/neusight/models on the six GPUs gpusim has calibrations
for, and prints the signed error of every run and, per GPU and over all,
the mean absolute percentage error, the worst error and how many runs
are off by more than 10% (the targets: a MAPE of at most 5%, no run
worse than 10%).  It is a diagnostic: no end-to-end
time is fitted or kept in this repository (they are what its accuracy is
judged on).  The per-op profiles of one layer that come with most runs
(the .csv beside the .json) are kept, imported, in
data/neusight/model-runs: each GPU's model_runs.clock_ratio is fitted on
their GEMMs and its model_runs.host_ratio on their nodes that launch no
kernel (gpusim calibrate --model-runs).  --held-out refits both ratios
for every run without its own profile, so that no run is predicted with a
ratio its own measurements helped fit.

The last column, "profile%", is the run's own per-op profile summed (its
layer-0 ops times the run's num_layer, plus the ops outside the layers;
forward and backward in training) against the measured end-to-end time:
a check of the data, not of gpusim.  Each profiled op's time includes the
profiler's own cost (about 6-10 us an op: eval-mode dropout, a no-op,
reads 0.0095 ms on the H100), so small-op runs sum above their end-to-end
time (the A100 40GB's BERT-Large and GPT2-Large b4 runs: +46 to +54%,
taken in another setting than their end-to-end times); a run whose profile
sums far below it (five of the A100 80GB's eight profiled training runs:
-8.5 to -17.5%) recorded time its own ops do not account for.  Compiled
runs and Switch have no profile ("-").

"-fusion" runs are torch.compile'd (gpusim --runtime compiled); "train" runs
are forward, loss and backward (--mode training).  The L4 has no Switch
Transformer run that fits; it is skipped, as are runs of other GPUs,
models, data-parallel or pipeline-parallel splits.

--phases adds five columns to the training runs: the forward's and the
backward's signed errors against the run's own fw_latency and
bwall_latency, the measured forward's excess over the predicted one in
ms per GiB of activations the forward keeps for the backward (`gpusim
run`'s memory_gib.saved_for_backward), the cudaMalloc calls gpusim's
caching-allocator walk counts for the run from an emptied cache
(cuda_mallocs) and the excess per call in us.  The harness empties
PyTorch's allocator cache before every iteration, so the forward
allocates those afresh; the columns are there to see whether a machine's
forward excess follows them.

--against METHOD adds a column: the signed error of the prediction
NeuSight's repository publishes for the run by METHOD (neusight, its own
predictor; micro, habitat and roofline, the baselines it compares with),
scripts/asplos/results/prediction/<GPU>/<METHOD>/<run>.json, "-" where it
has none, and a last table: on the runs METHOD predicted, per GPU and
over all, its MAPE and runs over 10% beside gpusim's.

Usage: GPUSIM_ARCH_PATH=arch bench/neusight-e2e.py NEUSIGHT_CHECKOUT
           [--gpusim PATH] [--spec-only] [--held-out] [--phases]
           [--against METHOD] [--arch A ...] [--jobs N]
NEUSIGHT_CHECKOUT is a clone of NeuSight's repository (a work tree, or a
bare git directory, read with `git show`).  Python 3 standard library only.
"""

import concurrent.futures
import csv
import io
import json
import os
import re
import subprocess
import sys

from neusight_labels import (GPUS, LAYER0, LABELS, MODELS_DIR, Checkout,
                             arguments, files)

MODELS = ["bert_large", "gpt2_large", "gpt3_27", "gpt3_xl", "opt_13",
          "switchxl4"]
RUN = re.compile(r"^([a-z0-9_]+)-(inf|train)-(\d+)-(\d+)(-fusion)?\.json$")


def profile_sum(src, gpu, name):
    """Run NAME's per-op profile summed over the model, ms, or None."""
    if name.endswith("-fusion") or name + ".csv" not in src.list(gpu):
        return None
    layers = json.loads(src.read(gpu, name + ".json")).get("num_layer")
    if not layers:
        return None
    csv.field_size_limit(1 << 30)
    layer = rest = 0.0
    for row in csv.DictReader(io.StringIO(src.read(gpu, name + ".csv"))):
        t = sum(float(row.get(c) or 0) for c in ("fw_latency", "bw_latency"))
        if LAYER0.search(row.get("meta", "")):
            layer += t
        else:
            rest += t
    return rest + layers * layer if layer > 0 else None


def held_out_ratio(args, runs_dir, arch, name):
    """ARCH's model_runs.clock_ratio and host_ratio fitted without run
    NAME's profile."""
    d = os.path.join(runs_dir, arch)
    own = re.sub(r"-fusion$", "", name) + ".csv.gz"
    files = sorted(os.path.join(d, f) for f in os.listdir(d)
                   if f.endswith(".csv.gz") and f != own)
    p = subprocess.run([args.gpusim, "calibrate", "--arch", arch,
                        "--model-runs", "-o", os.devnull] + files,
                       capture_output=True, text=True, check=True)
    clock = re.search(r"model-run clock: ([0-9.]+) x", p.stdout).group(1)
    host = re.search(r"model-run host: ([0-9.]+) x", p.stdout)
    return clock, host.group(1) if host else "0"


def predict(args, run):
    arch, model, mode, seq, batch, compiled = run[:6]
    cmd = [args.gpusim, "run", os.path.join(MODELS_DIR, model + ".json"),
           "--arch", arch, "--batch", batch, "--seq", seq,
           "--mode", "training" if mode == "train" else "inference",
           "--format", "json"]
    if compiled:
        cmd += ["--runtime", "compiled"]
    if args.spec_only:
        cmd.append("--spec-only")
    elif args.held_out:
        runs_dir = os.path.join(MODELS_DIR, "..", "model-runs")
        clock, host = held_out_ratio(args, runs_dir, arch, run[6])
        cmd += ["--set", "model_runs.clock_ratio=" + clock,
                "--set", "model_runs.host_ratio=" + host]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1:] or ["exit %d" % p.returncode]
    return json.loads(p.stdout), None


def phases(run, out):
    """The --phases columns of a training run: the forward's and the
    backward's signed error against the run's own fw_latency and
    bwall_latency, and the forward's excess over the prediction per GiB
    the forward keeps for the backward (what it allocates afresh after
    the harness's empty_cache())."""
    fw, bw = run[9]
    if fw is None or not bw:
        return ""
    saved = out.get("memory_gib", {}).get("saved_for_backward") or 0
    mallocs = out.get("cuda_mallocs") or 0
    excess = fw - out["forward_ms"]
    return (f" {(out['forward_ms'] - fw) / fw * 100:+7.1f}"
            f" {(out['backward_ms'] - bw) / bw * 100:+7.1f}"
            f" {excess / saved if saved else 0:+9.2f}"
            f" {mallocs:>7d} {1000 * excess / mallocs if mallocs else 0:+8.0f}")


PREDICTIONS = "scripts/asplos/results/prediction"


def published(src, gpu, method, name):
    """NeuSight's published prediction of run NAME by METHOD (ms), or None."""
    rel = f"{PREDICTIONS}/{gpu}/{method}/{name}.json"
    if not src.exists(rel):
        return None
    return json.loads(src.read_path(rel))["e2e_latency"]


def over10(errors):
    """How many absolute errors (percent) are worse than 10%."""
    return sum(1 for e in errors if e > 10)


def main():
    ap = arguments(__doc__)
    ap.add_argument("--spec-only", action="store_true",
                    help="predict each GPU from its spec sheet alone")
    ap.add_argument("--held-out", action="store_true",
                    help="refit each GPU's model-run clock and host ratios without "
                    "the run's own per-op profile")
    ap.add_argument("--phases", action="store_true",
                    help="training runs: also the forward's and backward's "
                    "errors and the forward's excess in ms per GiB saved "
                    "for the backward")
    ap.add_argument("--against", metavar="METHOD",
                    choices=["neusight", "micro", "habitat", "roofline"],
                    help="also the error of the prediction NeuSight's "
                    "repository publishes for each run by METHOD "
                    "(neusight, micro, habitat or roofline)")
    args = ap.parse_args()
    src = Checkout(args.checkout)

    runs = []
    for gpu, arch, name, m in files(src, args.arch, RUN, MODELS):
        model, mode, seq, batch, fusion = m.groups()
        if arch == "l4" and model == "switchxl4":
            continue
        rec = json.loads(src.read(gpu, name))
        runs.append((arch, model, mode, seq, batch, bool(fusion),
                     name[:-5], rec["e2e_latency"],
                     profile_sum(src, gpu, name[:-5]),
                     (rec.get("fw_latency"), rec.get("bwall_latency")),
                     published(src, gpu, args.against, name[:-5])
                     if args.against else None))
    if not runs:
        sys.exit(f"no runs under {args.checkout}/{LABELS}")

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(lambda r: predict(args, r), runs))

    per_gpu = {}
    failed = 0
    print(f"{'gpu':16s} {'run':32s} {'measured':>10s} {'predicted':>10s} "
          f"{'error%':>8s} {'profile%':>9s}"
          + (f" {args.against + '%':>9s}" if args.against else "")
          + (f" {'fw%':>7s} {'bw%':>7s} {'ms/GiB':>9s} {'mallocs':>7s}"
             f" {'us/call':>8s}" if args.phases else ""))
    both = {}  # arch -> [(gpusim's |error|, METHOD's |error|)]
    for run, (out, why) in zip(runs, results):
        arch, name, label, prof = run[0], run[6], run[7], run[8]
        own = (f"{(prof - label) / label * 100:+9.2f}" if prof
               else f"{'-':>9s}")
        if out is None:
            failed += 1
            print(f"{arch:16s} {name:32s} {label:10.2f} {'-':>10s} "
                  f"{'-':>8s}  {why[0]}")
            continue
        pred = out["total_ms"]
        err = (pred - label) / label * 100
        per_gpu.setdefault(arch, []).append(abs(err))
        theirs = ""
        if args.against:
            other = run[10]
            if other is None:
                theirs = f" {'-':>9s}"
            else:
                oerr = (other - label) / label * 100
                theirs = f" {oerr:+9.2f}"
                both.setdefault(arch, []).append((abs(err), abs(oerr)))
        extra = phases(run, out) if args.phases and run[2] == "train" else ""
        print(f"{arch:16s} {name:32s} {label:10.2f} {pred:10.2f} {err:+8.2f} "
              f"{own}{theirs}{extra}")
    print()
    print(f"{'gpu':16s} {'runs':>5s} {'MAPE%':>7s} {'worst%':>7s} "
          f"{'over10%':>8s}")
    every = []
    for arch in GPUS.values():
        if arch in per_gpu:
            e = per_gpu[arch]
            every += e
            print(f"{arch:16s} {len(e):5d} {sum(e) / len(e):7.2f} "
                  f"{max(e):7.2f} {over10(e):8d}")
    if every:
        print(f"{'all':16s} {len(every):5d} {sum(every) / len(every):7.2f} "
              f"{max(every):7.2f} {over10(every):8d}")
    if args.against:
        print()
        print(f"on the runs {args.against} predicted:")
        print(f"{'gpu':16s} {'runs':>5s} {'gpusim%':>8s} {'over10%':>8s} "
              f"{args.against + '%':>9s} {'over10%':>8s}")
        groups = [(arch, both[arch]) for arch in GPUS.values() if arch in both]
        if groups:
            groups.append(("all", [p for _, g in groups for p in g]))
        for name, pairs in groups:
            mine, theirs = [a for a, _ in pairs], [b for _, b in pairs]
            print(f"{name:16s} {len(pairs):5d} {sum(mine) / len(pairs):8.2f} "
                  f"{over10(mine):8d} {sum(theirs) / len(pairs):9.2f} "
                  f"{over10(theirs):8d}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
