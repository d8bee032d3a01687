#!/usr/bin/env python3
"""A measured model run's kernels against gpusim's, op class by op class.

A PyTorch profiler (Kineto) trace of one iteration of a model holds every
kernel the GPU ran and its GPU time.  `gpusim run --format csv` lists the
kernels gpusim predicts for the same run, each with its op class.  This
script puts the two side by side: per op class (gemm, softmax, norm,
elementwise, copy, embedding, reduce, ...) the launches and the summed GPU
time of each, and the error of gpusim's time; then, per kernel family of
the trace (the kernel's name without its template arguments and the input
shapes its CPU op recorded), the measured launches and time, for finding
the kernels behind a class's error.  Unlike `gpusim validate`, which
predicts each op as if timed alone, this compares the kernels as they ran
inside the model, and it shows where the op lists differ (launch counts).

The run is named by the trace's file name as calibrate/measure-models.py
writes it (MODEL-MODE-SEQ-BATCH-DTYPE.json.gz, MODE inf or train), the
model's config taken from --models; or give gpusim's run arguments after
`--`.

Usage: GPUSIM_ARCH_PATH=arch bench/inmodel-kernels.py --arch ARCH
           [--gpusim PATH] [--models DIR] [--top N] [--transformers V]
           TRACE [-- RUN-ARGS...]
Example:
  GPUSIM_ARCH_PATH=arch bench/inmodel-kernels.py --arch h100-sxm5-80gb \\
      data/measured/h100-sxm5-80gb/profiles/gpt2_large-inf-1024-4-bf16.json.gz
Python 3 standard library only.
"""

import argparse
import collections
import csv
import os
import re
import subprocess
import sys
import tempfile

# gpusim import's op names, by the op class gpusim reports them under.
OP_CLASS = {
    "linear": "gemm", "bmm": "gemm", "bmm_nt": "gemm", "matmul": "gemm",
    "softmax": "softmax", "ln": "norm", "rmsnorm": "norm",
}
# CPU ops of kernels gpusim import names no op for.
CPU_OP_CLASS = [
    (r"aten::.*softmax.*", "softmax"),
    (r"aten::(cat|copy_|clone|contiguous|_to_copy|stack|index_put)", "copy"),
    (r"aten::(embedding|index_select|gather|take)", "embedding"),
    (r"aten::(sum|mean|max|min|amax|argmax|nll_loss.*|norm)", "reduce"),
    (r"aten::.*layer_norm.*", "norm"),
    (r"aten::(mm|addmm|bmm|matmul|linear|baddbmm)", "gemm"),
    (r"aten::.*(scaled_dot_product|flash|efficient_attention)", "attention"),
    (r"aten::_(foreach|fused_adam).*", "optimizer"),
]


def measured_class(r):
    op = r.get("op") or ""
    if op in OP_CLASS:
        return OP_CLASS[op]
    cpu = r.get("cpu_op") or ""
    kernel = r.get("kernel") or ""
    for pattern, cls in CPU_OP_CLASS:
        if re.fullmatch(pattern, cpu):
            return cls
    if "gemm" in kernel or "nvjet" in kernel or "xmma" in kernel:
        return "gemm"
    if "reduce_kernel" in kernel:
        return "reduce"
    if "layer_norm" in kernel:
        return "norm"
    if "softmax" in kernel:
        return "softmax"
    if "CatArray" in kernel or "copy" in kernel:
        return "copy"
    return "elementwise"


def family(kernel):
    """A kernel name without template arguments or its argument list."""
    depth, out = 0, []
    for ch in kernel:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    name = "".join(out).strip()
    # CUTLASS wraps the kernel that names the tile in Kernel2<...>.
    inner = re.match(r"cutlass::Kernel2?<(\w+)", kernel)
    if inner:
        name = inner.group(1)
    # The functor names the elementwise op: keep it.
    m = re.search(r"(CUDAFunctor\w*_(\w+?)[<,>]|(\w+)_kernel_cuda|"
                  r"BinaryFunctor<[^,]+, [^,]+, [^,]+, at::native::"
                  r"(?:binary_internal::)?(\w+)Functor|AUnaryFunctor<[^,]+, "
                  r"[^,]+, [^,]+, at::native::(?:binary_internal::)?(\w+)Functor)",
                  kernel)
    if m:
        tag = next(g for g in m.groups()[1:] if g)
        name += " [" + tag + "]"
    return name


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def run_args_from_name(trace, models):
    base = os.path.basename(trace)
    base = re.sub(r"\.(json|csv)(\.gz)?$", "", base)
    m = re.fullmatch(r"(.+)-(inf|train)-(\d+)-(\d+)-(\w+)", base)
    if not m:
        sys.exit("inmodel-kernels: %s: name is not MODEL-MODE-SEQ-BATCH-DTYPE;"
                 " give gpusim's run arguments after --" % trace)
    model, mode, seq, batch, dtype = m.groups()
    cfg = os.path.join(models, model + ".json")
    if not os.path.exists(cfg):
        sys.exit("inmodel-kernels: %s: no such model config" % cfg)
    return [cfg, "--batch", batch, "--seq", seq, "--dtype", dtype,
            "--mode", "training" if mode == "train" else "inference"]


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1:]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", help="Kineto trace (.json[.gz]) or gpusim "
                    "measurement CSV of one iteration")
    ap.add_argument("--arch", required=True)
    ap.add_argument("--gpusim", default="./gpusim")
    ap.add_argument("--models", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "data", "neusight",
        "models"))
    ap.add_argument("--transformers", metavar="VERSION",
                    help="the transformers release the trace ran (gpusim's "
                    "--transformers; the H100 profiles: 5)")
    ap.add_argument("--top", type=int, default=15,
                    help="kernel families listed (default 15)")
    args = ap.parse_args(argv)
    if not os.path.exists(args.trace):
        sys.exit("inmodel-kernels: %s: no such file" % args.trace)
    run_args = extra or run_args_from_name(args.trace, args.models)
    if args.transformers and not extra:
        run_args += ["--transformers", args.transformers]

    with tempfile.TemporaryDirectory() as tmp:
        meas_csv = os.path.join(tmp, "measured.csv")
        p = subprocess.run([args.gpusim, "import", args.trace, "-o", meas_csv],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(p.stderr.strip() or "gpusim import failed")
        measured = read_csv(meas_csv)
        p = subprocess.run([args.gpusim, "run"] + run_args
                           + ["--arch", args.arch, "--format", "csv"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(p.stderr.strip() or "gpusim run failed")
        predicted = list(csv.DictReader(p.stdout.splitlines()))

    m_cls = collections.defaultdict(lambda: [0, 0.0])
    fam = collections.defaultdict(lambda: [0, 0.0])
    for r in measured:
        ms = float(r["latency_ms"])
        c = measured_class(r)
        m_cls[c][0] += 1
        m_cls[c][1] += ms
        key = (c, family(r["kernel"]), r.get("input_dims", "")[:48])
        fam[key][0] += 1
        fam[key][1] += ms
    p_cls = collections.defaultdict(lambda: [0, 0.0])
    for r in predicted:
        w = float(r.get("weight") or 1)
        p_cls[r["op_class"]][0] += int(w)
        p_cls[r["op_class"]][1] += float(r["time_ms"]) * w

    print("# %s: gpusim run %s --arch %s" % (os.path.basename(args.trace),
                                             " ".join(run_args), args.arch))
    print("%-12s %9s %11s %9s %11s %8s" % ("class", "measured", "ms",
                                           "gpusim", "ms", "err%"))
    mt = pt = 0.0
    for c in sorted(set(m_cls) | set(p_cls),
                    key=lambda c: -max(m_cls[c][1], p_cls[c][1])):
        mn, mms = m_cls[c]
        pn, pms = p_cls[c]
        mt += mms
        pt += pms
        err = "%+8.1f" % (100 * (pms / mms - 1)) if mms > 0 else "       -"
        print("%-12s %9d %11.3f %9d %11.3f %s" % (c, mn, mms, pn, pms, err))
    print("%-12s %9d %11.3f %9d %11.3f %+8.1f" % (
        "all", len(measured), mt, sum(v[0] for v in p_cls.values()), pt,
        100 * (pt / mt - 1) if mt > 0 else 0))
    print()
    print("Measured kernel families (largest GPU time first):")
    print("%-12s %6s %9s %9s  %s" % ("class", "calls", "ms", "ms/call",
                                      "kernel [functor] | input shapes"))
    for (c, name, dims), (n, ms) in sorted(fam.items(),
                                           key=lambda kv: -kv[1][1])[:args.top]:
        print("%-12s %6d %9.3f %9.4f  %s | %s" % (c, n, ms, ms / n,
                                                   name[:60], dims))
    return 0


if __name__ == "__main__":
    sys.exit(main())
