#!/bin/sh
# gpusim tests: `gpusim sweep` (the grid, CSV, SVG, progress, errors) and
# the hypothetical arch files of examples/arch/.
cd "$GS_SRCDIR" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "1..24"

check () {
  n=$1; d=$2; shift 2
  if "$@"; then echo "ok $n $d"; else echo "not ok $n $d"; fi
}

# 1-3. A 2 x 2 grid on a streaming kernel: the header, a row per point,
# speedup 1 at the arch as given, time following the bandwidth only.
"$GPUSIM" sweep examples/saxpy.workload --arch h100 \
  --set sm.count=66,132 --set dram.bandwidth_gbs=1675,3350 \
  -o "$tmp/s.csv" --plot "$tmp/s.svg" 2> "$tmp/err"
st=$?
check 1 "csv: header and 4 rows" \
  sh -c "test $st = 0 && test \"\$(wc -l < '$tmp/s.csv')\" -eq 5 &&
         head -1 '$tmp/s.csv' | grep -qx 'sm.count,dram.bandwidth_gbs,total_ms,forward_ms,backward_ms,optimizer_ms,speedup,tokens_per_s,memory_gib,peak_gib,skipped' &&
         awk -F, 'NR > 1 && (length(\$8) || length(\$9) || length(\$10)) { bad = 1 } END { exit bad }' '$tmp/s.csv'"
check 2 "speedup 1 at the arch as given (132 SMs, 3350 GB/s)" \
  awk -F, '$1 == 132 && $2 == 3350 { found = 1; ok = ($7 > 0.999 && $7 < 1.001) }
           END { exit !(found && ok) }' "$tmp/s.csv"
check 3 "a streaming kernel: half the bandwidth doubles the time, SMs do not matter" \
  awk -F, 'NR > 1 { t[$1 "/" $2] = $3 }
           END { r = t["132/1675"] / t["132/3350"]; s = t["66/3350"] / t["132/3350"];
                 exit !(r > 1.9 && r < 2.1 && s > 0.98 && s < 1.02) }' "$tmp/s.csv"

# 4. The plot: a standalone SVG with a line per bandwidth and axis labels.
check 4 "svg: standalone, 2 lines, labelled axes" \
  sh -c "head -1 '$tmp/s.svg' | grep -q '^<?xml' &&
         grep -q '<svg xmlns=\"http://www.w3.org/2000/svg\"' '$tmp/s.svg' &&
         tail -1 '$tmp/s.svg' | grep -qx '</svg>' &&
         test \"\$(grep -c '<polyline' '$tmp/s.svg')\" -eq 2 &&
         grep -q '>sm.count</text>' '$tmp/s.svg' &&
         grep -q '>total time (ms)</text>' '$tmp/s.svg'"

# 5. Quiet on a non-terminal; --progress reports each point.
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=66,132 \
  --progress > /dev/null 2> "$tmp/p"
check 5 "quiet without a terminal, one line per point with --progress" \
  sh -c "test ! -s '$tmp/err' && test \"\$(grep -c '^gpusim sweep: \[[12]/2\]' '$tmp/p')\" -eq 2"

# 6. Workload options as `run` takes them; CSV on standard output.
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json \
  --arch examples/arch/teaching-gpu.cfg --set sm.count=8,16 --mode training \
  --batch 4 --seq 64 > "$tmp/w.csv"
check 6 "workload options reach the model (training: a backward pass); 16 SMs make it faster" \
  awk -F, 'NR == 2 { a = $2 } NR == 3 { b = $2 } NR > 1 && !($4 > 0) { bad = 1 }
           END { exit !(NR == 3 && b < a && !bad) }' \
  "$tmp/w.csv"

# 7. A hypothetical GPU whose base is relative to its file, from elsewhere.
(cd "$tmp" && "$GPUSIM" run "$GS_SRCDIR/examples/saxpy.workload" \
   --arch "$GS_SRCDIR/examples/arch/h100-2x-bandwidth.cfg" --format json) > "$tmp/b.json"
(cd "$tmp" && "$GPUSIM" run "$GS_SRCDIR/examples/saxpy.workload" \
   --arch h100 --format json) > "$tmp/a.json"
check 7 "examples/arch/h100-2x-bandwidth.cfg loads from any directory, faster up to the L2 limit" \
  awk -v a="$("$GS_BUILDDIR/tests/jsonq" "$tmp/a.json" total_ms)" \
      -v b="$("$GS_BUILDDIR/tests/jsonq" "$tmp/b.json" total_ms)" \
      -v bound="$("$GS_BUILDDIR/tests/jsonq" "$tmp/b.json" kernels.0.bound)" \
      'BEGIN { r = a / b; exit !(r > 1.3 && r < 2.05 && (bound == "L2" || bound == "DRAM")) }'

# 8. Every example arch file loads.
ok=1
for f in examples/arch/*.cfg; do
  "$GPUSIM" arch show "$f" > /dev/null 2>&1 || { ok=0; echo "# $f does not load"; }
done
check 8 "examples/arch/*.cfg load" test $ok = 1

# 9. Usage errors: exit 2, nothing written, a message naming the fix.
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=0,66 \
  -o "$tmp/bad.csv" 2> "$tmp/e1"
s1=$?
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count \
  2> "$tmp/e2"
s2=$?
"$GPUSIM" sweep examples/saxpy.workload --arch h100 2> "$tmp/e3"
s3=$?
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=66 \
  --set sm.count=132 2> "$tmp/e4"
s4=$?
check 9 "bad value, no values, no --set, a key swept twice" \
  sh -c "test $s1 = 2 && test ! -e '$tmp/bad.csv' && grep -q 'sm.count = 0 is out of range' '$tmp/e1' &&
         test $s2 = 2 && grep -q 'expected KEY=V1,V2' '$tmp/e2' &&
         test $s3 = 2 && grep -q 'give at least one --set' '$tmp/e3' &&
         test $s4 = 2 && grep -q 'swept twice' '$tmp/e4'"

# 10. A plot that cannot be written leaves no CSV; -o and --plot on one file.
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=66,132 \
  -o "$tmp/left.csv" --plot "$tmp/no-dir/x.svg" 2> /dev/null
s1=$?
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=66,132 \
  -o "$tmp/same.csv" --plot "$tmp/same.csv" 2> "$tmp/e10"
s2=$?
check 10 "failed --plot leaves no CSV (exit 3); -o and --plot on one file (exit 2)" \
  sh -c "test $s1 = 3 && test ! -e '$tmp/left.csv' && test $s2 = 2 &&
         test ! -e '$tmp/same.csv' && grep -q 'give them different files' '$tmp/e10'"

# 11. Training with an optimizer: forward, backward and optimizer add up
# to the total.
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --arch h100 \
  --set dram.bandwidth_gbs=1675,3350 --mode training --optimizer adam \
  --seq 64 > "$tmp/o.csv" 2> "$tmp/e11"
check 11 "training with adam: total = forward + backward + optimizer" \
  awk -F, 'NR == 1 { ok = ($3 == "forward_ms" && $4 == "backward_ms" &&
                           $5 == "optimizer_ms") }
           NR > 1 { d = $2 - ($3 + $4 + $5); if (d < 0) d = -d
                    if (!($5 > 0 && d < 1e-6 * $2)) ok = 0 }
           END { exit !(ok && NR == 3) }' "$tmp/o.csv"

# 12. WORKLOAD "-" is standard input, read once for every point.
"$GPUSIM" sweep - --arch h100 --set sm.count=66,132 \
  < examples/saxpy.workload > "$tmp/in.csv" 2> "$tmp/e12"; r=$?
"$GPUSIM" sweep examples/saxpy.workload --arch h100 --set sm.count=66,132 \
  > "$tmp/file.csv" 2>&1
check 12 "sweep - reads the workload from standard input" \
  sh -c "test $r = 0 && test \"\$(wc -l < '$tmp/in.csv')\" -eq 3 &&
         cmp -s '$tmp/in.csv' '$tmp/file.csv'"

# 13. Run options and GPUs as axes: batch x arch, speedup over the arch as
# given at the same batch (h100's time there / the point's), tokens per
# second = batch x seq / total (a kernel workload's field is empty: test 1).
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --arch h100 \
  --set batch=1,4 --set arch=h100,a100-pcie-40gb --seq 64 \
  > "$tmp/g.csv" 2> "$tmp/e13"; r=$?
check 13 "--set batch=... --set arch=...: 4 rows, speedup 1 on the given arch, tokens_per_s" \
  awk -F, -v r=$r 'NR == 1 { ok = ($1 == "batch" && $2 == "arch" && $8 == "tokens_per_s") }
           NR > 1 { n++; t = $1 * 64 / ($3 / 1000); d = $8 / t - 1; if (d < 0) d = -d
                    if (d > 1e-5) ok = 0
                    if ($2 == "h100") { h[$1] = $3; if ($7 < 0.999 || $7 > 1.001) ok = 0 }
                    else { q = $7 * $3 / h[$1] - 1; if (q < 0) q = -q; if (q > 1e-5) ok = 0 }
                    ms[$1] = $3 }
           END { exit !(r == 0 && ok && n == 4 && ms[4] > ms[1]) }' "$tmp/g.csv"

# 14. Without --arch the arch axis's first GPU is the base; a run option
# given both ways is a usage error (more in bad-input/options).
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --set arch=a100-pcie-40gb,h100 \
  --seq 64 > "$tmp/n.csv" 2> "$tmp/e14"; r1=$?
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --arch h100 --set batch=1,2 \
  --batch 4 > /dev/null 2> "$tmp/e14b"; r2=$?
awk -F, 'NR == 2 { ok = ($1 == "a100-pcie-40gb" && $6 > 0.999 && $6 < 1.001) }
         END { exit !ok }' "$tmp/n.csv"; r3=$?
check 14 "arch axis without --arch; --batch with --set batch is refused" \
  sh -c "test $r1 = 0 && test $r3 = 0 && test $r2 = 2 && grep -q 'is given too' '$tmp/e14b'"

# 15. A point that cannot be predicted (Llama-3-8B at batch 64 does not fit
# in the T4's 16 GiB) keeps its row, figures empty and the reason quoted in
# the last column, and is named on standard error; the other three run
# (exit 0) and the plot leaves it out: a line per batch, 3 markers.
"$GPUSIM" sweep examples/configs/llama3-8b.json --set arch=h100,t4 \
  --set batch=1,64 --seq 1024 --dtype fp16 -o "$tmp/k.csv" \
  --plot "$tmp/k.svg" 2> "$tmp/e15"; r=$?
check 15 "a point that does not fit is skipped, the others run" \
  sh -c "test $r = 0 && test \"\$(wc -l < '$tmp/k.csv')\" -eq 5 &&
         head -1 '$tmp/k.csv' | grep -q ',tokens_per_s,memory_gib,peak_gib,skipped\$' &&
         grep -q '^t4,64,,,,,,,,,\"batch 64 x seq 1024 does not fit in t4.s 16 GiB.*\"\$' '$tmp/k.csv' &&
         test \"\$(grep -c ',\$' '$tmp/k.csv')\" -eq 3 &&
         awk -F, 'NR > 1 && !(\$1 == \"t4\" && \$2 == 64) && !(\$3 > 0 && \$7 > 0) { bad = 1 }
                  END { exit bad }' '$tmp/k.csv' &&
         test \"\$(wc -l < '$tmp/e15')\" -eq 1 &&
         grep -q '^gpusim sweep: skipped arch=t4 batch=64: batch 64 x seq 1024 does not fit' '$tmp/e15' &&
         test \"\$(grep -c '<polyline' '$tmp/k.svg')\" -eq 2 &&
         test \"\$(grep -c '<circle' '$tmp/k.svg')\" -eq 3"

# 16. The speedup's base (the T4 as given) cannot run batch 64: those rows
# ran but have no speedup; batch 1 has one.
"$GPUSIM" sweep examples/configs/llama3-8b.json --arch t4 \
  --set arch=h100,a100-pcie-80gb --set batch=1,64 --seq 1024 --dtype fp16 \
  > "$tmp/u.csv" 2> "$tmp/e16"; r=$?
check 16 "speedup left empty where the arch as given cannot run the point's options" \
  awk -F, -v r=$r 'NR > 1 { n++; if (!($3 > 0) || !($9 > 0) || !($10 >= $9) || $11 != "") bad = 1
                            if ($2 == 1 && !($7 > 1)) bad = 1
                            if ($2 == 64 && $7 != "") bad = 1 }
                   END { exit !(r == 0 && n == 4 && !bad) }' "$tmp/u.csv"

# 17. No point can be predicted: exit 1, no CSV, a line per point and why
# the sweep failed (a grid of one point too).
"$GPUSIM" sweep examples/configs/llama3-8b.json --set arch=t4,l4 \
  --set batch=64 --seq 1024 --dtype fp16 -o "$tmp/none.csv" 2> "$tmp/e17"; r=$?
"$GPUSIM" sweep examples/configs/llama3-8b.json --set arch=t4 \
  --set batch=64 --seq 1024 --dtype fp16 > "$tmp/one.csv" 2> "$tmp/e17b"; r1=$?
check 17 "every point skipped: exit 1, nothing written" \
  sh -c "test $r = 1 && test ! -e '$tmp/none.csv' &&
         test \"\$(grep -c '^gpusim sweep: skipped arch=[lt]4 batch=64: .*does not fit' '$tmp/e17')\" -eq 2 &&
         tail -1 '$tmp/e17' | grep -qx 'gpusim sweep: none of the 2 points could be predicted (each one.s reason is above)' &&
         test $r1 = 1 && test ! -s '$tmp/one.csv' && test \"\$(wc -l < '$tmp/e17b')\" -eq 2 &&
         tail -1 '$tmp/e17b' | grep -qx 'gpusim sweep: the one point could not be predicted (its reason is above)'"

# 18. --mig names a profile of one GPU of the grid: the other's point is
# skipped with the profiles it has, and the sweep succeeds.
"$GPUSIM" sweep examples/gpt2.workload --set arch=a100-pcie-40gb,h100 \
  --mig 3g.20gb > "$tmp/mig.csv" 2> "$tmp/e18"; r=$?
check 18 "a MIG profile of one GPU of the grid: the other's point skipped" \
  awk -F, -v r=$r 'NR == 2 && $1 == "a100-pcie-40gb" && $2 > 0 && $NF == "" { a = 1 }
                   NR == 3 && $1 == "h100" && $2 == "" && /no such MIG profile \(valid: 1g.10gb/ { h = 1 }
                   END { exit !(r == 0 && NR == 3 && a && h) }' "$tmp/mig.csv"

# 19. A profile no GPU of the grid has is a usage error, nothing written.
"$GPUSIM" sweep examples/gpt2.workload --set arch=a100-pcie-40gb,h100 \
  --mig 3g.2gb > "$tmp/nomig.csv" 2> "$tmp/e19"; r=$?
check 19 "a MIG profile of no GPU of the grid: exit 2" \
  sh -c "test $r = 2 && test ! -s '$tmp/nomig.csv' &&
         grep -q '^gpusim sweep: --mig 3g.2gb: a100-pcie-40gb has no such MIG profile' '$tmp/e19'"

# 20. routing is a run option an axis can vary: a decode step of batch 8
# over balanced experts reaches all 4 of them (identical: 2), and takes
# longer.
"$GPUSIM" sweep tests/data/models/tiny-mixtral.json --arch h100 --seq 16 \
  --gen-tokens 4 --batch 8 --set routing=identical,balanced > "$tmp/rt.csv" 2> "$tmp/e20"; r=$?
check 20 "a routing axis: balanced slower than identical" \
  awk -F, -v r=$r 'NR == 2 && $1 == "identical" { a = $2 }
                   NR == 3 && $1 == "balanced" { b = $2 }
                   END { exit !(r == 0 && NR == 3 && a > 0 && b > a) }' "$tmp/rt.csv"

# 21-22. arch=all: a row per GPU `gpusim arch list` shows, its short names
# left out, in its order, the first the base; all with others is a usage
# error.
"$GPUSIM" arch list | awk 'NR > 1 && NF > 3 { print $1 }' > "$tmp/gpus"
"$GPUSIM" sweep examples/saxpy.workload --set arch=all > "$tmp/all.csv" 2> "$tmp/e21"; r=$?
tail -n +2 "$tmp/all.csv" | cut -d, -f1 > "$tmp/swept"
check 21 "arch=all sweeps every GPU of arch list" \
  sh -c "test $r = 0 && test \$(wc -l < '$tmp/swept') -ge 8 &&
         cmp -s '$tmp/swept' '$tmp/gpus' && ! grep -qx 'h100' '$tmp/swept' &&
         awk -F, 'NR == 2 { exit !(\$(NF - 4) == 1 && \$(NF - 2) == \"\" && \$(NF - 1) == \"\") }' '$tmp/all.csv'"
"$GPUSIM" sweep examples/saxpy.workload --set arch=all,h100 > "$tmp/all2.csv" 2> "$tmp/e22"; r=$?
check 22 "arch=all with another GPU: exit 2" \
  sh -c "test $r = 2 && test ! -s '$tmp/all2.csv' &&
         grep -qx 'gpusim sweep: --set arch=all,h100: all stands for every GPU; give it alone' '$tmp/e22'"

# 23. A checkpointing axis: recomputing each layer's forward costs time and
# saves memory (columns: checkpointing, total_ms, ..., memory_gib).
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --arch h100 --mode training \
  --seq 64 --set checkpointing=none,layers > "$tmp/ck.csv" 2> "$tmp/e23"; r=$?
check 23 "a checkpointing axis: layers slower, smaller" \
  awk -F, -v r=$r 'NR == 2 && $1 == "none" { t = $2; m = $8 }
                   NR == 3 && $1 == "layers" { t2 = $2; m2 = $8 }
                   END { exit !(r == 0 && NR == 3 && t2 > t && m2 < m) }' "$tmp/ck.csv"

# 24. --spec-only applies to every GPU of an arch axis: the calibrated
# V100 changes, the uncalibrated L40S does not (columns: arch, total_ms).
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --seq 64 \
  --set arch=v100-pcie-32gb,l40s > "$tmp/cal.csv" 2> "$tmp/e24"; r1=$?
"$GPUSIM" sweep tests/data/models/tiny-gpt2.json --seq 64 --spec-only \
  --set arch=v100-pcie-32gb,l40s > "$tmp/spec.csv" 2>> "$tmp/e24"; r2=$?
check 24 "--spec-only over an arch axis" \
  sh -c "test $r1 = 0 && test $r2 = 0 &&
         test \"\$(sed -n 2p '$tmp/cal.csv' | cut -d, -f2)\" != \"\$(sed -n 2p '$tmp/spec.csv' | cut -d, -f2)\" &&
         test \"\$(sed -n 3p '$tmp/cal.csv' | cut -d, -f2)\" = \"\$(sed -n 3p '$tmp/spec.csv' | cut -d, -f2)\""
