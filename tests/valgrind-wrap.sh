#!/bin/sh
# gpusim tests: runs a program under valgrind memcheck, for
# `make check-valgrind` (the LOG_COMPILER of the test programs, and through
# tests/valgrind-gpusim.sh the gpusim the shell tests call).
#
# Errors (invalid reads and writes, uses of uninitialised values, definite
# leaks) make the program exit 99, which no test expects, and are also
# written to $GS_BUILDDIR/tests/valgrind/PID.log for check-valgrind to
# report.  GLib's one-time allocations are not leaks: only definite leaks
# count, and tests/valgrind.supp lists what libraries keep on purpose.
logs="${GS_BUILDDIR:-.}/tests/valgrind"
mkdir -p "$logs"
G_SLICE=always-malloc G_DEBUG="${G_DEBUG:+$G_DEBUG,}gc-friendly"
export G_SLICE G_DEBUG
exec "${VALGRIND:-valgrind}" --quiet --tool=memcheck --error-exitcode=99 \
  --leak-check=full --show-leak-kinds=definite \
  --errors-for-leak-kinds=definite --track-origins=yes --num-callers=30 \
  --suppressions="$GS_SRCDIR/tests/valgrind.supp" \
  --log-file="$logs/%p.log" "$@"
