#!/bin/sh
# gpusim tests: `make install` into a temporary prefix gives a gpusim that
# finds its arch files and examples with no GPUSIM_ARCH_PATH, from any
# directory, and its man pages; `make uninstall` takes everything back.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
echo "1..6"
n=0
ok () { n=$((n + 1)); echo "ok $n - $1"; }
fail () { n=$((n + 1)); echo "not ok $n - $1"; tail -5 "$tmp/log" | sed 's/^/# /'; }

# A make of our own: not the jobserver of the make running the tests.
unset MAKEFLAGS MFLAGS MAKELEVEL
if ${MAKE:-make} -C "$GS_BUILDDIR" install prefix="$prefix" > "$tmp/log" 2>&1 &&
   [ -x "$prefix/bin/gpusim" ]; then
  ok "make install prefix=..."
else
  fail "make install prefix=..."
fi

# Elsewhere, with no arch path: the installed data directory.
cd "$tmp" || exit 1
unset GPUSIM_ARCH_PATH
if "$prefix/bin/gpusim" arch list > "$tmp/list" 2> "$tmp/log" &&
   grep -q 'h100-sxm5-80gb' "$tmp/list" && grep -q '^t4' "$tmp/list"; then
  ok "installed gpusim arch list finds the arch files"
else
  cat "$tmp/list" >> "$tmp/log"; fail "installed gpusim arch list"
fi
examples="$prefix/share/doc/gpusim/examples"
if "$prefix/bin/gpusim" run "$examples/saxpy.workload" --arch h100 \
     > "$tmp/run" 2> "$tmp/log" && grep -q '^Total: ' "$tmp/run"; then
  ok "installed gpusim runs an installed example on h100"
else
  fail "installed gpusim run $examples/saxpy.workload"
fi

# Man pages: every page of man/, readable by man when it is installed.
missing=
for page in "$GS_SRCDIR"/man/*.[1-9]; do
  name=$(basename "$page")
  [ -f "$prefix/share/man/man${name##*.}/$name" ] || missing="$missing $name"
done
if [ -z "$missing" ]; then ok "man pages installed"; else
  echo "missing:$missing" > "$tmp/log"; fail "man pages installed"; fi
if command -v man > /dev/null; then
  if MANPAGER=cat man -M "$prefix/share/man" gpusim-run > "$tmp/man" 2> "$tmp/log" &&
     grep -q 'LIMITS' "$tmp/man"; then
    ok "man -M PREFIX/share/man gpusim-run"
  else
    fail "man -M PREFIX/share/man gpusim-run"
  fi
else
  ok "# SKIP man is not installed"
fi

if ${MAKE:-make} -C "$GS_BUILDDIR" uninstall prefix="$prefix" > "$tmp/log" 2>&1 &&
   [ -z "$(find "$prefix" -type f)" ]; then
  ok "make uninstall leaves no files"
else
  find "$prefix" -type f >> "$tmp/log"; fail "make uninstall"
fi
