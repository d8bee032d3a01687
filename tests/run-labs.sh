#!/bin/sh
# gpusim tests: the teaching labs (examples/labs/*/README.md) run as written.
#
# In each README, every `$ ...` line of a ```sh block is a command (`gpusim`
# stands for the built binary); the ```text block that follows a ```sh
# block lists lines the output of its last command must contain.  The
# commands run in order, in a scratch directory that sees the source
# tree's examples/, arch/ and data/, so files one command writes (a trace, a CSV)
# are there for the next.  One TAP test per command: it passes when the
# command exits 0 and prints every expected line.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ln -s "$GS_SRCDIR/examples" "$tmp/examples"
ln -s "$GS_SRCDIR/arch" "$tmp/arch"
ln -s "$GS_SRCDIR/data" "$tmp/data"

# Records: "C<TAB>README<TAB>command" and "E<TAB>expected line".
for f in "$GS_SRCDIR"/examples/labs/*/README.md; do
  awk -v file="${f#"$GS_SRCDIR"/}" '
    /^```sh/   { block = "sh"; next }
    /^```text/ { block = (last == "sh") ? "text" : "other"; next }
    /^```/     { if (block != "") { last = block; block = "" }
                 else { block = "other" }
                 next }
    block == "sh" && /^\$ / { sub(/^\$ /, ""); print "C\t" file "\t" $0 }
    block == "text" && NF   { sub(/[ \t]+$/, ""); print "E\t" $0 }
  ' "$f"
done > "$tmp/records"

n=$(grep -c '^C' "$tmp/records")
echo "1..$n"

i=0
status=""
finish () {
  [ -z "$status" ] && return
  if [ "$status" = ok ]; then
    echo "ok $i $label"
  else
    echo "not ok $i $label"
    sed 's/^/# /' "$tmp/why" | head -20
  fi
}

tab=$(printf '\t')
while IFS="$tab" read -r kind a b; do
  if [ "$kind" = C ]; then
    finish
    i=$((i + 1))
    label="$a: $b"
    cmd=$(printf '%s' "$b" | sed 's|^gpusim |"$GPUSIM" |')
    : > "$tmp/why"
    if (cd "$tmp" && eval "$cmd") > "$tmp/out" 2> "$tmp/err"; then
      status=ok
    else
      status=bad
      { echo "exit status $?:"; cat "$tmp/err"; } > "$tmp/why"
    fi
  else
    if ! grep -F -e "$a" "$tmp/out" > /dev/null; then
      status=bad
      { echo "missing: $a"; echo "output:"; cat "$tmp/out"; } >> "$tmp/why"
    fi
  fi
done < "$tmp/records"
finish
