#!/bin/sh
# gpusim tests: `gpusim validate` -- the error statistics on a measurement
# set made from known predictions, the CSV and text tables, the spec-only
# (transferred calibration) cells, and bad usage and input.
cd "$GS_SRCDIR/tests/data/predict" || exit 1
A="$GS_SRCDIR/tests/data/predict/test-gpu.cfg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..24"

check () {  # check N description command...: passes when the command does
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

# Measurements 10% slower than the predictions: every cell's error is
# |p - 1.1 p| / 1.1 p = 9.09%, its bias -9.09%.
printf 'op,B,H,dtype\nadd,1024,4096,\nrelu,65536,1024,\nrelu,1000,1000,\nln,32768,1600,\nsoftmax,8192,1024,\nsoftmax,8192,6400,\n' \
  > "$tmp/shapes.csv"
"$GPUSIM" predict --arch "$A" "$tmp/shapes.csv" > "$tmp/pred.csv"
awk -F, 'NR == 1 { print "device,op,B,H,dtype,latency_ms"; next }
         { printf "test-gpu,%s,%s,%s,%s,%.9g\n", $1, $2, $3, $4, $5 * 1.1 }' \
  "$tmp/pred.csv" > "$tmp/measured.csv"

"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all --format csv \
  > "$tmp/v.csv"
rc=$?
check 1 "exit 0 and the exact CSV header" sh -c "test $rc = 0 &&
  test \"\$(head -1 '$tmp/v.csv')\" = \
  'arch,class,op,split,spec_only,rows,mape,median_ape,p90_ape,max_ape,bias,failed'"
check 2 "every cell: MAPE, median, p90 and max 9.09%, bias -9.09%" \
  awk -F, 'NR > 1 { n++; for (i = 7; i <= 10; i++) if ($i < 9.08 || $i > 9.10) bad = 1;
                   if ($11 > -9.08 || $11 < -9.10 || $12 != 0) bad = 1 }
           END { exit bad || n != 7 }' "$tmp/v.csv"
check 3 "per class and per op: elementwise 3 rows, relu 2, norm 1, softmax 2" \
  grep -q -e '^test-gpu,elementwise,,all,no,3,' "$tmp/v.csv"
check 4 "op rows under their class" sh -c "
  grep -q '^test-gpu,elementwise,relu,all,no,2,' '$tmp/v.csv' &&
  grep -q '^test-gpu,norm,ln,all,no,1,' '$tmp/v.csv' &&
  grep -q '^test-gpu,softmax,,all,no,2,' '$tmp/v.csv'"

# 5. The text table for people.
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all > "$tmp/v.txt"
check 5 "text: a header line and the softmax class at 9.09%" sh -c "
  grep -q 'arch  *class  *op  *rows  *MAPE%  *med%  *p90%  *max%  *bias%' '$tmp/v.txt' &&
  grep -Eq '^test-gpu +softmax +\\(all\\) +2 +9\\.09 ' '$tmp/v.txt'"

# 6. Spec-only: two donors with this GPU's memory calibration; what they
#    transfer to it is its own, so the spec-only cells match the others.
mkdir "$tmp/arch"
for d in donor-a donor-b; do
  printf 'base = "%s";\nname = "%s";\n' "$A" "$d" > "$tmp/arch/$d.cfg"
done
GPUSIM_ARCH_PATH="$tmp/arch" "$GPUSIM" validate --arch "$A" "$tmp/measured.csv" \
  --all --spec-only --format csv > "$tmp/s.csv"
check 6 "--spec-only: the same 7 cells again, marked spec_only, 9.09%" \
  awk -F, '$5 == "yes" { n++; if ($7 < 9.08 || $7 > 9.10) bad = 1 }
           END { exit bad || n != 7 }' "$tmp/s.csv"

# 7. Without donors there is nothing to transfer: exit 1, saying so.
mkdir "$tmp/empty"
GPUSIM_ARCH_PATH="$tmp/empty" "$GPUSIM" validate --arch "$A" "$tmp/measured.csv" \
  --all --spec-only > /dev/null 2> "$tmp/e7"
rc=$?
check 7 "--spec-only without calibrated donors: exit 1" sh -c "
  test $rc = 1 && grep -q 'calibrate those GPUs first' '$tmp/e7'"

# 8-10. Usage and input errors.
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --holdout --all > /dev/null 2>&1
check 8 "--holdout with --all: exit 2" test $? = 2
"$GPUSIM" validate --arch "$A" "$tmp/no-such.csv" > /dev/null 2>&1
check 9 "missing measurement file: exit 3" test $? = 3
printf 'device,op,B,H,latency_ms\ntest-gpu,add,10,10,0.03\ntest-gpu,add,10,10,\n' \
  > "$tmp/nolat.csv"
"$GPUSIM" validate --arch "$A" "$tmp/nolat.csv" > /dev/null 2> "$tmp/e10"
rc=$?
check 10 "a row without latency_ms: exit 3 naming nolat.csv:3" sh -c "
  test $rc = 3 && grep -q 'nolat.csv:3' '$tmp/e10'"

# 11. The same GPU named twice counts its rows once.
"$GPUSIM" validate --arch "$A" --arch "$A" "$tmp/measured.csv" --all --format csv \
  > "$tmp/v11.csv"
check 11 "--arch given twice: the same table as once" cmp -s "$tmp/v.csv" "$tmp/v11.csv"

# 12. A cell whose rows all failed has empty error cells, not nan.
printf 'device,op,B,H,latency_ms\ntest-gpu,ln,0,8,0.03\n' > "$tmp/allfail.csv"
"$GPUSIM" validate --arch "$A" "$tmp/allfail.csv" --all --format csv \
  > "$tmp/v12.csv" 2> /dev/null
check 12 "every row failed: empty error cells, no nan" sh -c "
  ! grep -qi nan '$tmp/v12.csv' && grep -q ',0,,,,,,1\$' '$tmp/v12.csv'"

# 13-14. A profiler trace holds kernels, each timed on the GPU alone: the
#        kernels of one op call (here the GEMM's two, one cpu_op) add up to
#        the op's GPU time, compared with its simulated GPU time (gpu_ms),
#        not with the latency of the op timed alone.  Kernels 10% slower
#        than the simulation: 9.09% everywhere, the GEMM one op call.
printf 'op,B,M,N,K,H,dtype\nlinear,1,512,1024,1024,,\nln,4096,,,,1024,\nmul,4,,,,1024,\n' \
  > "$tmp/calls.csv"
"$GPUSIM" predict --arch "$A" --no-hints --format json "$tmp/calls.csv" \
  > "$tmp/calls.json"
J="$GS_BUILDDIR/tests/jsonq"
us () {  # us ROW SHARE: SHARE of 1.1 x row ROW's simulated GPU time, in us
  awk -v g="$("$J" "$tmp/calls.json" "rows.$1.gpu_ms")" -v s="$2" \
    'BEGIN { printf "%.6f", g * 1100 * s }'
}
op () {  # op ID NAME DIMS TYPES TS
  printf '{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": 1, "tid": 1, "ts": %s, "dur": 50, "args": {"External id": %s, "Input Dims": %s, "Input type": %s}},\n' \
    "$2" "$5" "$1" "$3" "$4"
}
kernel () {  # kernel ID NAME TS DUR
  printf '{"ph": "X", "cat": "kernel", "name": "%s", "pid": 0, "tid": 7, "ts": %s, "dur": %s, "args": {"External id": %s, "stream": 7, "grid": [1, 1, 1], "block": [128, 1, 1]}},\n' \
    "$2" "$3" "$4" "$1"
}
{
  echo '{"traceEvents": ['
  op 1 aten::addmm '[[1024], [512, 1024], [1024, 1024]]' '["float", "float", "float"]' 100
  kernel 1 gemm_main 1000 "$(us 0 0.7)"
  kernel 1 gemm_splitk_reduce 2000 "$(us 0 0.3)"
  op 2 aten::native_layer_norm '[[8, 512, 1024], [], [1024], [1024], []]' '["float", "", "float", "float", "Scalar"]' 200
  kernel 2 layer_norm 3000 "$(us 1 1)"
  op 3 aten::mul '[[4, 1024], [4, 1024]]' '["float", "float"]' 300
  kernel 3 mul 4000 "$(us 2 1)"
  echo '{"ph": "i", "name": "end", "pid": 1, "tid": 1, "ts": 5000}]}'
} > "$tmp/trace.json"
"$GPUSIM" validate --arch "$A" --format csv "$tmp/trace.json" > "$tmp/t.csv"
rc=$?
check 13 "a trace: GPU time per op call, 9.09% everywhere, the GEMM once" sh -c "
  test $rc = 0 && grep -q '^test-gpu,gemm,linear,all,no,1,' '$tmp/t.csv' &&
  awk -F, 'NR > 1 { n++; for (i = 7; i <= 10; i++) if (\$i < 9.08 || \$i > 9.10) bad = 1 }
           END { exit bad || n != 6 }' '$tmp/t.csv'"
"$GPUSIM" import -o "$tmp/trace.csv" "$tmp/trace.json" 2> /dev/null
"$GPUSIM" validate --arch "$A" --format csv --all "$tmp/trace.csv" \
  > "$tmp/tc.csv"
check 14 "the trace as gpusim import wrote it: the same table" \
  cmp -s "$tmp/t.csv" "$tmp/tc.csv"

# 15-16. --sample N takes every Nth row; N is at least 1 (0 and negative
#        steps were taken as 1).
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all --sample 3 \
  --format csv > "$tmp/s3.csv"
rc=$?
check 15 "--sample 3: rows 1 and 4 of the 6" sh -c "test $rc = 0 &&
  awk -F, '\$3 == \"\" { n += \$6 } END { exit n != 2 }' '$tmp/s3.csv'"
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all --sample 0 \
  > "$tmp/s0.txt" 2> "$tmp/e16"
rc0=$?
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all --sample -2 \
  > /dev/null 2>&1
rcn=$?
check 16 "--sample 0 and -2: exit 2, nothing printed" sh -c "
  test $rc0 = 2 && test $rcn = 2 && test ! -s '$tmp/s0.txt' &&
  grep -q -- '--sample: expected a positive row step (every Nth row), got 0' '$tmp/e16'"

# 17. An output in a directory that does not exist: exit 3, naming it.
"$GPUSIM" validate --arch "$A" "$tmp/measured.csv" --all \
  -o "$tmp/no/such/v.txt" 2> "$tmp/e17"
rc=$?
check 17 "-o in a missing directory: exit 3, 'cannot create'" sh -c "
  test $rc = 3 &&
  grep -q '$tmp/no/such/v.txt: cannot create: No such file or directory' '$tmp/e17'"

# 18-19. Rows whose latency_ms is GPU time: a row timed by CUPTI (timing =
#        cupti, as the microbenchmarks write it) is compared with the
#        simulated GPU time of the op's kernels (gpu_ms), not with the
#        latency of the op alone; a row timed with CUDA events (timing =
#        cuda-events) stays an op latency.  Each row 10% slower than what
#        it is compared with: 9.09% everywhere.
G="$GS_SRCDIR/tests/data/predict/gputime-shapes.csv"
"$GPUSIM" predict --arch "$A" --format json "$G" > "$tmp/g.json"
i=0
n=$("$J" "$tmp/g.json" rows.#)
while [ $i -lt "$n" ]; do
  echo "$("$J" "$tmp/g.json" rows.$i.gpu_ms) $("$J" "$tmp/g.json" rows.$i.predicted_ms)"
  i=$((i + 1))
done > "$tmp/g.times"
timed () {  # timed cupti|mixed: the shapes, 10% slower, timed so
  awk -v mode="$1" 'NR == FNR { g[FNR] = $1; l[FNR] = $2; next }
    /^#/ && !h { next }
    !h { h = 1; print $0 ",latency_ms,timing"; next }
    { k++; t = mode == "mixed" ? (k % 2 ? "cupti" : "cuda-events") : mode
      printf "%s,%.9g,%s\n", $0, 1.1 * (t == "cupti" ? g[k] : l[k]), t }' \
    "$tmp/g.times" "$G"
}
all909 () {  # all909 FILE: 11 cells, each at 9.09%
  awk -F, 'NR > 1 { n++; for (i = 7; i <= 10; i++) if ($i < 9.08 || $i > 9.10) bad = 1 }
           END { exit bad || n != 11 }' "$1"
}
timed cupti > "$tmp/cupti.csv"
"$GPUSIM" validate --arch "$A" --hints --all --format csv "$tmp/cupti.csv" \
  > "$tmp/vc.csv" &&
  "$GPUSIM" validate --arch "$A" --hints --all "$tmp/cupti.csv" > "$tmp/vc.txt" &&
  grep -q '^Simulated GPU time against measured GPU time, all rows$' "$tmp/vc.txt" &&
  all909 "$tmp/vc.csv"
check 18 "timing = cupti: GPU time against gpu_ms, 9.09% everywhere" test $? = 0
timed mixed > "$tmp/mixed.csv"
"$GPUSIM" validate --arch "$A" --hints --all --format csv "$tmp/mixed.csv" \
  > "$tmp/vm.csv" &&
  "$GPUSIM" validate --arch "$A" --hints --all "$tmp/mixed.csv" > "$tmp/vm.txt" &&
  grep -q '(GPU-time rows against the simulated GPU time), all rows$' "$tmp/vm.txt" &&
  all909 "$tmp/vm.csv"
check 19 "cupti and cuda-events rows in one set: each compared as timed" \
  test $? = 0

# 20-21. GPUs are told apart by the file that defines them, not by name: a
#        what-if file without a name of its own (half the SMs) takes its
#        base's, and both are validated, each labelled with the name given;
#        one file reached twice (a short name and its own name, two paths)
#        counts once, under its name.
printf 'base = "%s";\nsm = { count = 54; };\n' "$A" > "$tmp/half.cfg"
"$GPUSIM" validate --arch test-gpu.cfg --arch "$tmp/half.cfg" --all \
  --format csv "$tmp/measured.csv" > "$tmp/v20.csv"
rc=$?
test $rc = 0 &&
  sed -n 's/^test-gpu\.cfg,/test-gpu,/p' "$tmp/v20.csv" > "$tmp/v20-full" &&
  sed 1d "$tmp/v.csv" | cmp -s - "$tmp/v20-full" &&
  [ "$(grep -c "^$tmp/half.cfg,[a-z]*,,all,no," "$tmp/v20.csv")" = 3 ] &&
  ! grep -q '^test-gpu,' "$tmp/v20.csv"
check 20 "a what-if file of the same name: a GPU of its own, labelled as given" \
  test $? = 0
printf 'device,op,B,H,latency_ms\nh100-sxm5-80gb,add,4096,1024,0.03\n' \
  > "$tmp/h100.csv"
"$GPUSIM" validate --arch h100-sxm5-80gb --all --format csv "$tmp/h100.csv" \
  > "$tmp/v21a.csv" &&
  "$GPUSIM" validate --arch h100 --arch h100-sxm5-80gb --all --format csv \
    "$tmp/h100.csv" > "$tmp/v21b.csv" &&
  "$GPUSIM" validate --arch test-gpu.cfg --arch "$A" --arch ./test-gpu.cfg \
    --all --format csv "$tmp/measured.csv" > "$tmp/v21c.csv" &&
  cmp -s "$tmp/v21a.csv" "$tmp/v21b.csv" && cmp -s "$tmp/v.csv" "$tmp/v21c.csv"
check 21 "a short name and its GPU's name, or two paths to one file: once" \
  test $? = 0

# 22-24. MEASUREMENTS.csv "-" is standard input, read whole and its format
#        found from its first bytes (a measurement set, gzip or not, a
#        profiler trace), named <stdin> in messages.
"$GPUSIM" validate --arch "$A" --all --format csv - < "$tmp/measured.csv" \
  > "$tmp/v22.csv" &&
  gzip -c "$tmp/measured.csv" |
    "$GPUSIM" validate --arch "$A" --all --format csv - > "$tmp/v22z.csv" &&
  cmp -s "$tmp/v.csv" "$tmp/v22.csv" && cmp -s "$tmp/v.csv" "$tmp/v22z.csv"
check 22 "- reads a measurement set from standard input (gzip too)" test $? = 0
"$GPUSIM" validate --arch "$A" --format csv - < "$tmp/trace.json" \
  > "$tmp/v23.csv" && cmp -s "$tmp/t.csv" "$tmp/v23.csv"
check 23 "- reads a profiler trace from standard input: the same table" \
  test $? = 0
"$GPUSIM" validate --arch "$A" - < "$tmp/nolat.csv" > /dev/null 2> "$tmp/e24"
rc=$?
check 24 "a row without latency_ms on standard input: exit 3 naming <stdin>:3" \
  sh -c "test $rc = 3 && grep -q '^gpusim validate: <stdin>:3: ' '$tmp/e24'"
