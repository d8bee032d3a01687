#!/bin/sh
# Every bad arch file under tests/bad-input/arch/ fails with the exact
# message and exit status listed in its expected.tsv (file, status, message).
dir="$GS_SRCDIR/tests/bad-input/arch"
table="$dir/expected.tsv"
cases=$(grep -vc '^#' "$table")
fixtures=$(ls "$dir" | grep -c '\.cfg$')
echo "1..$((cases + 1))"

n=0
tab=$(printf '\t')
grep -v '^#' "$table" | while IFS="$tab" read -r file status message; do
  n=$((n + 1))
  got=$(cd "$dir" && "$GPUSIM" arch show "$file" 2>&1 >/dev/null)
  rc=$(cd "$dir" && "$GPUSIM" arch show "$file" >/dev/null 2>&1; echo $?)
  if [ "$rc" = "$status" ] && [ "$got" = "$message" ]; then
    echo "ok $n - $file"
  else
    echo "not ok $n - $file"
    echo "# expected ($status): $message"
    echo "# got      ($rc): $got"
  fi
done

# A fixture without an expected message would test nothing.
if [ "$fixtures" = "$cases" ]; then
  echo "ok $((cases + 1)) - every fixture has an expected message"
else
  echo "not ok $((cases + 1)) - $fixtures fixtures, $cases expected messages"
fi
