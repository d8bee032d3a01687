#!/bin/sh
# gpusim tests: the gpusim binary under valgrind memcheck; check-valgrind
# points $GPUSIM here (see tests/valgrind-wrap.sh).
exec "$GS_SRCDIR/tests/valgrind-wrap.sh" "$GS_BUILDDIR/gpusim" "$@"
