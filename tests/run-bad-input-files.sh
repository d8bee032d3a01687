#!/bin/sh
# gpusim tests: bad files of every kind a user hands gpusim fail with the
# exact message and exit status listed beside them.  Each directory under
# tests/bad-input/ below has an expected.tsv (file, status, message on
# standard error, tab-separated); its command runs in that directory:
#   config/   gpusim run FILE --arch h100               (config.json)
#   measure/  gpusim validate --arch a100-pcie-40gb --all FILE (measurements)
#   ops/      gpusim predict --arch h100 FILE           (op CSVs)
#   kineto/   tests/bad-input-load kineto FILE          (profiler traces)
# A command that fails writes no output file (but validate, exit status 1,
# still reports the rows it could predict), and every fixture is listed.
dirs="config measure ops kineto"
base="$GS_SRCDIR/tests/bad-input"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cases=0
for d in $dirs; do
  cases=$((cases + $(grep -vc '^#' "$base/$d/expected.tsv")))
done
echo "1..$((cases + 4))"

# The command for FILE in suite D, writing any output to $tmp/out.
run_case () {
  case "$1" in
    config) "$GPUSIM" run "$2" --arch h100 -o "$tmp/out" ;;
    measure) "$GPUSIM" validate --arch a100-pcie-40gb --all "$2" \
               -o "$tmp/out" ;;
    ops) "$GPUSIM" predict --arch h100 "$2" -o "$tmp/out" ;;
    kineto) $GS_WRAPPER "$GS_BUILDDIR/tests/bad-input-load" kineto "$2" ;;
  esac
}

n=0
tab=$(printf '\t')
for d in $dirs; do
  while IFS="$tab" read -r file status message; do
    n=$((n + 1))
    got=$(cd "$base/$d" && run_case "$d" "$file" 2>&1 >/dev/null)
    rc=$(cd "$base/$d" && run_case "$d" "$file" >/dev/null 2>&1; echo $?)
    wrote=no
    if [ -e "$tmp/out" ] && ! [ "$d:$rc" = measure:1 ]; then wrote=yes; fi
    if [ "$rc" = "$status" ] && [ "$got" = "$message" ] && [ $wrote = no ]; then
      echo "ok $n - $d/$file"
    else
      echo "not ok $n - $d/$file"
      echo "# expected ($status): $message"
      echo "# got      ($rc): $got"
      [ $wrote = yes ] && echo "# and it wrote an output file"
    fi
    rm -f "$tmp/out"
  done <<EOT
$(grep -v '^#' "$base/$d/expected.tsv")
EOT
done

# A fixture without an expected message would test nothing.
for d in $dirs; do
  n=$((n + 1))
  listed=$(grep -v '^#' "$base/$d/expected.tsv" | cut -f1 | sort)
  present=$(ls "$base/$d" | grep -v '^expected.tsv$' | sort)
  if [ "$listed" = "$present" ]; then
    echo "ok $n - every $d fixture has an expected message"
  else
    echo "not ok $n - $d fixtures and expected.tsv differ"
    echo "$listed" > "$tmp/l"; echo "$present" > "$tmp/p"
    diff "$tmp/l" "$tmp/p" | sed 's/^/# /'
  fi
done
