#!/bin/sh
# gpusim tests: the commands the README and the man pages show must run.
# Collects `./gpusim ...` lines from README.md's sh blocks and `$ gpusim ...`
# lines from the EXAMPLES of man/*.[15], and runs each (in a scratch
# directory that sees the source tree's examples/ and arch/), expecting exit
# status 0.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$GS_SRCDIR/examples" "$tmp/examples"
ln -s "$GS_SRCDIR/arch" "$tmp/arch"
ln -s "$GS_SRCDIR/data" "$tmp/data"

{
  awk '/^```sh/ { inside = 1; next } /^```/ { inside = 0 } inside' "$GS_SRCDIR/README.md" |
    grep '^\./gpusim ' | sed 's|^\./gpusim ||'
  for m in "$GS_SRCDIR"/man/*.[15]; do
    sed -n '/^\.SH EXAMPLES*$/,/^\.SH /p' "$m" | grep '^\$ gpusim ' |
      sed -e 's|^\$ gpusim ||' -e 's|\\-|-|g'
  done
} | sort -u > "$tmp/commands"

n=$(wc -l < "$tmp/commands")
echo "1..$n"
i=0
while IFS= read -r args; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  if (cd "$tmp" && eval "\"\$GPUSIM\" $args" > "$tmp/out" 2>&1); then
    echo "ok $i gpusim $args"
  else
    echo "not ok $i gpusim $args"
    sed 's/^/# /' "$tmp/out" | tail -5
  fi
done < "$tmp/commands"
