/* gpusim tests: helpers shared by the test programs. */
#ifndef GS_TESTLIB_H
#define GS_TESTLIB_H

#include "calibrate/measure.h"
#include "sim/arch.h"
#include "sim/gpu.h"

#include <glib.h>

/* data/neusight/kernels.csv.gz under $GS_SRCDIR, loaded once per
 * process (16 MB of gzip); the test fails if it cannot be read. */
GsMeasureSet *gs_test_neusight (void);
/* The arch NAME (a name or a file); the test fails if it does not load. */
GsArch *gs_test_arch (const char *name);
/* An empty array of GsKernel that clears its elements. */
GArray *gs_test_kernels_new (void);
/* Submits the N kernels KS on one GPU with options O and runs it to the
 * end; returns the GPU (caller frees).  The test fails on any error. */
GsGpu *gs_test_simulate (const GsArch *arch, const GsKernel *ks, guint n,
                         const GsGpuOptions *o);
/* A new empty directory under the system's temporary directory, named
 * from TMPL ("gs-mem-XXXXXX", as g_dir_make_tmp); returns its path, newly
 * allocated (caller frees).  The directory and everything written into it
 * are removed when the current test case ends (g_test_queue_destroy: after
 * the test function returns, before the fixture's teardown), so call it
 * from a test function or a fixture's setup, never from main.  The test
 * fails if it cannot be made. */
char *gs_test_temp_dir (const char *tmpl);

#endif
