#!/usr/bin/env python3
"""Monotonicity sweep: a larger batch or a longer sequence should not take
less time.

Runs the built gpusim (`gpusim run CONFIG --arch A --batch B --seq S --mode M
--dtype D --format json`) over the model configs in examples/configs/ and
data/neusight/models/, five GPUs, two dtypes each (fp32 and bf16; fp16 where
the GPU has no bf16) and the modes inference, training and decode (and, with --gen-tokens N,
inference followed by N generated tokens, "generateN"), and prints
every inversion: a step to the next larger batch (same seq) or the next
longer seq (same batch) whose total_ms or GPU time (kernel_ms) falls by more
than --tol (1%).  With --why, each inversion also lists the kernels whose
summed time fell most between the two runs, the place to start looking
(then `gpusim explain --op ...`).

By default the grid is sampled: every batch at seq 512, every seq at batch
4; --full runs all 30 points of batch 1..32 x seq 128..2048.  Shapes that do
not fit in the GPU's memory are skipped (gpusim says so and exits 1).

Usage: GPUSIM_ARCH_PATH=arch bench/monotonic.py [--gpusim PATH] [--full]
           [--jobs N] [--tol PCT] [--why] [--gen-tokens N] [--verbose]
           [--config FILE ...] [--arch A ...] [--mode M ...]
Python 3 standard library only; exits 1 if it found an inversion.
"""

import argparse
import collections
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

ARCHS = ["a100-pcie-40gb", "h100", "l4", "t4", "v100-pcie-32gb"]
NO_BF16 = {"t4", "v100-pcie-32gb"}
BATCHES = [1, 2, 4, 8, 16, 32]
SEQS = [128, 256, 512, 1024, 2048]
MODES = ["inference", "training", "decode"]


def run(gpusim, cfg, arch, dtype, mode, batch, seq, why):
    cmd = [gpusim, "run", cfg, "--arch", arch, "--dtype", dtype,
           "--batch", str(batch), "--seq", str(seq), "--format", "json"]
    if mode.startswith("generate"):
        cmd += ["--mode", "inference", "--gen-tokens", mode[len("generate"):]]
    else:
        cmd += ["--mode", mode]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    d = json.loads(p.stdout)
    per = None
    if why:
        per = collections.Counter()
        for k in d["kernels"]:
            per[k["name"]] += k["time_ms"]
    return (d["total_ms"], d["kernel_ms"], per), None


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    top = os.path.dirname(here)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpusim", default=os.environ.get("GPUSIM", "gpusim"))
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tol", type=float, default=1.0, help="percent")
    ap.add_argument("--why", action="store_true")
    ap.add_argument("--config", action="extend", nargs="+")
    ap.add_argument("--arch", action="extend", nargs="+")
    ap.add_argument("--mode", action="extend", nargs="+")
    ap.add_argument("--gen-tokens", type=int, default=0)
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    configs = a.config or sorted(
        glob.glob(os.path.join(top, "examples/configs/*.json")) +
        glob.glob(os.path.join(top, "data/neusight/models/*.json")))
    archs = a.arch or ARCHS
    modes = a.mode or list(MODES)
    if a.gen_tokens > 0:
        modes.append("generate%d" % a.gen_tokens)

    if a.full:
        points = [(b, s) for b in BATCHES for s in SEQS]
    else:
        points = sorted({(b, 512) for b in BATCHES} | {(4, s) for s in SEQS})

    jobs = []
    for cfg in configs:
        for arch in archs:
            for dtype in ["fp32", "fp16" if arch in NO_BF16 else "bf16"]:
                for mode in modes:
                    for b, s in points:
                        jobs.append((cfg, arch, dtype, mode, b, s))
    res = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run, a.gpusim, *j, a.why): j for j in jobs}
        for f in concurrent.futures.as_completed(futs):
            r, err = f.result()
            if r is not None:
                res[futs[f]] = r
            elif a.verbose:
                print("skipped %s: %s" % (futs[f], err), file=sys.stderr)

    found = 0
    for (cfg, arch, dtype, mode, b, s), (tot, gpu, per) in sorted(res.items()):
        steps = []
        if b * 2 in BATCHES:
            steps.append(("batch", (cfg, arch, dtype, mode, b * 2, s)))
        if s * 2 in SEQS:
            steps.append(("seq", (cfg, arch, dtype, mode, b, s * 2)))
        for what, nxt in steps:
            if nxt not in res:
                continue
            tot2, gpu2, per2 = res[nxt]
            bad = [(name, x, y) for name, x, y in
                   (("total_ms", tot, tot2), ("kernel_ms", gpu, gpu2))
                   if y < x * (1 - a.tol / 100)]
            if not bad:
                continue
            found += 1
            print("%s %s %s %s: %s %d -> %d (batch %d seq %d): %s" % (
                os.path.relpath(cfg, top), arch, dtype, mode, what,
                b if what == "batch" else s, nxt[4] if what == "batch"
                else nxt[5], b, s, ", ".join(
                    "%s %.4g -> %.4g (%+.1f%%)" % (n, x, y, 100 * (y / x - 1))
                    for n, x, y in bad)))
            if per is not None:
                diff = {k: per2.get(k, 0) - per.get(k, 0)
                        for k in set(per) | set(per2)}
                for k, v in sorted(diff.items(), key=lambda kv: kv[1])[:3]:
                    if v < 0:
                        print("    %+.4f ms %s" % (v, k))
    print("%d runs, %d skipped (do not fit or refused), %d inversions" % (
        len(jobs), len(jobs) - len(res), found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
