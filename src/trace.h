/* gpusim: Chrome / Perfetto trace of a simulation (--trace FILE.json).
 *
 * One process per GPU; a named track per (SM, resident slot) where every
 * block is a slice named by kernel and block index, with its wave (its
 * round of blocks per SM on its SM, as GsRecorder gives it); kernel spans
 * on one track per stream; counter tracks for resident warps per SM
 * and DRAM bandwidth in use.  At --fidelity warp, a track per warp
 * scheduler of SM 0 shows which warp issued when: a slice per run of
 * back-to-back instructions of one warp; gaps are cycles with no warp
 * ready.  Kernels are numbered from 1 in host order (args index of a
 * kernel span, kernel of a block or warp slice), as reports and explain
 * --kernel number them; blocks from 0, as blockIdx does.
 * Opens in ui.perfetto.dev and chrome://tracing.
 */
#ifndef GS_TRACE_H
#define GS_TRACE_H

#include <glib.h>
#include <stdio.h>
#include "sim/gpu.h"
#include "workloads/program.h"

typedef struct GsTrace GsTrace;

/* Events stream into OUT as the simulation runs.  Call gs_trace_recorder()
 * to get the callbacks for GsGpuOptions, then gs_trace_finish() after the
 * run (it writes the kernel spans, which need the results). */
GsTrace *gs_trace_new (FILE *out, const GsProgram *prog, const char *gpu_name);
const GsRecorder *gs_trace_recorder (void);
void gs_trace_set_gpu (GsTrace *trace, const GsGpu *gpu);
void gs_trace_finish (GsTrace *trace);
void gs_trace_free (GsTrace *trace);

#endif
