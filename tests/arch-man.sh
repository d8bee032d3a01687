#!/bin/sh
# gpusim-arch(5) is in step with the code: its PARAMETERS section is exactly
# `gpusim arch params --man` (refresh it with `make update-man-arch`), every
# key of the table is documented, and the commands in EXAMPLES run.
page="$GS_SRCDIR/man/gpusim-arch.5"
echo "1..3"

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

sed -n '/GENERATED PARAMETERS: BEGIN/,/GENERATED PARAMETERS: END/p' "$page" \
  | sed '1d;$d' > "$tmp/page"
"$GPUSIM" arch params --man > "$tmp/table"
if [ -s "$tmp/table" ] && cmp -s "$tmp/page" "$tmp/table"; then
  echo "ok 1 - PARAMETERS section equals 'gpusim arch params --man'"
else
  echo "not ok 1 - PARAMETERS section is stale: run 'make update-man-arch'"
  diff "$tmp/page" "$tmp/table" | sed 's/^/# /' | head -20
fi

# Keys as the page shows them (.B lines, roff hyphens unescaped).
missing=""
for key in $("$GPUSIM" arch params | awk 'NR > 1 { print $1 }'); do
  grep -qx ".B $(printf '%s' "$key" | sed 's/-/\\\\-/g')" "$page" \
    || missing="$missing $key"
done
if [ -z "$missing" ]; then
  echo "ok 2 - every parameter key is in the page"
else
  echo "not ok 2 - keys missing from the page:$missing"
fi

# Each "$ gpusim ..." line of the EXAMPLES section must succeed.
failed=""
sed -n '/^\.SH EXAMPLES/,/^\.SH FILES/p' "$page" | grep '^\$ gpusim ' \
  | sed 's/^\$ gpusim //; s/\\-/-/g' > "$tmp/examples"
[ -s "$tmp/examples" ] || failed="(no examples found)"
while read -r cmd; do
  # shellcheck disable=SC2086 # the example's words are the arguments
  "$GPUSIM" $cmd > /dev/null 2>&1 || failed="$failed [$cmd]"
done < "$tmp/examples"
if [ -z "$failed" ]; then
  echo "ok 3 - the EXAMPLES run"
else
  echo "not ok 3 - examples failed: $failed"
fi
