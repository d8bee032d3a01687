#!/bin/sh
# gpusim tests: `gpusim predict` -- columns, order, echo, hints, runtimes,
# formats, -o, and bad rows (exit 3 naming file:line and the column).
# The GPU is tests/data/predict/test-gpu.cfg: an A100 40 GB with a fixed
# calibration, so the kernels, waves and bounds below stay put.
cd "$GS_SRCDIR/tests/data/predict" || exit 1
J="$GS_BUILDDIR/tests/jsonq"
A=test-gpu.cfg
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..29"

check () {  # check N description command...: passes when the command does
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

"$GPUSIM" predict --arch $A ops.csv > "$tmp/out.csv" 2> "$tmp/err"
rc=$?

# 1. The header: the input's columns, then the four predicted ones.
check 1 "exit 0 and the exact header" sh -c "test $rc = 0 &&
  test \"\$(head -1 '$tmp/out.csv')\" = \
  'name,op,B,M,N,K,H,dtype,note,predicted_ms,kernel_pred,waves,bound'"

# 2. Every row, in order, starts with the input row as written (quoted
#    commas included): its columns are echoed.
check 2 "rows in input order with every column echoed" \
  awk -F '\n' 'NR == FNR { want[FNR] = $0; n = FNR; next }
       { if (substr($0, 1, length(want[FNR]) + 1) != want[FNR] ",") bad = 1 }
       END { exit bad || FNR != n }' ops.csv "$tmp/out.csv"

# 3. What follows predicted_ms, per row: the golden kernel, waves, bound.
awk -F '\n' 'NR == FNR { want[FNR] = $0; next }
     FNR > 1 { rest = substr($0, length(want[FNR]) + 2); sub(/^[^,]*,/, "", rest);
               print rest }' ops.csv "$tmp/out.csv" > "$tmp/rest"
check 3 "kernel_pred, waves and bound as expected" cmp -s "$tmp/rest" ops.expected

# 4. The predictions are in the measured range (kernels.csv, A100 40 GB:
#    ln 32768x1600 0.389 ms, softmax 8192x1024 0.0706, 8192x6400 0.355)
#    and the smallest op costs its host floor (~30 us).
awk -F '\n' 'NR == FNR { want[FNR] = $0; next }
     FNR > 1 { rest = substr($0, length(want[FNR]) + 2); sub(/,.*/, "", rest);
               print rest }' ops.csv "$tmp/out.csv" > "$tmp/ms"
check 4 "latencies within 25% of the measured ones, host floor for tiny ops" \
  awk 'NR == 2 { ok += ($1 > 0.389 * 0.75 && $1 < 0.389 * 1.25) }
       NR == 3 { ok += ($1 > 0.0706 * 0.75 && $1 < 0.0706 * 1.25) }
       NR == 4 { ok += ($1 > 0.02 && $1 < 0.05) }
       NR == 5 { ok += ($1 > 0.355 * 0.75 && $1 < 0.355 * 1.25) }
       $1 <= 0 { bad = 1 }
       END { exit !(ok == 4 && !bad && NR == 7) }' "$tmp/ms"

# 5-6. JSON: the same rows, echoed cells as strings.
"$GPUSIM" predict --arch $A ops.csv --format json > "$tmp/out.json"
check 5 "json: 7 rows, the note echoed, the kernel and bound of row 3" \
  sh -c "test \"\$('$J' '$tmp/out.json' rows.#)\" = 7 &&
         test \"\$('$J' '$tmp/out.json' rows.0.note)\" = 'first, with a comma' &&
         '$J' '$tmp/out.json' rows.2.kernel_pred | grep -q softmax_warp_forward &&
         test \"\$('$J' '$tmp/out.json' rows.3.bound)\" = launch"
check 6 "json and csv agree on row 5's latency" sh -c "
  test \"\$(sed -n 5p '$tmp/ms')\" = \
       \"\$(printf '%.6g' \"\$('$J' '$tmp/out.json' rows.4.predicted_ms)\")\""

# 7. -o writes the same text to a file.
"$GPUSIM" predict --arch $A ops.csv -o "$tmp/o.csv"
check 7 "-o FILE holds what standard output would" cmp -s "$tmp/o.csv" "$tmp/out.csv"

# 8-10. Bad rows: exit 3, file:line and the column.
"$GPUSIM" predict --arch $A bad-op.csv -o "$tmp/bad.csv" > /dev/null 2> "$tmp/e1"
rc=$?
check 8 "unknown op: exit 3, bad-op.csv:3 column op, no output file" sh -c "
  test $rc = 3 && grep -q \"bad-op.csv:3: column op: unknown op 'foo'\" '$tmp/e1' &&
  test ! -e '$tmp/bad.csv'"
"$GPUSIM" predict --arch $A bad-missing.csv > /dev/null 2> "$tmp/e2"
rc=$?
check 9 "ln without H: exit 3, bad-missing.csv:3 column H" sh -c "
  test $rc = 3 && grep -q 'bad-missing.csv:3: column H: ln needs a positive H' '$tmp/e2'"
"$GPUSIM" predict --arch $A bad-number.csv > /dev/null 2> "$tmp/e3"
rc=$?
check 10 "B not a number: exit 3, bad-number.csv:3 naming B" sh -c "
  test $rc = 3 && grep -q 'bad-number.csv:3' '$tmp/e3' && grep -q 'B' '$tmp/e3'"

# 11-12. Hints pick the kernel; --no-hints ignores them.
"$GPUSIM" predict --arch $A hints.csv > "$tmp/h.csv"
check 11 "hints: unrolled add, two-kernel layer norm, warp softmax" sh -c "
  sed -n 2p '$tmp/h.csv' | grep -q unrolled_elementwise_kernel &&
  sed -n 3p '$tmp/h.csv' | grep -Eq 'RowwiseMoments|LayerNormForwardCUDAKernel' &&
  sed -n 4p '$tmp/h.csv' | grep -q softmax_warp_forward"
"$GPUSIM" predict --arch $A hints.csv --no-hints > "$tmp/nh.csv"
check 12 "--no-hints: the vectorized kernels of the shape" sh -c "
  sed -n 2p '$tmp/nh.csv' | grep -q vectorized_elementwise_kernel &&
  sed -n 3p '$tmp/nh.csv' | grep -q vectorized_layer_norm_kernel"

# 13. The compiled runtime: Inductor's generated kernels.
"$GPUSIM" predict --arch $A ops.csv --runtime compiled > "$tmp/c.csv"
check 13 "--runtime compiled: Triton kernels" sh -c "
  sed -n 2p '$tmp/c.csv' | grep -q triton_poi_fused_add &&
  sed -n 3p '$tmp/c.csv' | grep -q triton_red_fused_ln &&
  sed -n 4p '$tmp/c.csv' | grep -q triton_per_fused_softmax"

# 14-16. Usage errors exit 2.
"$GPUSIM" predict ops.csv > /dev/null 2>&1
check 14 "no --arch: exit 2" test $? = 2
"$GPUSIM" predict --arch $A --format xml ops.csv > /dev/null 2>&1
check 15 "--format xml: exit 2" test $? = 2
"$GPUSIM" predict --arch no-such-gpu ops.csv > /dev/null 2>&1
check 16 "unknown arch: exit 2" test $? = 2

# 17. bmm_nt: the second operand transposed (q @ k^T) runs cuBLAS's "tn"
#     kernels; plain bmm the "nn" ones.  Same shape columns.
"$GPUSIM" predict --arch $A layouts.csv > "$tmp/l.csv"
check 17 "bmm runs an _nn kernel, bmm_nt a _tn one" sh -c "
  sed -n 2p '$tmp/l.csv' | grep -q ',bmm,.*_nn,' &&
  sed -n 3p '$tmp/l.csv' | grep -q ',bmm_nt,.*_tn,'"

# 18. clones: the operands torch.matmul copies contiguous before its bmm
#     (head-split views of several sequences) run first, in the same op:
#     the latency grows, the GEMM stays the longest kernel.
"$GPUSIM" predict --arch $A clones.csv > "$tmp/cl.csv"
check 18 "clones add the copies' time before the bmm" awk -F, '
  NR == 2 { t = $(NF - 3); k = $(NF - 2) }
  NR == 3 { ok = $(NF - 3) > t * 1.05 && $(NF - 2) == k }
  END { exit !(ok && NR == 4) }' "$tmp/cl.csv"
"$GPUSIM" predict --arch $A bad-clones.csv > /dev/null 2> "$tmp/e4"
rc=$?
check 19 "a copied k^T on bmm_nt: exit 3, bad-clones.csv:3 column clones" sh -c "
  test $rc = 3 && grep -q 'bad-clones.csv:3: column clones: ' '$tmp/e4'"

# 20-21. OPS.csv "-" is standard input, plain or gzip-compressed; messages
#        call it <stdin>.
"$GPUSIM" predict --arch $A - < ops.csv > "$tmp/stdin.csv"
rc=$?
gzip -c ops.csv | "$GPUSIM" predict --arch $A - > "$tmp/stdin-gz.csv"
check 20 "- reads standard input (gzip too): the same output" sh -c "
  test $rc = 0 && cmp -s '$tmp/stdin.csv' '$tmp/out.csv' &&
  cmp -s '$tmp/stdin-gz.csv' '$tmp/out.csv'"
"$GPUSIM" predict --arch $A - < bad-op.csv > /dev/null 2> "$tmp/e5"
rc=$?
check 21 "a bad row on standard input: exit 3 naming <stdin>:3" sh -c "
  test $rc = 3 && grep -q \"<stdin>:3: column op: unknown op 'foo'\" '$tmp/e5'"

# 22. --head N takes the first N rows; N is at least 1 (0 predicted every
#     row).
"$GPUSIM" predict --arch $A ops.csv --head 2 > "$tmp/head2.csv"
rc2=$?
"$GPUSIM" predict --arch $A ops.csv --head 0 > "$tmp/head0.csv" 2> "$tmp/e6"
rc0=$?
check 22 "--head 2: the header and 2 rows; --head 0: exit 2, nothing printed" sh -c "
  test $rc2 = 0 && test \$(wc -l < '$tmp/head2.csv') = 3 &&
  test $rc0 = 2 && test ! -s '$tmp/head0.csv' &&
  grep -q -- '--head: expected a positive row count, got 0' '$tmp/e6'"

# 23. Comments come before the header: after it, a first field starting
#     with '#' is data (it was dropped as a comment), written back quoted.
printf '# source: test\nlayer,op,B,H\n#1,ln,8,1024\nx,ln,8,2048\n' > "$tmp/hash.csv"
"$GPUSIM" predict --arch $A "$tmp/hash.csv" > "$tmp/hash.out"
check 23 "a row whose first field starts with '#' is predicted and echoed" sh -c "
  test \$(wc -l < '$tmp/hash.out') = 3 &&
  sed -n 2p '$tmp/hash.out' | grep -q '^\"#1\",ln,8,1024,'"

# 24-25. predict's output read back in: the new predictions replace the
#        old columns (a second set was appended).
"$GPUSIM" predict --arch $A "$tmp/out.csv" > "$tmp/again.csv"
check 24 "the output predicted again is the same text" \
  cmp -s "$tmp/again.csv" "$tmp/out.csv"
"$GPUSIM" predict --arch $A "$tmp/out.csv" --format json > "$tmp/again.json"
check 25 "json of predict's output: one predicted_ms per row" sh -c "
  test \$(grep -c '\"predicted_ms\"' '$tmp/again.json') = 7 &&
  cmp -s '$tmp/again.json' '$tmp/out.json'"

# 26. An output in a directory that does not exist: exit 3 (a file that
#     cannot be written), naming it, as validate and import do.
"$GPUSIM" predict --arch $A ops.csv -o "$tmp/no/such/out.csv" 2> "$tmp/e7"
rc=$?
check 26 "-o in a missing directory: exit 3, 'cannot create'" sh -c "
  test $rc = 3 &&
  grep -q '$tmp/no/such/out.csv: cannot create: No such file or directory' '$tmp/e7'"

# 27. --spec-only: the test GPU without its calibration predicts another
#     time for the same rows, and the rows stay in order.
"$GPUSIM" predict --arch $A ops.csv --no-hints > "$tmp/cal27.csv"
"$GPUSIM" predict --arch $A ops.csv --no-hints --spec-only > "$tmp/spec27.csv"
rc=$?
check 27 "--spec-only predicts from the spec sheet" sh -c "
  test $rc = 0 &&
  test \$(wc -l < '$tmp/spec27.csv') = \$(wc -l < '$tmp/cal27.csv') &&
  ! cmp -s '$tmp/spec27.csv' '$tmp/cal27.csv'"

# 28. linear_nn: a weight used as stored (GPT-2's Conv1D, x @ W) runs
#     cuBLAS's "nn" kernels, a Linear's transposed weight "tn"; the same
#     shape columns.
check 28 "linear runs a _tn kernel, linear_nn an _nn one" sh -c "
  sed -n 4p '$tmp/l.csv' | grep -q '^linear,linear,.*_tn,' &&
  sed -n 5p '$tmp/l.csv' | grep -q '^conv1d,linear_nn,.*_nn,'"

# 29. A batched tn GEMM (bmm_nt) takes the batched rules' tile: the same
#     kernel as the bmm of its shape, run tn.
check 29 "bmm_nt runs bmm's tile" sh -c "
  nn=\$(sed -n 2p '$tmp/l.csv' | grep -o 'ampere_sgemm_[0-9x]*_nn') &&
  sed -n 3p '$tmp/l.csv' | grep -q \"\${nn%_nn}_tn,\""
