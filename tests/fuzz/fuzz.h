/* gpusim fuzz harnesses: one per parser, each a libFuzzer entry point.
 *
 * Built with --enable-fuzzing (clang), a harness links libFuzzer and
 * `make fuzz` runs it on a corpus seeded from the examples and test
 * fixtures.  In every other build the same harness links replay.c and
 * `make check` feeds it the seeds and the inputs that once failed
 * (tests/fuzz/regress/NAME/), so a fixed bug stays fixed.
 *
 * The parsers read files, so a harness writes the input to a scratch file
 * first.  An input may make the parser fail with a GError (that is the
 * point); it must never crash, leak, hang or trip a sanitizer.
 */
#ifndef GS_FUZZ_H
#define GS_FUZZ_H

#include <glib.h>
#include "sim/arch.h"
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

/* A private scratch directory for this process (created on first use,
 * removed at exit), holding links to the example and fixture directories
 * that inputs may name relatively (configs/, models/, arch/). */
const char *gs_fuzz_dir (void);

/* Writes DATA to gs_fuzz_dir()/NAME and returns that path (g_free). */
char *gs_fuzz_write (const char *name, const uint8_t *data, size_t size);

/* A file of the source tree (GS_FUZZ_SRCDIR, or $GS_SRCDIR when set). */
char *gs_fuzz_srcfile (const char *relative);

/* The arch file RELATIVE to the source tree, loaded on the first call and
 * kept for the process (a harness runs on one GPU); aborts if it does not
 * load, since that is the fixture's fault, not the input's. */
GsArch *gs_fuzz_arch (const char *relative);

#endif
