#!/bin/sh
# gpusim tests: bad workload and arch files give exit status 3 and a message
# naming file:line and what is wrong; a failed run writes nothing.
# Cases: tests/bad-input/workload/*.expected hold the exact message.
cd "$GS_SRCDIR" || exit 1
toy=tests/data/arch/toy.cfg
n=0
cases=$(ls tests/bad-input/workload/*.workload | sort)
total=$(echo "$cases" | wc -l)
echo "1..$((total + 4))"

for f in $cases; do
  n=$((n + 1))
  exp="${f%.workload}.expected"
  got=$("$GPUSIM" run "$f" --arch "$toy" 2>&1 >/dev/null)
  st=$?
  if [ ! -f "$exp" ]; then
    echo "not ok $n $f: no $exp"
  elif [ $st -ne 3 ]; then
    echo "not ok $n $f: exit status $st, expected 3"
  elif [ "$got" != "$(cat "$exp")" ]; then
    echo "not ok $n $f"; echo "# got:      $got"; echo "# expected: $(cat "$exp")"
  else
    echo "ok $n $f"
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A malformed arch file: exit 3 naming file:line.
n=$((n + 1))
got=$("$GPUSIM" run tests/data/workloads/stream.workload --arch tests/bad-input/arch-run/syntax.cfg 2>&1 >/dev/null)
st=$?
case "$st:$got" in
  "3:gpusim run: tests/bad-input/arch-run/syntax.cfg:3: syntax error") echo "ok $n malformed arch";;
  *) echo "not ok $n malformed arch: $st: $got";;
esac

# Nothing is written when the run fails (bad input, unknown arch).
n=$((n + 1))
"$GPUSIM" run tests/bad-input/workload/zero-grid.workload --arch "$toy" \
  --trace "$tmp/t.json" -o "$tmp/r.txt" 2>/dev/null
"$GPUSIM" run tests/data/workloads/stream.workload --arch no-such-gpu \
  --trace "$tmp/t.json" -o "$tmp/r.txt" 2>/dev/null
st=$?
if [ $st -eq 2 ] && [ -z "$(ls -A "$tmp")" ]; then
  echo "ok $n failed runs write nothing"
else
  echo "not ok $n failed runs left: $(ls -A "$tmp") (status $st)"
fi

# A good run writes both, atomically named.
n=$((n + 1))
if "$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" \
     --trace "$tmp/t.json" -o "$tmp/r.txt" &&
   [ -s "$tmp/t.json" ] && grep -q '^Total: ' "$tmp/r.txt" &&
   [ "$(ls "$tmp" | wc -l)" -eq 2 ]; then
  echo "ok $n good run writes report and trace"
else
  echo "not ok $n good run output: $(ls "$tmp")"
fi

# Usage errors exit 2.
n=$((n + 1))
"$GPUSIM" run tests/data/workloads/stream.workload 2>/dev/null
a=$?
"$GPUSIM" run tests/data/workloads/stream.workload --arch "$toy" --format xml 2>/dev/null
b=$?
if [ $a -eq 2 ] && [ $b -eq 2 ]; then echo "ok $n usage errors"; else echo "not ok $n usage errors: $a $b"; fi
