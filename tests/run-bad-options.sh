#!/bin/sh
# gpusim tests: bad command-line options of run, explain, sweep and validate
# (and a few small inputs) fail with the exact message and exit status listed in
# tests/bad-input/options/expected.tsv (arguments after 'gpusim', status,
# message on standard error, tab-separated).  The arguments are read as a
# shell reads them, in the source directory, with $out an empty directory
# for output files (written '$out' in the message too); a failed command
# leaves it empty.
cd "$GS_SRCDIR" || exit 1
list=tests/bad-input/options/expected.tsv
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "1..$(grep -vc '^#' "$list")"

n=0
tab=$(printf '\t')
while IFS="$tab" read -r args status message; do
  n=$((n + 1))
  eval "set -- $args"
  got=$("$GPUSIM" "$@" 2>&1 >/dev/null)
  rc=$?
  got=$(printf '%s\n' "$got" | sed "s|$out|\$out|g")
  if [ "$rc" = "$status" ] && [ "$got" = "$message" ] \
     && [ -z "$(ls -A "$out")" ]; then
    echo "ok $n - $args"
  else
    echo "not ok $n - $args"
    echo "# expected ($status): $message"
    echo "# got      ($rc): $got"
    [ -n "$(ls -A "$out")" ] && echo "# and it wrote: $(ls -A "$out")"
  fi
  rm -rf "${out:?}"/* 2>/dev/null
done <<EOT
$(grep -v '^#' "$list")
EOT
