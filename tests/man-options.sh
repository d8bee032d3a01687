#!/bin/sh
# gpusim tests: every option a command's --help lists is in its man page
# (gpusim-CMD(1); gpusim-arch(5) for the arch subcommands), written \-\-NAME
# as roff spells it.
cd "$GS_SRCDIR" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set -- run:gpusim-run.1 sweep:gpusim-sweep.1 explain:gpusim-explain.1 \
  predict:gpusim-predict.1 validate:gpusim-validate.1 \
  calibrate:gpusim-calibrate.1 import:gpusim-import.1 \
  "arch list:gpusim-arch.5" "arch show:gpusim-arch.5" \
  "arch params:gpusim-arch.5"
echo "1..$#"
n=0
for pair in "$@"; do
  n=$((n + 1))
  cmd=${pair%%:*}
  page=man/${pair#*:}
  # shellcheck disable=SC2086
  "$GPUSIM" $cmd --help-all > "$tmp/help" 2>&1
  missing=
  for o in $(sed -n 's/^ *\(-[A-Za-z], \)*\(--[a-z0-9-]*\).*/\2/p' "$tmp/help" |
             grep -vx -- '--help.*' | sort -u); do
    roff=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
    grep -q -- "$roff" "$page" || missing="$missing $o"
  done
  if [ -s "$tmp/help" ] && [ -z "$missing" ]; then
    echo "ok $n gpusim $cmd: the options of --help are in $page"
  else
    echo "not ok $n gpusim $cmd: $page lacks$missing"
  fi
done
