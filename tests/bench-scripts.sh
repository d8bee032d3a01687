#!/bin/sh
# gpusim tests: the accuracy scripts of bench/ (Python 3, standard library),
# on small stand-ins for their inputs: a NeuSight checkout of three run
# records (bench/neusight-e2e.py), one per-op profile of a few nodes
# (bench/neusight-nodes.py) and a measure-models.py CSV of two runs
# (bench/measured-e2e.py).  The measured times are made up; what is checked
# is that each script runs gpusim as it says, takes its prediction as is
# and does its arithmetic right: the signed error, the per-GPU and overall
# mean absolute error, the count over 10%, the forward and backward
# columns, the comparison with a published prediction, and which runs it
# skips.  Skipped without python3.
if ! command -v python3 > /dev/null 2>&1; then
  echo "1..0 # SKIP python3 not found"
  exit 0
fi
B="$GS_SRCDIR/bench"
M="$GS_SRCDIR/data/neusight/models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..15"

check () {  # check N description command...: passes when the command does
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

# A checkout: two V100 runs of a model the script knows, one of a model it
# does not, one it leaves out by name (a data-parallel split) and the L4's
# Switch run, which it skips.
L="$tmp/co/scripts/asplos/label"
mkdir -p "$L/Tesla_V100-PCIE-32GB" "$L/NVIDIA_L4"
printf '{"num_layer": 24, "e2e_latency": 250.0, "fw_latency": 250.0, "bwall_latency": 0}\n' \
  > "$L/Tesla_V100-PCIE-32GB/bert_large-inf-512-8.json"
printf '{"num_layer": 24, "e2e_latency": 240.0, "fw_latency": 80.0, "bwall_latency": 160.0}\n' \
  > "$L/Tesla_V100-PCIE-32GB/bert_large-train-512-2.json"
printf '{"num_layer": 2, "e2e_latency": 10.0}\n' \
  > "$L/Tesla_V100-PCIE-32GB/tiny_model-inf-512-8.json"
printf '{"num_layer": 24, "e2e_latency": 100.0}\n' \
  > "$L/Tesla_V100-PCIE-32GB/bert_large-inf-512-8-dp2.json"
printf '{"num_layer": 0, "e2e_latency": 100.0}\n' \
  > "$L/NVIDIA_L4/switchxl4-inf-512-1.json"

# gpusim's own predictions of the two runs.
"$GPUSIM" run "$M/bert_large.json" --arch v100-pcie-32gb --batch 8 --seq 512 \
  --mode inference --format json > "$tmp/inf.json" &&
"$GPUSIM" run "$M/bert_large.json" --arch v100-pcie-32gb --batch 2 --seq 512 \
  --mode training --format json > "$tmp/train.json" || exit 1

python3 "$B/neusight-e2e.py" "$tmp/co" --gpusim "$GPUSIM" --jobs 2 \
  > "$tmp/e2e.txt" 2> "$tmp/e2e.err"
rc=$?
python3 "$B/neusight-e2e.py" "$tmp/co" --gpusim "$GPUSIM" --jobs 2 --phases \
  > "$tmp/phases.txt" 2>&1
rc_phases=$?

# Compares the script's output with the arithmetic done here.  $1: which
# check; reads the outputs above.
verify () {
  python3 - "$1" "$tmp" <<'EOF'
import json, sys
what, tmp = sys.argv[1], sys.argv[2]
inf = json.load(open(tmp + "/inf.json"))
train = json.load(open(tmp + "/train.json"))
want = {"bert_large-inf-512-8": (250.0, inf["total_ms"]),
        "bert_large-train-512-2": (240.0, train["total_ms"])}

def rows(path):
    out = {}
    for line in open(path):
        f = line.split()
        if len(f) >= 5 and f[0] in ("v100-pcie-32gb", "l4", "all") \
                and not f[1].isdigit():
            out[f[1]] = f
    return out

def summary(path):
    return {l.split()[0]: l.split() for l in open(path)
            if len(l.split()) == 5 and l.split()[1].isdigit()}

r = rows(tmp + "/e2e.txt")
errs = {k: (p - m) / m * 100 for k, (m, p) in want.items()}
if what == "rows":
    sys.exit(sorted(r) != sorted(want))
if what == "values":
    for k, (m, p) in want.items():
        f = r[k]
        if abs(float(f[2]) - m) > 0.005 or abs(float(f[3]) - p) > 0.005 \
                or abs(float(f[4]) - errs[k]) > 0.005 or f[5] != "-":
            sys.exit(1)
if what == "summary":
    s = summary(tmp + "/e2e.txt")
    mape = sum(abs(e) for e in errs.values()) / len(errs)
    worst = max(abs(e) for e in errs.values())
    over = sum(abs(e) > 10 for e in errs.values())
    for g in ("v100-pcie-32gb", "all"):
        f = s[g]
        if int(f[1]) != 2 or abs(float(f[2]) - mape) > 0.005 \
                or abs(float(f[3]) - worst) > 0.005 or int(f[4]) != over:
            sys.exit(1)
    sys.exit("l4" in s)
if what == "phases":
    f = rows(tmp + "/phases.txt")["bert_large-train-512-2"]
    fw = (train["forward_ms"] - 80.0) / 80.0 * 100
    bw = (train["backward_ms"] - 160.0) / 160.0 * 100
    calls = train.get("cuda_mallocs") or 0
    if abs(float(f[6]) - fw) > 0.05 or abs(float(f[7]) - bw) > 0.05 \
            or int(f[9]) != calls:
        sys.exit(1)
    # The inference run has no phase columns.
    sys.exit(len(rows(tmp + "/phases.txt")["bert_large-inf-512-8"]) != 6)
EOF
}

check 1 "neusight-e2e.py exits 0" test "$rc" = 0
check 2 "one row per run it knows: no unknown model, split or L4 Switch" \
  verify rows
check 3 "measured as recorded, predicted as gpusim run says, signed error" \
  verify values
check 4 "per GPU and overall: runs, mean absolute error, worst, over 10%" \
  verify summary
verify_phases () { test "$rc_phases" = 0 && verify phases; }
check 5 "--phases: the training run's forward and backward errors, mallocs" \
  verify_phases

# No run of the GPUs asked for: an error, not an empty table.
python3 "$B/neusight-e2e.py" "$tmp/co" --gpusim "$GPUSIM" --arch t4 \
  > /dev/null 2> "$tmp/none.err"
rc=$?
check 6 "--arch with no runs: exit 1, saying where it looked" \
  sh -c "test $rc = 1 && grep -q 'no runs under' '$tmp/none.err'"

# measured-e2e.py: a CSV in measure-models.py's format, two runs and one
# that failed when measured (kept out).
cat > "$tmp/models.csv" <<'EOF'
# gpu: NVIDIA Tesla V100-PCIE-32GB
# transformers: 4.36.0
model,mode,seq,batch,dtype,attention,iters,fw_ms,bw_ms,e2e_ms,peak_gib,error
bert_large,inf,512,8,fp32,eager,25,250.0,0,250.0,5.0,
bert_large,train,512,2,fp32,eager,25,80.0,160.0,240.0,9.0,
gpt2_large,inf,1024,4,fp32,eager,0,,,,,out of memory
EOF
python3 "$B/measured-e2e.py" --gpusim "$GPUSIM" --arch v100-pcie-32gb \
  --models "$M" --jobs 2 "$tmp/models.csv" > "$tmp/measured.txt" 2>&1
rc=$?
check 7 "measured-e2e.py exits 0" test "$rc" = 0
check 8 "measured-e2e.py: two rows, the failed measurement left out" \
  sh -c "test \$(grep -c '^bert_large ' '$tmp/measured.txt') = 2 &&
         ! grep -q '^gpt2_large' '$tmp/measured.txt'"
# Its errors are printed to 0.1%: the inference row's against the
# arithmetic here, and the dtype summary's mean.
check 9 "measured-e2e.py: the inference row's prediction and error" \
  python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
p = json.load(open(tmp + "/inf.json"))["total_ms"]
for line in open(tmp + "/measured.txt"):
    f = line.split()
    if f[:5] == ["bert_large", "inf", "512", "8", "fp32"]:
        ok = abs(float(f[6]) - p) <= 0.005 \
            and abs(float(f[7]) - (p - 250.0) / 250.0 * 100) <= 0.05
        sys.exit(not ok)
sys.exit(1)
EOF
check 10 "measured-e2e.py: the fp32 summary's runs and mean error" \
  python3 - "$tmp" <<'EOF'
import sys
tmp = sys.argv[1]
errs, summ = [], None
for line in open(tmp + "/measured.txt"):
    f = line.split()
    if f and f[0] == "bert_large":
        errs.append(abs(float(f[7])))
    if f and f[0] == "fp32" and len(f) == 5:
        summ = f
ok = summ is not None and int(summ[1]) == 2 \
    and abs(float(summ[2]) - sum(errs) / 2) <= 0.06
sys.exit(not ok)
EOF

# neusight-nodes.py: a training run's per-op profile with two layer-0 GEMM
# groups (the query nn.Linear; the attention's two matmuls, summed), a
# layer-1 Linear and a layer-0 LayerNorm it leaves out.
N="$tmp/co2/scripts/asplos/label/Tesla_V100-PCIE-32GB"
mkdir -p "$N"
python3 - "$N/bert_large-train-512-2.csv" <<'EOF'
import csv, sys
def stack(path, cls):
    return ("{'nn_module_stack': {'%s': ('%s', <class '%s'>)}}"
            % (path, path, cls))
lin = "torch.nn.modules.linear.Linear"
att = "transformers.models.bert.modeling_bert.BertSelfAttention"
rows = [
    ("call_module", "bert.encoder.layer.0.attention.self.query",
     stack("bert.encoder.layer.0.attention.self.query", lin), 0.5, 1.0),
    ("call_function", "<built-in method matmul of type object at 0x1>",
     stack("bert.encoder.layer.0.attention.self", att), 0.3, 0.6),
    ("call_function", "<built-in method matmul of type object at 0x1>",
     stack("bert.encoder.layer.0.attention.self", att), 0.2, 0.4),
    ("call_module", "bert.encoder.layer.1.attention.self.query",
     stack("bert.encoder.layer.1.attention.self.query", lin), 9.0, 9.0),
    ("call_module", "bert.encoder.layer.0.output.LayerNorm",
     stack("bert.encoder.layer.0.output.LayerNorm",
           "torch.nn.modules.normalization.LayerNorm"), 9.0, 9.0),
]
with open(sys.argv[1], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["op", "target", "meta", "fw_latency", "bw_latency"])
    w.writerows(rows)
EOF
python3 "$B/neusight-nodes.py" "$tmp/co2" --gpusim "$GPUSIM" --detail \
  > "$tmp/nodes.txt" 2>&1
rc=$?
check 11 "neusight-nodes.py exits 0 with one run" \
  sh -c "test $rc = 0 &&
         test \$(grep -c '^v100-pcie-32gb *bert_large-train-512-2' '$tmp/nodes.txt') = 1"
# gpusim's side of each group, from the run's JSON: layer 0's forward GEMM
# and copy kernels, backward GEMM and reduce kernels, by tag.
nodes () {
  python3 - "$1" "$tmp" <<'EOF'
import json, sys
what, tmp = sys.argv[1], sys.argv[2]
d = json.load(open(tmp + "/train.json"))
want = {"bert.encoder.layer.0.attention.self.query": (0.5, 1.0),
        "bert.encoder.layer.0.attention.self.matmul": (0.5, 1.0)}
pred = {}
for k in d["kernels"]:
    if k.get("layer") != 0:
        continue
    fw = k["phase"] == "forward" and k["op_class"] in ("gemm", "copy")
    bw = k["phase"] == "backward" and k["op_class"] in ("gemm", "reduce")
    if fw or bw:
        t = pred.setdefault(k["tag"], [0.0, 0.0])
        t[0 if fw else 1] += k["time_ms"]
lines = [l.split() for l in open(tmp + "/nodes.txt")]
if what == "groups":
    got = {f[0]: f[1:] for f in lines if len(f) == 7 and f[0] in
           [g[-40:] for g in want]}
    if len(got) != 2:
        sys.exit(1)
    for g, (lf, lb) in want.items():
        f = [float(x) for x in got[g[-40:]]]
        pf, pb = pred[g]
        ok = (abs(f[0] - lf) < 1e-6 and abs(f[1] - pf) < 0.0015
              and abs(f[2] - (pf - lf) / lf * 100) < 0.06
              and abs(f[3] - lb) < 1e-6 and abs(f[4] - pb) < 0.0015
              and abs(f[5] - (pb - lb) / lb * 100) < 0.06)
        if not ok:
            sys.exit(1)
if what == "run":
    f = next(f for f in lines if f[:2] == ["v100-pcie-32gb",
                                            "bert_large-train-512-2"])
    pf = sum(pred[g][0] for g in want)
    pb = sum(pred[g][1] for g in want)
    ok = (abs(float(f[2]) - 1.0) < 1e-6 and abs(float(f[3]) - pf) < 0.002
          and abs(float(f[5]) - 2.0) < 1e-6 and abs(float(f[6]) - pb) < 0.002)
    sys.exit(not ok)
EOF
}
check 12 "neusight-nodes.py: each group's times beside gpusim's layer-0 kernels" \
  nodes groups
check 13 "neusight-nodes.py: the run's sums, layer 1 and the LayerNorm left out" \
  nodes run

# --against: a published prediction of the inference run only (the
# training run has none: "-", and it is left out of the last table).
P="$tmp/co/scripts/asplos/results/prediction/Tesla_V100-PCIE-32GB/neusight"
mkdir -p "$P"
printf '{"num_layer": 24, "e2e_latency": 275.0, "fw_latency": 275.0}\n' \
  > "$P/bert_large-inf-512-8.json"
python3 "$B/neusight-e2e.py" "$tmp/co" --gpusim "$GPUSIM" --jobs 2 \
  --against neusight > "$tmp/against.txt" 2>&1
rc_against=$?
against () {
  test "$rc_against" = 0 || return 1
  python3 - "$1" "$tmp" <<'EOF'
import json, sys
what, tmp = sys.argv[1], sys.argv[2]
p = json.load(open(tmp + "/inf.json"))["total_ms"]
lines = [l.split() for l in open(tmp + "/against.txt")]
if what == "column":
    inf = next(f for f in lines if f[:2] == ["v100-pcie-32gb",
                                              "bert_large-inf-512-8"])
    train = next(f for f in lines if f[:2] == ["v100-pcie-32gb",
                                                "bert_large-train-512-2"])
    sys.exit(not (len(inf) == 7 and abs(float(inf[6]) - 10.0) < 0.005
                  and train[6] == "-"))
if what == "table":
    at = next(i for i, f in enumerate(lines) if f[:3] == ["on", "the", "runs"])
    rows = {f[0]: f for f in lines[at + 2:] if f}
    mine = abs(p - 250.0) / 250.0 * 100
    f = rows.get("all")
    ok = (sorted(rows) == ["all", "v100-pcie-32gb"] and int(f[1]) == 1
          and abs(float(f[2]) - mine) < 0.005 and int(f[3]) == (mine > 10)
          and abs(float(f[4]) - 10.0) < 0.005 and int(f[5]) == 0)
    sys.exit(not ok)
EOF
}
check 14 "--against: the published prediction's signed error, - where none" \
  against column
check 15 "--against: the last table counts only the runs it predicted" \
  against table
