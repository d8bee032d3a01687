#!/bin/sh
# The CUPTI collector: its launcher, its injectable library, and the
# kernels it records (those parts skip without a GPU).
echo 1..6
collect=$GS_BUILDDIR/gpusim-collect
micro=$GS_BUILDDIR/gpusim-bench-micro
if [ ! -x "$collect" ]; then
  for i in 1 2 3 4 5 6; do
    echo "ok $i # SKIP CUDA tools not built (configure --with-cuda)"
  done
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gs-collect.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# report N DESCRIPTION: ok when the last command succeeded
report () {
  if [ $? -eq 0 ]; then echo "ok $1 - $2"; else echo "not ok $1 - $2"; fi
}

"$collect" -o "$tmp/x.csv" > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "no command to run" "$tmp/out"
report 1 "no command is a usage error"

"$collect" --lib "$tmp/none.so" -- true > "$tmp/out" 2>&1
[ $? -eq 2 ] && grep -q "none.so: no such collector library" "$tmp/out"
report 2 "a missing collector library is a usage error"

"$collect" -o "$tmp/x.csv" -- sh -c 'exit 3' 2> "$tmp/out"
[ $? -eq 3 ] && [ ! -e "$tmp/x.csv" ]
report 3 "the command's exit status comes back; no kernels, no file"

# Preloaded into a program that never touches CUDA, the library loads
# (no missing library or symbol), lets it run and writes nothing.
"$collect" --preload -o "$tmp/y.csv" -- sh -c 'exit 0' 2> "$tmp/err"
[ $? -eq 0 ] && [ ! -e "$tmp/y.csv" ] && ! grep -q "error while loading" "$tmp/err"
report 4 "preloading into a non-CUDA program is harmless"

# Injected into a CUDA program: one row per launch.
"$collect" -o "$tmp/inj.csv" -- "$micro" --quick --only launch_empty \
  --no-collector -o "$tmp/events.csv" > "$tmp/out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  echo "ok 5 # SKIP no GPU"
else
  rows=$(grep -c "empty_kernel" "$tmp/inj.csv" 2>/dev/null)
  [ $rc -eq 0 ] && [ "${rows:-0}" -ge 28000 ] && grep -q "^# gpu: " "$tmp/inj.csv"
  report 5 "injected: every launch of the program is a row ($rows rows)"
fi

# Linked into a microbenchmark: one row per label, timed by CUPTI.
"$micro" --quick --only launch_empty -o "$tmp/linked.csv" > "$tmp/out" 2>&1
rc=$?
if [ $rc -eq 77 ]; then
  echo "ok 6 # SKIP no GPU"
else
  [ $rc -eq 0 ] && grep -q "^launch_empty\|,launch_empty," "$tmp/linked.csv" \
    && grep -q "^# cuda_runtime: " "$tmp/linked.csv"
  report 6 "linked: the microbenchmark writes its labelled row"
fi
