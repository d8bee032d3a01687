#!/bin/sh
# gpusim tests: `gpusim import` and the traces `gpusim validate` and
# `gpusim run` take directly -- the per-op model traces of
# data/neusight/e2e-examples (V100, BERT-Large and GPT2-Large, one layer)
# and the Kineto fixture tests/data/kineto-small.json.
E="$GS_SRCDIR/data/neusight/e2e-examples"
BERT="$E/v100-pcie-32gb-bert_large-inf-512-8-ops.csv"
GPT2="$E/v100-pcie-32gb-gpt2_large-inf-1024-4-ops.csv"
K="$GS_SRCDIR/tests/data/kineto-small.json"
A="$GS_SRCDIR/tests/data/predict/test-gpu.cfg"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..18"

check () {  # check N description command...: passes when the command does
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

# 1-2. A per-op trace becomes a measurement CSV: provenance, the standard
#      columns, and 20 of its 75 working nodes with an op.
"$GPUSIM" import --device v100-pcie-32gb -o "$tmp/bert.csv" "$BERT" \
  2> "$tmp/err"
rc=$?
check 1 "import: exit 0, provenance and header" sh -c "test $rc = 0 &&
  head -1 '$tmp/bert.csv' | grep -q '^# source: per-op model trace ' &&
  sed -n 2p '$tmp/bert.csv' | grep -q '^device,op,kernel,.*,latency_ms,.*,node,fx_op,fx_target,input_shapes,output_shape,clones\$'"
check 2 "import: 75 rows, 20 ops, said on stderr" sh -c "
  test \$(awk -F, 'NR > 2' '$tmp/bert.csv' | wc -l) = 75 &&
  test \$(awk -F, 'NR > 2 && \$2 != \"\"' '$tmp/bert.csv' | wc -l) = 20 &&
  grep -q '(ops): 75 rows, 20 with an op gpusim predicts alone' '$tmp/err'"

# 3. To standard output: the same text.
"$GPUSIM" import --device v100-pcie-32gb "$BERT" 2>/dev/null > "$tmp/stdout.csv"
check 3 "import to standard output is the same text" \
  cmp -s "$tmp/stdout.csv" "$tmp/bert.csv"

# 4. Usage errors: exit 2.
"$GPUSIM" import --from xlsx "$BERT" > /dev/null 2> "$tmp/err"; rc=$?
check 4 "import --from xlsx: exit 2" sh -c "test $rc = 2 &&
  grep -q \"expected auto, kineto, ops or measurements, got 'xlsx'\" '$tmp/err'"

# 5. Bad input: exit 3 naming file:line.
printf 'name,op,target,input_shapes,output_shape,latency_ms\na,call_function,add,"[[2, 2]]","(2, 2)",fast\n' \
  > "$tmp/bad.csv"
"$GPUSIM" import "$tmp/bad.csv" > "$tmp/out" 2> "$tmp/err"; rc=$?
check 5 "import of a bad trace: exit 3, file:line, nothing written" sh -c "
  test $rc = 3 && grep -q 'bad.csv:2: latency' '$tmp/err' &&
  test ! -s '$tmp/out'"

# 6-7. validate reads the trace itself, compares every row (no split) and
#      counts the rows that are no op apart.
"$GPUSIM" validate --arch "$A" --format csv "$GPT2" > "$tmp/v.csv" \
  2> "$tmp/err"
rc=$?
check 6 "validate of a per-op trace: exit 0, split all, 21 rows" sh -c "
  test $rc = 0 &&
  awk -F, '\$3 == \"\" && \$4 == \"all\" { n += \$6 } END { exit n != 21 }' \
    '$tmp/v.csv'"
check 7 "validate says how many rows it left out" \
  grep -q '^gpusim validate: 93 rows name no op' "$tmp/err"

# 8. --holdout still asks for the split.
"$GPUSIM" validate --arch "$A" --format csv --holdout "$GPT2" \
  > "$tmp/h.csv" 2>/dev/null
check 8 "validate --holdout takes fewer rows" sh -c "
  awk -F, '\$3 == \"\" && \$4 == \"holdout\" { n += \$6 }
           END { exit !(n > 0 && n < 21) }' '$tmp/h.csv'"

# 9-10. run takes the trace as a workload: its ops in order, one launch
#       per kernel, the measured sum on stderr.
"$GPUSIM" run "$BERT" --arch "$A" --format json > "$tmp/r.json" \
  2> "$tmp/err"
rc=$?
"$GPUSIM" run "$BERT" --arch "$A" > "$tmp/r.txt" 2> /dev/null
check 9 "run of a per-op trace: exit 0, 20 ops, measured sum said" sh -c "
  test $rc = 0 &&
  grep -q ': 20 ops (and 3 copies inside matmul) measured at 11.627 ms in all; 55 rows name no op' \
    '$tmp/err' &&
  grep -q '^  20 ops as listed (23 with the copies inside matmul), eager runtime' \
    '$tmp/r.txt'"
check 10 "run of a per-op trace: a total in the measured range" sh -c "
  t=\$('$GS_BUILDDIR/tests/jsonq' '$tmp/r.json' total_ms) &&
  awk -v t=\"\$t\" 'BEGIN { exit !(t > 3 && t < 40) }'"

# 11. A Kineto trace: the kernels of one op call are one op (the GEMM's
#     split-K reduction comes with it).
"$GPUSIM" run "$K" --arch "$A" > /dev/null 2> "$tmp/err"; rc=$?
check 11 "run of a profiler trace: exit 0, 8 ops" sh -c "test $rc = 0 &&
  grep -q 'kineto-small.json: 8 ops' '$tmp/err'"

# 12. A CSV with no op in it: exit 1 saying so.
printf 'name,op,target,input_shapes,output_shape,latency_ms\na,call_method,contiguous,"[[2, 2]]","(2, 2)",0.01\n' \
  > "$tmp/none.csv"
"$GPUSIM" run "$tmp/none.csv" --arch "$A" > /dev/null 2> "$tmp/err"; rc=$?
check 12 "run of a trace with no op: exit 1" sh -c "test $rc = 1 &&
  grep -q 'none.csv: its one row names no op gpusim predicts' '$tmp/err'"

# 13. An output in a directory that does not exist: exit 3 and the message
#     predict and validate give (not the name of a temporary file).
"$GPUSIM" import -o "$tmp/no/such/k.csv" "$K" 2> "$tmp/err"; rc=$?
check 13 "import -o in a missing directory: exit 3, 'cannot create'" sh -c "
  test $rc = 3 &&
  test \"\$(cat '$tmp/err')\" = \
    'gpusim import: $tmp/no/such/k.csv: cannot create: No such file or directory'"

# 14-17. INPUT "-" is standard input (read whole, then its format found from
#        its first bytes; gzip too), named <stdin> in the summary, the
#        provenance and messages; one that cannot be read says so.
"$GPUSIM" import "$K" > "$tmp/k-file.csv" 2> /dev/null
"$GPUSIM" import - < "$K" > "$tmp/k-stdin.csv" 2> "$tmp/err"; rc=$?
check 14 "import - < a trace: its rows, named <stdin>" sh -c "test $rc = 0 &&
  grep -q '^# source: pytorch profiler trace <stdin>\$' '$tmp/k-stdin.csv' &&
  grep -v '^# source: ' '$tmp/k-file.csv' > '$tmp/k1' &&
  grep -v '^# source: ' '$tmp/k-stdin.csv' > '$tmp/k2' && cmp -s '$tmp/k1' '$tmp/k2' &&
  grep -q '^gpusim import: <stdin> (kineto): 9 rows, 8 with an op' '$tmp/err'"
gzip -c "$BERT" | "$GPUSIM" import --device v100-pcie-32gb - \
  > "$tmp/bert-stdin.csv" 2> "$tmp/err"; rc=$?
check 15 "import - < a gzip per-op trace: the same rows" sh -c "test $rc = 0 &&
  sed 1d '$tmp/bert.csv' > '$tmp/b1' && sed 1d '$tmp/bert-stdin.csv' > '$tmp/b2' &&
  cmp -s '$tmp/b1' '$tmp/b2' &&
  grep -q '^gpusim import: <stdin> (ops): 75 rows, 20 with an op' '$tmp/err'"
printf '{"traceEvents": [\n{"ph": "X"' | "$GPUSIM" import - > /dev/null \
  2> "$tmp/err"; rc=$?
check 16 "a broken trace on standard input: exit 3 naming <stdin>:2" sh -c "
  test $rc = 3 && grep -q '^gpusim import: <stdin>:2:10: Parse error' '$tmp/err'"
"$GPUSIM" import - < / > /dev/null 2> "$tmp/err"; rc=$?
check 17 "standard input that cannot be read (a directory): exit 3" sh -c "
  test $rc = 3 &&
  test \"\$(cat '$tmp/err')\" = 'gpusim import: <stdin>: cannot read: Is a directory'"

# 18. A count of one is singular.
(cd "$GS_SRCDIR" && "$GPUSIM" import tests/data/predict/one-op.csv) \
  > /dev/null 2> "$tmp/err"; rc=$?
check 18 "one row: '1 row'" sh -c "test $rc = 0 &&
  grep -qx 'gpusim import: tests/data/predict/one-op.csv (measurements): 1 row, 1 with an op gpusim predicts alone' '$tmp/err'"
