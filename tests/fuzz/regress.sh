#!/bin/sh
# gpusim tests: every fuzz harness takes its seeds and the inputs that once
# made it fail (tests/fuzz/regress/NAME/) without a crash, a sanitizer
# report or an assertion (see tests/fuzz/fuzz.h).
cd "$GS_SRCDIR" || exit 1
. tests/fuzz/fuzz-seeds.sh
names="arch workload hf-config measure kineto ops"
list=$(for h in $names; do
         for f in $(fuzz_seeds "$h") $(fuzz_regressions "$h"); do
           echo "$h $f"
         done
       done)
echo "1..$(echo "$list" | wc -l)"
n=0
err=$(mktemp)
trap 'rm -f "$err"' EXIT
echo "$list" | while read -r h f; do
  n=$((n + 1))
  if $GS_WRAPPER "$GS_BUILDDIR/tests/fuzz/replay-$h" "$f" > /dev/null 2> "$err"; then
    echo "ok $n - $h $f"
  else
    echo "not ok $n - $h $f"
    sed 's/^/# /' "$err" | tail -20
  fi
done
