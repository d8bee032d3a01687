#!/bin/sh
# gpusim calibrate: writes a loadable arch file that keeps the base's
# comments, replaces its own group on a rerun, and refuses bad input.
: "${GPUSIM:?}" "${GS_SRCDIR:?}"

T=$(mktemp -d "${TMPDIR:-/tmp}/gs-calibrate.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
echo "1..45"
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
not_ok () { n=$((n + 1)); echo "not ok $n - $1"; }
check () { if [ "$1" = 0 ]; then ok "$2"; else not_ok "$2"; fi; }

# A small measurement set: every fifth A100-80GB row of the NeuSight data.
gzip -dc "$GS_SRCDIR/data/neusight/kernels.csv.gz" |
  awk -F, 'NR == 1 || ($1 == "a100-pcie-80gb" && NR % 5 == 0)' > "$T/small.csv"
BASE="$GS_SRCDIR/arch/a100-pcie-80gb.cfg"
mkdir "$T/out"
OUT="$T/out/a100-pcie-80gb.cfg"

"$GPUSIM" calibrate --arch a100-pcie-80gb --date 2026-01-01 --rounds 1 -o "$OUT" \
  "$T/small.csv" > "$T/log" 2>&1
check $? "calibrate succeeds"
grep -q '^linear ' "$T/log" && grep -q '^bmm ' "$T/log"
check $? "prints the fit error of linear and bmm"
"$GPUSIM" arch show "$OUT" > "$T/show" 2>&1 &&
  grep -q 'date *"2026-01-01"' "$T/show"
check $? "the fitted file loads and records its date"
grep -q 'gemm = {' "$OUT" && grep -q 'fit_error = {' "$OUT" &&
  grep -q '^  rows = [1-9]' "$OUT"
check $? "the group holds the GEMM model, the errors and the rows used"
missing=0
grep '^ *#' "$BASE" | sort -u > "$T/comments"
while IFS= read -r line; do
  grep -qF -- "$line" "$OUT" || missing=$((missing + 1))
done < "$T/comments"
check $missing "every comment of the base file is kept"
grep -q '^base = "/' "$OUT" || grep -q '^base = "\.\./' "$OUT"
check $? "base path rewritten for another directory"

# The errors the file records are those of the file as written: gpusim
# validate with it gives the same holdout MAPE per memory-bound op (the
# row kernels follow the clock the GEMM fit settles on last).
"$GPUSIM" validate --arch "$OUT" --format csv "$T/small.csv" > "$T/val" 2>&1
mismatch=0
compared=0
for op in ln softmax add gelu; do
  rec=$(sed -n "/fit_error = {/,/};/s/^ *$op = \([0-9.]*\);.*/\1/p" "$OUT")
  got=$(awk -F, -v op="$op" '$3 == op && $5 == "no" { print $7 }' "$T/val")
  [ -n "$rec" ] && [ -n "$got" ] || continue
  compared=$((compared + 1))
  awk -v a="$rec" -v b="$got" 'BEGIN { d = a - b; exit !(d < 0.006 && d > -0.006) }' ||
    { mismatch=$((mismatch + 1)); echo "# $op: recorded $rec, validate $got"; }
done
[ "$compared" -ge 3 ] && [ "$mismatch" = 0 ]
check $? "recorded memory errors match gpusim validate with the file ($compared ops)"

"$GPUSIM" calibrate --arch a100-pcie-80gb --date 2026-01-01 --rounds 1 \
  -o "$T/out/again.cfg" "$T/small.csv" > /dev/null 2>&1 &&
  cmp -s "$T/out/again.cfg" "$OUT"
check $? "the fit is deterministic"
cp "$OUT" "$T/first.cfg"
"$GPUSIM" calibrate --arch "$OUT" --date 2026-01-01 --rounds 1 -o "$OUT" \
  "$T/small.csv" > /dev/null 2>&1
check $? "recalibrating the fitted file succeeds"
[ "$(grep -c '>>> gpusim calibrate:' "$OUT")" = 1 ]
check $? "a rerun replaces the group instead of adding one"
! grep -q 'not fitted' "$T/log"
check $? "every NeuSight row is taken by a fitter"
# Rows no fitter takes are counted per op on stderr; bmm_nt rows (here
# bmm rows renamed, kernel unknown) get their own error line.
{
  echo "device,op,kernel,grid_x,grid_y,grid_z,block_x,block_y,block_z,B,M,N,K,H,latency_ms"
  awk -F, -v OFS=, '$2 == "bmm" && n++ < 8 { $2 = "bmm_nt"; $3 = ""; print }' "$T/small.csv"
  echo "a100-pcie-80gb,dram_read,,,,,,,,,,,,268435456,0.2"
  echo "a100-pcie-80gb,attention,,,,,,,,8,512,512,64,,0.2"
} > "$T/extra.csv"
"$GPUSIM" calibrate --arch "$OUT" --gemm-only --rounds 1 -o "$T/out/g.cfg" \
  "$T/small.csv" "$T/extra.csv" > "$T/log2" 2>&1 &&
  grep -q 'not fitted (no fitter takes them): attention 1, dram_read 1$' "$T/log2" &&
  grep -q '^bmm_nt ' "$T/log2"
check $? "unfitted rows reported per op; bmm_nt rows fitted"
"$GPUSIM" calibrate --arch "$OUT" --gemm-only --rounds 1 -o "$T/out/g.cfg" \
  "$T/small.csv" > /dev/null 2>&1 &&
  [ "$(grep -c '^    memory = {' "$OUT")" = "$(grep -c '^    memory = {' "$T/out/g.cfg")" ] &&
  grep -q 'kept from the base file' "$T/out/g.cfg"
check $? "--gemm-only keeps the memory calibration of the base"

# Bad input: usage (2), bad files (3), nothing to fit (1); no output left.
run () {
  want=$1; what=$2; shift 2
  rm -f "$T/bad.cfg"
  "$GPUSIM" calibrate "$@" > "$T/err" 2>&1
  got=$?
  if [ "$got" = "$want" ] && [ ! -e "$T/bad.cfg" ] && grep -q . "$T/err"; then
    ok "$what (exit $want)"
  else
    not_ok "$what (exit $got, expected $want)"; sed 's/^/# /' "$T/err"
  fi
}
printf 'device,op,latency_ms\na100-pcie-80gb,bmm,notanumber\n' > "$T/garbage.csv"
run 2 "no --arch" -o "$T/bad.cfg" "$T/small.csv"
run 2 "no measurement file" --arch a100-pcie-80gb -o "$T/bad.cfg"
run 3 "missing measurement file" --arch a100-pcie-80gb -o "$T/bad.cfg" \
  "$T/nonexistent.csv"
run 3 "malformed measurement file" --arch a100-pcie-80gb -o "$T/bad.cfg" \
  "$T/garbage.csv"
run 1 "no rows for the device" --arch a100-pcie-80gb --device rtx-9090 \
  -o "$T/bad.cfg" "$T/small.csv"
run 2 "bad --date" --arch a100-pcie-80gb --date yesterday -o "$T/bad.cfg" \
  "$T/small.csv"
run 2 "unknown arch" --arch no-such-gpu -o "$T/bad.cfg" "$T/small.csv"
# Memory-bound rows alone: no GEMM training rows to set the clock and the
# GEMM library, which the fit would otherwise drop from the base.
awk -F, 'NR == 1 || $2 == "add" || $2 == "ln"' "$T/small.csv" > "$T/mem.csv"
run 1 "no GEMM training rows" --arch a100-pcie-80gb -o "$T/bad.cfg" \
  "$T/mem.csv"
# Counts of one are singular: one row, one row not fitted.
printf 'device,op,B,H,latency_ms\na100-pcie-80gb,add,64,64,0.01\n' > "$T/one.csv"
run 1 "one memory-bound row" --arch a100-pcie-80gb -o "$T/bad.cfg" "$T/one.csv"
grep -q "^gpusim calibrate: nothing to fit: the one row for device 'a100-pcie-80gb' is not a GEMM row (linear, linear_nn, bmm, bmm_nt) of the training half (1 memory-bound training row); " "$T/err"
check $? "one row: 'the one row', '1 memory-bound training row'"
{ cat "$T/small.csv"; echo "a100-pcie-80gb,dram_read,,,,,,,,,,,,268435456,0.2"; } \
  > "$T/one-unfitted.csv"
"$GPUSIM" calibrate --arch "$OUT" --gemm-only --rounds 1 -o "$T/out/g1.cfg" \
  "$T/one-unfitted.csv" > "$T/log3" 2>&1 &&
  grep -q "^gpusim calibrate: 1 of the $(($(wc -l < "$T/one-unfitted.csv") - 1)) a100-pcie-80gb rows is not fitted (no fitter takes them): dram_read 1\$" "$T/log3"
check $? "one row not fitted: '1 of the N rows is'"
# Shapes no GPU holds: refused as gpusim predict refuses them, naming the
# file and line, before any fit (2^32 x 2^32 elements overflowed it).
{ cat "$T/small.csv"; echo 'a100-pcie-80gb,add,,,,,,,,4294967296,,,,4294967296,1.0'; } \
  > "$T/huge.csv"
run 3 "an add of 2^64 elements" --arch a100-pcie-80gb -o "$T/bad.cfg" \
  "$T/huge.csv"
grep -q "huge.csv:$(wc -l < "$T/huge.csv"): add: its operands need" "$T/err"
check $? "the refusal names the file and line"

# Rows of GPU time: timed by CUPTI (timing = cupti) or a profiler trace's
# kernels (a cpu_op_index column) they are compared with the simulated GPU
# time and hold no host cost, so a fit on them alone keeps the base's host
# costs (the GEMM overheads and burst, the memory-bound ops' host times)
# and says so.  The set: test-gpu's own GPU time of some NeuSight shapes.
A="$GS_SRCDIR/tests/data/predict/test-gpu.cfg"
G="$GS_SRCDIR/tests/data/predict/gputime-shapes.csv"
J="$GS_BUILDDIR/tests/jsonq"
"$GPUSIM" predict --arch "$A" --format json "$G" > "$T/g.json"
i=0
rows=$("$J" "$T/g.json" rows.#)
while [ $i -lt "$rows" ]; do
  "$J" "$T/g.json" rows.$i.gpu_ms
  i=$((i + 1))
done > "$T/g.times"
timed () {  # timed cupti|cuda-events|trace: the shapes at their GPU time
  awk -F, -v mode="$1" 'NR == FNR { g[FNR] = sprintf ("%.9g", $1); next }
    /^#/ && !h { next }
    !h && mode == "trace" { h = 1; print $0 ",latency_ms,cpu_op_index"; next }
    !h { h = 1; print $0 ",latency_ms,timing"; next }
    { k++ }
    mode != "trace" { print $0 "," g[k] "," mode; next }
    # A GEMM launches two kernels, each half of its time; the rest one.
    $2 == "linear" || $2 == "bmm" {
      printf "%s,%.17g,%d\n%s,%.17g,%d\n", $0, g[k] / 2, k, $0, g[k] / 2, k
      next }
    { printf "%s,%.17g,%d\n", $0, g[k], k }' "$T/g.times" "$G"
}
mkdir "$T/cupti" "$T/trace" "$T/events"
timed cupti > "$T/cupti/set.csv"
timed trace > "$T/trace/set.csv"
timed cuda-events > "$T/events/set.csv"
for t in cupti trace events; do
  "$GPUSIM" calibrate --arch "$A" --date 2026-01-01 --rounds 1 \
    -o "$T/$t/fit.cfg" "$T/$t/set.csv" > "$T/$t/log" 2>&1 ||
    sed 's/^/# /' "$T/$t/log"
done
host () { grep -E '^ *(pre|post)_us = ' "$1" | tr -d ' '; }
gemm_host () { grep -E '^ *(overhead_us|burst) = ' "$1" | tr -d ' '; }
gemm_host "$GS_SRCDIR/arch/a100-pcie-40gb.cfg" > "$T/base-gemm"
host "$A" > "$T/base-host"
[ -s "$T/base-gemm" ] && [ -s "$T/base-host" ] &&
  gemm_host "$T/cupti/fit.cfg" | cmp -s - "$T/base-gemm" &&
  host "$T/cupti/fit.cfg" | cmp -s - "$T/base-host"
check $? "timing = cupti: the host costs are the base's"
grep -q "so overhead_us and burst are the base's" "$T/cupti/fit.cfg" &&
  grep -q "so the host costs are the base's" "$T/cupti/fit.cfg" &&
  grep -q '^92 of the 92 test-gpu rows are GPU time' "$T/cupti/log" &&
  grep -q '^host costs kept from test-gpu (no training row of theirs timed an op.s latency): GEMM overhead_us and burst; memory-bound host pre_us and post_us$' "$T/cupti/log"
check $? "the method text and the report say so"
cmp -s "$T/cupti/fit.cfg" "$T/trace/fit.cfg"
check $? "a trace's kernels of one op call, summed, fit as the CUPTI rows do"
[ -s "$T/events/fit.cfg" ] &&
  ! gemm_host "$T/events/fit.cfg" | cmp -s - "$T/base-gemm" &&
  ! host "$T/events/fit.cfg" | cmp -s - "$T/base-host" &&
  ! grep -q 'GPU time' "$T/events/log"
check $? "timing = cuda-events: op latencies, host costs fitted"

# MEASUREMENTS "-" is standard input, read whole and its format found from
# its first bytes, named <stdin> (in the source it records too); it can be
# read once.
"$GPUSIM" calibrate --arch "$A" --date 2026-01-01 --rounds 1 \
  -o "$T/cupti/stdin.cfg" - < "$T/cupti/set.csv" > /dev/null 2>&1 &&
  grep -q '^  source = "<stdin> (device test-gpu)";' "$T/cupti/stdin.cfg" &&
  grep -v '^  source = ' "$T/cupti/fit.cfg" > "$T/fit1" &&
  grep -v '^  source = ' "$T/cupti/stdin.cfg" > "$T/fit2" &&
  cmp -s "$T/fit1" "$T/fit2"
check $? "- reads a measurement set from standard input: the same fit"
run 2 "standard input given twice" --arch "$A" -o "$T/bad.cfg" - -
grep -q "'-' (standard input) given 2 times: it can be read once" "$T/err"
check $? "the refusal says that standard input can be read once"

# --model-runs: ops timed inside model runs fit model_runs.clock_ratio
# alone.  Rows made by predicting GEMMs on the L4 at 1.25 times its
# calibrated clock give back a ratio of 1.25, and nothing else changes.
L4="$GS_SRCDIR/arch/l4.cfg"
clock=$(sed -n 's/^ *clock_mhz = \([0-9.]*\);.*/\1/p' "$L4")
{
  echo "op,B,M,N,K,dtype"
  echo "linear,8,512,4096,1024,fp32"
  echo "linear,8,512,1024,4096,fp32"
  echo "linear,1,4096,1280,3840,fp32"
  echo "linear,2,2048,2048,2048,fp32"
  echo "bmm,64,1024,1024,64,fp32"
  echo "linear,1,64,64,64,fp32"
} > "$T/mr-shapes.csv"
"$GPUSIM" predict --arch l4 --set "calibration.clock_mhz=$(awk -v c="$clock" 'BEGIN { printf "%.6f", c * 1.25 }')" \
  "$T/mr-shapes.csv" 2> /dev/null |
  awk -F, -v OFS=, 'NR == 1 { print "device,op,B,M,N,K,latency_ms"; next }
    { print "l4", $1, $2, $3, $4, $5, $7 }' > "$T/mr.csv"
mkdir "$T/mr"
"$GPUSIM" calibrate --arch l4 --model-runs --date 2026-01-01 \
  -o "$T/mr/l4.cfg" "$T/mr.csv" > "$T/mr/log" 2>&1
check $? "--model-runs succeeds"
ratio=$(sed -n 's/^ *clock_ratio = \([0-9.]*\);/\1/p' "$T/mr/l4.cfg")
rows=$(sed -n 's/^ *rows = \([0-9]*\);$/\1/p' "$T/mr/l4.cfg" | tail -1)
awk -v r="$ratio" 'BEGIN { exit !(r > 1.245 && r < 1.255) }' && [ "$rows" = 5 ]
check $? "it recovers the clock ratio the rows were made at (1.25: $ratio, on $rows GEMMs of 0.5 ms or more)"
grep -q '^model-run clock: 1\.2[45][0-9]* x ' "$T/mr/log"
check $? "and says so"
! grep -q 'host_ratio' "$T/mr/l4.cfg" && ! grep -q '^model-run host' "$T/mr/log"
check $? "with no traced node that launches no kernel, no host ratio is written"
# The host: the median of the nodes that launch no kernel (size, view,
# permute, transpose, dim method calls) over the reference host's 14.34 us.
# Six such nodes at 7.17 us and one slower one give 0.5; a function-call
# view and a node with an op are not counted.
awk -F, -v OFS=, 'NR == 1 { print $0, "fx_op", "fx_target"; next } { print $0, "call_module", "x" }' \
  "$T/mr.csv" > "$T/mr-host.csv"
for t in size view permute transpose dim view size; do
  echo "l4,,,,,,0.00717,call_method,$t"
done | sed '$s/0.00717/0.09/' >> "$T/mr-host.csv"
echo "l4,,,,,,0.5,call_function,view" >> "$T/mr-host.csv"
echo "l4,add,8,,,,0.5,call_method,size" >> "$T/mr-host.csv"
"$GPUSIM" calibrate --arch l4 --model-runs --date 2026-01-01 \
  -o "$T/mr/l4h.cfg" "$T/mr-host.csv" > "$T/mr/logh" 2>&1 &&
  grep -q '^  host_ratio = 0\.5000;$' "$T/mr/l4h.cfg" &&
  grep -q '^model-run host: 0\.5000 x the reference host (median no-kernel node 7\.17 us of 7' "$T/mr/logh"
check $? "the host ratio is the no-kernel nodes' median over the reference host's, and is reported"
htime () { "$GPUSIM" run "$GS_SRCDIR/examples/gpt2.workload" --batch 1 --seq 16 \
  --format json "$@" 2> /dev/null | sed -n 's/^  "total_ms" : \([0-9.e+-]*\),*$/\1/p'; }
h1=$(htime --arch "$T/mr/l4h.cfg" --set model_runs.host_ratio=1)
h05=$(htime --arch "$T/mr/l4h.cfg")
h2=$(htime --arch "$T/mr/l4h.cfg" --set model_runs.host_ratio=2)
awk -v a="$h05" -v b="$h1" -v c="$h2" 'BEGIN { exit !(a > 0 && a < b / 1.1 && c > b * 1.5) }'
check $? "a host-bound run follows the host ratio ($h05 ms at 0.5, $h1 at 1, $h2 at 2)"
# Which rules pick a single nn GEMM's kernel: rows made on the H100 with
# the heuristic's kernels for x @ W are fitted best by it, rows made with
# the nn.Linear rules' kernels by those; the choice is written and said.
{
  echo "op,B,M,N,K,dtype"
  echo "linear,8,512,4096,1024,fp32"
  echo "linear_nn,1,4096,5120,1280,fp32"
  echo "linear_nn,1,8192,1280,1280,fp32"
  echo "linear_nn,1,2048,10240,2560,fp32"
  echo "linear_nn,1,4096,2560,2560,fp32"
} > "$T/nn-shapes.csv"
for h in true false; do
  "$GPUSIM" predict --arch h100-sxm5-80gb --set model_runs.nn_heuristic=$h \
    "$T/nn-shapes.csv" 2> /dev/null |
    awk -F, -v OFS=, 'NR == 1 { print "device,op,B,M,N,K,latency_ms"; next }
      { print "h100-sxm5-80gb", $1, $2, $3, $4, $5, $7 }' > "$T/nn-$h.csv"
  "$GPUSIM" calibrate --arch h100-sxm5-80gb --model-runs --date 2026-01-01 \
    -o "$T/mr/nn-$h.cfg" "$T/nn-$h.csv" > "$T/mr/nn-$h.log" 2>&1
done
grep -q '^  nn_heuristic = true;$' "$T/mr/nn-true.cfg" &&
  grep -q '^model-run nn GEMMs: heuristic (mean |log error| 0\.000 with the heuristic, 0\.[0-9]*[1-9][0-9]* with the nn.Linear rules; 4 rows)$' "$T/mr/nn-true.log" &&
  ! grep -q 'nn_heuristic' "$T/mr/nn-false.cfg" &&
  grep -q '^model-run nn GEMMs: nn.Linear rules (mean |log error| 0\.[0-9]*[1-9][0-9]* with the heuristic, 0\.000 with the nn.Linear rules; 4 rows)$' "$T/mr/nn-false.log"
check $? "--model-runs keeps the kernel rules its linear_nn rows were made with"
strip () { sed '/>>> gpusim calibrate --model-runs/,/<<< gpusim calibrate --model-runs/d; /^base = /d' "$1"; }
strip "$L4" > "$T/mr/a"; strip "$T/mr/l4.cfg" > "$T/mr/b"
cmp -s "$T/mr/a" "$T/mr/b"
check $? "the rest of the file, its calibration group included, is the base's"
"$GPUSIM" calibrate --arch "$T/mr/l4.cfg" --model-runs -o "$T/mr/l4.cfg" \
  "$T/mr.csv" > /dev/null 2>&1 &&
  [ "$(grep -c '>>> gpusim calibrate --model-runs' "$T/mr/l4.cfg")" = 1 ] &&
  [ "$(grep -c '^model_runs = {' "$T/mr/l4.cfg")" = 1 ]
check $? "a rerun replaces the model_runs group"
total () { "$GPUSIM" run "$GS_SRCDIR/examples/gpt2.workload" --format json "$@" 2> /dev/null |
  sed -n 's/^  "total_ms" : \([0-9.e+-]*\),*$/\1/p'; }
fast=$(total --arch "$T/mr/l4.cfg")
slow=$(total --arch "$T/mr/l4.cfg" --set model_runs.clock_ratio=0)
spec1=$(total --arch "$T/mr/l4.cfg" --spec-only)
spec2=$(total --arch "$L4" --spec-only --set model_runs.clock_ratio=0)
awk -v f="$fast" -v s="$slow" 'BEGIN { exit !(f > 0 && f < s / 1.1) }' &&
  [ -n "$spec1" ] && [ "$spec1" = "$spec2" ]
check $? "gpusim run runs at the model-run clock ($fast ms, $slow without), --spec-only without it"
run 2 "--model-runs with --gemm-only" --arch l4 --model-runs --gemm-only \
  -o "$T/bad.cfg" "$T/mr.csv"
awk -F, 'NR == 1 || $2 != "linear" || $5 < 1000' "$T/mr.csv" |
  awk -F, -v OFS=, 'NR > 1 { $7 = 0.2 } { print }' > "$T/mr-short.csv"
run 1 "--model-runs with no GEMM of 0.5 ms or more" --arch l4 --model-runs \
  -o "$T/bad.cfg" "$T/mr-short.csv"
