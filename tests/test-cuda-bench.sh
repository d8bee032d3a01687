#!/bin/sh
# The microbenchmarks and run-suite: their command lines everywhere, their
# measurements where there is a GPU.
benches="micro mma gemm pointwise attention"
echo 1..13
if [ ! -x "$GS_BUILDDIR/gpusim-bench-micro" ]; then
  i=1
  while [ $i -le 13 ]; do
    echo "ok $i # SKIP CUDA tools not built (configure --with-cuda)"
    i=$((i + 1))
  done
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
report () {
  if [ $? -eq 0 ]; then echo "ok $1 - $2"; else echo "not ok $1 - $2"; fi
}

n=0
for b in $benches; do
  n=$((n + 1))
  "$GS_BUILDDIR/gpusim-bench-$b" --help > "$tmp/out" 2>&1
  [ $? -eq 0 ] && grep -q "^usage: gpusim-bench-$b " "$tmp/out"
  report $n "gpusim-bench-$b --help"
done

"$GS_BUILDDIR/gpusim-bench-micro" --frobnicate > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "unknown or incomplete option '--frobnicate'" "$tmp/out"
report 6 "an unknown option is a usage error"

"$GS_SRCDIR/calibrate/run-suite" > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "^usage: run-suite" "$tmp/out"
report 7 "run-suite without OUTDIR is a usage error"

n=7
for b in $benches; do
  n=$((n + 1))
  "$GS_BUILDDIR/gpusim-bench-$b" --quick -o "$tmp/$b.csv" > "$tmp/$b.log" 2>&1
  rc=$?
  if [ $rc -eq 77 ]; then
    echo "ok $n # SKIP no GPU"
    continue
  fi
  [ $rc -eq 0 ] && grep -q "^# gpu: " "$tmp/$b.csv" \
    && grep -q "latency_ms" "$tmp/$b.csv" \
    && [ "$(grep -vc '^#' "$tmp/$b.csv")" -ge 2 ]
  report $n "gpusim-bench-$b --quick writes measurements with provenance"
done

GPUSIM_BENCH_DIR=$GS_BUILDDIR "$GS_SRCDIR/calibrate/run-suite" --quick "$tmp/suite" \
  > "$tmp/suite.log" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  echo "ok 13 # SKIP no GPU"
else
  ok=0
  for b in $benches; do [ -s "$tmp/suite/$b.csv" ] || ok=1; done
  [ $rc -eq 0 ] && [ $ok -eq 0 ] && [ -s "$tmp/suite/PROVENANCE" ]
  report 13 "run-suite --quick fills the measurement directory"
fi
