#!/usr/bin/env python3
"""measure-models.py: time whole Transformer models on this machine's GPU
the way gpusim's reference harness does, and write a CSV with provenance.

Usage:
  measure-models.py [-o OUT.csv] [--dtypes fp32,bf16] [--modes inf,train]
                    [--attention eager] [--budget-s 6] [--profile-dir DIR]
                    RUN...

RUN is CONFIG.json:MODE:SEQ:BATCH (MODE inf or train), or CONFIG.json alone
for the runs given by --seq/--batch and --modes.  Every run is timed as
docs/models.md ("The reference") describes NeuSight's measure_e2e:

  - the model built from the Hugging Face config (random weights) with
    the given attention implementation, in the run's dtype (fp32 with TF32
    off; tf32: fp32 with TF32 GEMMs; fp16 and bf16: the whole model cast);
    inference: no_grad and eval(); training: train() (dropout runs);
  - inputs torch.ones(batch, seq, int64); Switch called as model(ids, ids,
    ids), BERT inference BertForSequenceClassification and training
    BertForPreTraining, decoder-only models their CausalLM class;
  - each iteration after gc.collect() and torch.cuda.empty_cache(); CUDA
    events around the forward; in training, untimed, cross_entropy over
    the (first) logits against the ids, then CUDA events around
    loss.backward(); gradients never zeroed;
  - the figure is the mean of the 5 fastest iterations' forward +
    backward.  The harness runs 25; here a run whose first iteration is
    slow runs fewer (budget_s / first time, at least 7), so the largest
    models fit in a device session.  The iterations are written beside
    the figure.

Needs PyTorch and transformers (not gpusim's build).  Exit status 0 when
every run was measured, 1 when some failed (each failure is a row with an
error and no time), 2 usage, 77 no CUDA device.
"""

import argparse
import csv
import datetime
import gc
import json
import os
import platform
import subprocess
import sys
import time

DTYPES = ("fp32", "tf32", "fp16", "bf16")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="measure-models.py",
        description="Time whole models on this GPU as gpusim's reference "
        "harness does; write a CSV with provenance.")
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="CONFIG.json[:MODE:SEQ:BATCH]")
    p.add_argument("-o", "--output", default="-",
                   help="CSV to write (default: standard output)")
    p.add_argument("--dtypes", default="fp32",
                   help="comma-separated, of " + ",".join(DTYPES))
    p.add_argument("--modes", default="inf", help="inf,train")
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--attention", default="eager",
                   help="transformers attn_implementation (eager, sdpa)")
    p.add_argument("--budget-s", type=float, default=6.0,
                   help="seconds of timed iterations a run aims at")
    p.add_argument("--iters", type=int, default=25)
    p.add_argument("--profile-dir",
                   help="write a PyTorch profiler trace of one iteration "
                   "of each run here (RUN-DTYPE.json.gz)")
    a = p.parse_args(argv)
    a.dtypes = [d for d in a.dtypes.split(",") if d]
    for d in a.dtypes:
        if d not in DTYPES:
            p.error("unknown dtype %r" % d)
    a.modes = [m for m in a.modes.split(",") if m]
    for m in a.modes:
        if m not in ("inf", "train"):
            p.error("unknown mode %r" % m)
    runs = []
    for r in a.runs:
        parts = r.split(":")
        if len(parts) == 1:
            for m in a.modes:
                runs.append((parts[0], m, a.seq, a.batch))
        elif len(parts) == 4 and parts[1] in ("inf", "train"):
            try:
                runs.append((parts[0], parts[1], int(parts[2]), int(parts[3])))
            except ValueError:
                p.error("bad run %r: SEQ and BATCH are integers" % r)
        else:
            p.error("bad run %r: CONFIG.json or CONFIG.json:MODE:SEQ:BATCH" % r)
    a.runs = runs
    return a


def model_for(transformers, torch, cfg_dict, mode, attention):
    """The model class the reference harness builds, on the GPU."""
    mt = cfg_dict["model_type"]
    cfg_cls = transformers.CONFIG_MAPPING[mt]
    cfg = cfg_cls(**{k: v for k, v in cfg_dict.items() if k != "model_type"})
    if mt == "bert":
        cls = (transformers.BertForPreTraining if mode == "train"
               else transformers.BertForSequenceClassification)
    elif mt in ("switch_transformers", "t5", "mt5", "bart"):
        cls = transformers.AutoModelForSeq2SeqLM
    else:
        cls = transformers.AutoModelForCausalLM
    with torch.device("cuda"):
        if hasattr(cls, "from_config"):
            return cls.from_config(cfg, attn_implementation=attention)
        return cls._from_config(cfg, attn_implementation=attention)


def first_logits(out):
    for key in ("prediction_logits", "logits"):
        v = getattr(out, key, None)
        if v is not None:
            return v
    return out[0]


def time_run(torch, model, ids, mode, seq2seq, iters, budget_s, prof=None):
    """Per-iteration (forward_ms, backward_ms) as the harness times them."""
    F = torch.nn.functional
    args = (ids, ids, ids) if seq2seq else (ids,)
    res = []
    n = iters
    i = 0
    while i < n:
        gc.collect()
        torch.cuda.empty_cache()
        e0, e1, e2, e3 = (torch.cuda.Event(enable_timing=True) for _ in range(4))
        if prof is not None and i == 1:
            prof.start()
        e0.record()
        out = model(*args)
        e1.record()
        torch.cuda.synchronize()
        bw = 0.0
        if mode == "train":
            logits = first_logits(out)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                   ids.reshape(-1)[: logits.numel() // logits.shape[-1]])
            torch.cuda.synchronize()
            e2.record()
            loss.backward()
            e3.record()
            torch.cuda.synchronize()
            bw = e2.elapsed_time(e3)
            del loss, logits
        if prof is not None and i == 1:
            prof.stop()
        res.append((e0.elapsed_time(e1), bw))
        del out
        if i == 0:   # the first call warms up; size the run by it
            t = (res[0][0] + res[0][1]) / 1000.0
            if t * iters > budget_s:
                n = max(7, min(iters, int(budget_s / max(t, 1e-6)) + 1))
        i += 1
    return res


def provenance(torch, transformers):
    p = torch.cuda.get_device_properties(0)
    lines = {
        "gpu": torch.cuda.get_device_name(0),
        "sm_count": str(p.multi_processor_count),
        "torch": torch.__version__,
        "cuda_runtime": str(torch.version.cuda),
        "cudnn": str(torch.backends.cudnn.version()),
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "host": "%s %s" % (platform.node(), platform.release()),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "tool": "calibrate/measure-models.py",
    }
    try:
        q = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version,clocks.max.sm,"
             "clocks.max.mem,power.limit", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20)
        if q.returncode == 0:
            f = [s.strip() for s in q.stdout.strip().split(",")]
            lines.update(driver=f[0], sm_clock_max=f[1], mem_clock_max=f[2],
                         power_limit=f[3])
    except (OSError, subprocess.SubprocessError, IndexError):
        pass
    return lines


FIELDS = ["model", "mode", "seq", "batch", "dtype", "attention", "iters",
          "fw_ms", "bw_ms", "e2e_ms", "fw_ms_all", "bw_ms_all",
          "peak_gib", "error"]


def main(argv):
    a = parse_args(argv)
    try:
        import torch
        import transformers
    except ImportError as e:
        print("measure-models.py: %s" % e, file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("measure-models.py: no CUDA device", file=sys.stderr)
        return 77
    transformers.logging.set_verbosity_error()
    out = sys.stdout if a.output == "-" else open(a.output + ".tmp", "w", newline="")
    for k, v in provenance(torch, transformers).items():
        out.write("# %s: %s\n" % (k, v))
    out.write("# command: measure-models.py %s\n" % " ".join(argv))
    w = csv.DictWriter(out, FIELDS)
    w.writeheader()
    failed = 0
    # one model per (config, dtype): inference and training share it
    by_model = {}
    for cfg_path, mode, seq, batch in a.runs:
        for d in a.dtypes:
            by_model.setdefault((cfg_path, d), []).append((mode, seq, batch))
    total = sum(len(v) for v in by_model.values())
    done = 0
    for (cfg_path, d), runs in by_model.items():
        name = os.path.splitext(os.path.basename(cfg_path))[0]
        with open(cfg_path) as f:
            cfg = json.load(f)
        seq2seq = cfg.get("is_encoder_decoder", False)
        torch.backends.cuda.matmul.allow_tf32 = d == "tf32"
        torch.backends.cudnn.allow_tf32 = d == "tf32"
        models = {}
        for mode, seq, batch in runs:
            done += 1
            row = dict(model=name, mode=mode, seq=seq, batch=batch, dtype=d,
                       attention=a.attention)
            t0 = time.time()
            try:
                key = "train" if mode == "train" else "inf"
                if key not in models:
                    models.clear()
                    gc.collect()
                    torch.cuda.empty_cache()
                    m = model_for(transformers, torch, cfg, mode, a.attention)
                    if d in ("fp16", "bf16"):
                        m = m.to(torch.float16 if d == "fp16" else torch.bfloat16)
                    models[key] = m
                m = models[key]
                ids = torch.ones(batch, seq, dtype=torch.int64, device="cuda")
                torch.cuda.reset_peak_memory_stats()
                prof = None
                if a.profile_dir:
                    os.makedirs(a.profile_dir, exist_ok=True)
                    prof = torch.profiler.profile(
                        activities=[torch.profiler.ProfilerActivity.CPU,
                                    torch.profiler.ProfilerActivity.CUDA],
                        record_shapes=True)
                if mode == "train":
                    m.train()
                    res = time_run(torch, m, ids, mode, seq2seq, a.iters, a.budget_s, prof)
                else:
                    m.eval()
                    with torch.no_grad():
                        res = time_run(torch, m, ids, mode, seq2seq, a.iters,
                                       a.budget_s, prof)
                if prof is not None:
                    path = os.path.join(a.profile_dir, "%s-%s-%d-%d-%s.json" %
                                        (name, mode, seq, batch, d))
                    prof.export_chrome_trace(path)
                    subprocess.run(["gzip", "-9f", path])
                best = sorted(res, key=lambda r: r[0] + r[1])[:5]
                row.update(
                    iters=len(res),
                    fw_ms="%.4f" % (sum(r[0] for r in best) / len(best)),
                    bw_ms="%.4f" % (sum(r[1] for r in best) / len(best)),
                    e2e_ms="%.4f" % (sum(r[0] + r[1] for r in best) / len(best)),
                    fw_ms_all=" ".join("%.3f" % r[0] for r in res),
                    bw_ms_all=" ".join("%.3f" % r[1] for r in res),
                    peak_gib="%.2f" % (torch.cuda.max_memory_allocated() / 2**30))
            except Exception as e:   # one run's failure (OOM ...) is its row
                failed += 1
                row["error"] = ("%s: %s" % (type(e).__name__, e))[:300]
                models.clear()
                gc.collect()
                torch.cuda.empty_cache()
            w.writerow(row)
            out.flush()
            print("measure-models.py: [%d/%d] %s %s s%d b%d %s: %s (%.1f s)" %
                  (done, total, name, mode, seq, batch, d,
                   row.get("e2e_ms") or row["error"], time.time() - t0),
                  file=sys.stderr, flush=True)
        models.clear()
    if out is not sys.stdout:
        out.close()
        os.replace(a.output + ".tmp", a.output)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
