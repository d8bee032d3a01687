#!/usr/bin/env python3
"""Whole-model predictions against the project's own model measurements.

calibrate/measure-models.py times whole models on a GPU the way the
reference harness does and writes one CSV row a run (model, mode, seq,
batch, dtype, attention, e2e_ms: the mean of the 5 fastest iterations'
forward + backward).  This script runs the built gpusim on each measured
run (`gpusim run CONFIG --arch ARCH --batch B --seq S --mode M --dtype D
--attention A`, Switch with --moe hf: transformers' own sparse MLP, which
the measuring script runs) and prints every run's signed error and, per
dtype and over all, the mean absolute percentage error, the worst error
and how many runs are off by more than 10%.

The measurements in data/measured/ were taken with newer PyTorch and
transformers than the reference gpusim models by default (PyTorch 2.1,
transformers 4.36; docs/models.md).  Each run is predicted with the op
lists of the transformers release its CSV's header names (`# transformers:
5.17.0` gives `--transformers 5`; Switch, which gpusim follows in 4.36
only, keeps 4.36); --transformers 4.36 predicts every run with the
reference's.  Their host costs differ too, and the figures say how far
gpusim carries to that software.

Usage: GPUSIM_ARCH_PATH=arch bench/measured-e2e.py [--gpusim PATH]
           [--arch ARCH] [--models DIR] [--spec-only]
           [--host-ratio R | --fit-host SMALL_CSV] [--malloc-us US]
           [--exclude MODEL ...] [--transformers VERSION] [--jobs N] CSV...
Python 3 standard library only.
"""

import argparse
import concurrent.futures
import csv
import json
import math
import os
import subprocess
import sys


def read_runs(paths, args):
    runs = []
    for p in paths:
        with open(p, newline="") as f:
            lines = f.readlines()
        release = None
        malloc_us = None if args.malloc_us is None else args.malloc_us
        alloc = os.path.join(os.path.dirname(p), "alloc.csv")
        if malloc_us is None and os.path.exists(alloc):
            with open(alloc, newline="") as af:
                rows = list(csv.DictReader(af))
            if rows:
                # The smallest request: one segment, little to map.
                first = min(rows, key=lambda a: float(a["size_mib"]))
                malloc_us = 1000.0 * float(first["alloc_ms"])
        for line in lines:
            if line.startswith("# transformers:"):
                release = line.split(":", 1)[1].strip()
        rows = csv.DictReader(line for line in lines if not line.startswith("#"))
        for r in rows:
            if r.get("error") or not r.get("e2e_ms"):
                continue
            r["_transformers"] = release
            r["_malloc_us"] = malloc_us
            runs.append(r)
    return runs


def transformers_arg(args, r):
    """gpusim's --transformers for run R: 5 where it was measured under
    transformers 5 (Switch excepted), else none (4.36)."""
    release = args.transformers or r.get("_transformers") or "4.36"
    if release.split(".")[0] == "5" and not r["model"].startswith("switch"):
        return ["--transformers", "5"]
    return []


def predict(args, r):
    cfg = os.path.join(args.models, r["model"] + ".json")
    cmd = [args.gpusim, "run", cfg, "--arch", args.arch,
           "--batch", r["batch"], "--seq", r["seq"],
           "--mode", "training" if r["mode"] == "train" else "inference",
           "--dtype", r["dtype"], "--attention", r.get("attention") or "eager",
           "--format", "json"]
    if r["model"].startswith("switch"):
        cmd += ["--moe", "hf"]
    cmd += transformers_arg(args, r)
    if args.spec_only:
        cmd.append("--spec-only")
    if args.host_ratio:
        cmd += ["--set", "model_runs.host_ratio=%g" % args.host_ratio]
    if r.get("_malloc_us"):
        cmd += ["--set", "model_runs.malloc_us=%g" % r["_malloc_us"]]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
    return json.loads(p.stdout), None


def fit_host(args, path):
    """The host ratio at which the host-bound inference runs of PATH
    (measure-models.py's small runs: few tokens, batch 1) are predicted
    with a median signed error of zero, by bisection on its logarithm."""
    runs = [r for r in read_runs([path], args)
            if r["mode"] == "inf" and r["model"] not in args.exclude]
    if not runs:
        sys.exit("measured-e2e.py: %s: no inference runs to fit the host on"
                 % path)

    def median_error(ratio):
        args.host_ratio = ratio
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
            outs = list(ex.map(lambda r: predict(args, r), runs))
        errs = sorted((o["total_ms"] - float(r["e2e_ms"])) / float(r["e2e_ms"])
                      for r, (o, _) in zip(runs, outs) if o is not None)
        if not errs:
            sys.exit("measured-e2e.py: %s: no run predicted" % path)
        n = len(errs)
        return (errs[(n - 1) // 2] + errs[n // 2]) / 2

    lo, hi = math.log(0.05), math.log(20.0)
    for _ in range(30):
        mid = (lo + hi) / 2
        if median_error(math.exp(mid)) < 0:
            lo = mid
        else:
            hi = mid
    return math.exp((lo + hi) / 2), len(runs)


def summary(label, errs):
    if not errs:
        return
    a = [abs(e) for e in errs]
    print(f"{label:<8} {len(errs):>4} {sum(a) / len(a):>7.2f} {max(a):>7.1f}"
          f" {sum(1 for e in a if e > 10):>7}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("csv", nargs="+", help="measure-models.py output")
    ap.add_argument("--gpusim", default="./gpusim")
    ap.add_argument("--arch", default="h100-sxm5-80gb")
    ap.add_argument("--models", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "neusight", "models"))
    ap.add_argument("--spec-only", action="store_true")
    ap.add_argument("--exclude", action="append", default=[], metavar="MODEL",
                    help="leave out MODEL's runs (repeatable)")
    ap.add_argument("--host-ratio", type=float,
                    help="the host's speed as model_runs.host_ratio (times the "
                    "reference host's costs; default: the arch file's)")
    ap.add_argument("--fit-host", metavar="SMALL_CSV",
                    help="fit the measuring machine's host ratio on the "
                    "host-bound inference runs of SMALL_CSV (median error "
                    "zero) and predict the CSVs' runs with it")
    ap.add_argument("--malloc-us", type=float, metavar="US",
                    help="cudaMalloc cost per call on the measuring machine "
                    "(default: the smallest request of alloc.csv beside "
                    "each CSV, else the arch file's; 0: not paid)")
    ap.add_argument("--transformers", metavar="VERSION",
                    help="predict every run with this transformers release's "
                    "op lists (default: the one each CSV's header names)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    fitted = None
    if args.fit_host:
        fitted = fit_host(args, args.fit_host)
        args.host_ratio = fitted[0]
    runs = [r for r in read_runs(args.csv, args) if r["model"] not in args.exclude]
    if not runs:
        print("measured-e2e.py: no measured runs", file=sys.stderr)
        return 1
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        outs = list(ex.map(lambda r: predict(args, r), runs))
    print(f"# {args.arch}{' (spec only)' if args.spec_only else ''}: "
          "gpusim run against calibrate/measure-models.py")
    if fitted:
        print(f"# host ratio {fitted[0]:.3f}, fitted on the {fitted[1]} "
              f"inference runs of {args.fit_host}")
    print(f"{'model':<10} {'mode':<5} {'seq':>5} {'b':>3} {'dtype':<5}"
          f" {'measured':>9} {'gpusim':>9} {'err%':>7}  {'fw%':>6} {'bw%':>6}")
    by_dtype = {}
    failed = 0
    for r, (out, err) in zip(runs, outs):
        meas = float(r["e2e_ms"])
        head = (f"{r['model']:<10} {r['mode']:<5} {r['seq']:>5} {r['batch']:>3}"
                f" {r['dtype']:<5} {meas:>9.2f}")
        if out is None:
            failed += 1
            print(f"{head} {'-':>9} {'-':>7}  {err}")
            continue
        pred = out["total_ms"]
        e = (pred - meas) / meas * 100
        by_dtype.setdefault(r["dtype"], []).append(e)
        fw = float(r["fw_ms"])
        bw = float(r["bw_ms"] or 0)
        fwe = (out["forward_ms"] - fw) / fw * 100
        bwe = f"{(out['backward_ms'] - bw) / bw * 100:+6.1f}" if bw > 0 else f"{'':>6}"
        print(f"{head} {pred:>9.2f} {e:>+7.1f}  {fwe:>+6.1f} {bwe}")
    print()
    print(f"{'dtype':<8} {'runs':>4} {'MAPE%':>7} {'max%':>7} {'over10%':>7}")
    for d in sorted(by_dtype):
        summary(d, by_dtype[d])
    summary("all", [e for v in by_dtype.values() for e in v])
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
