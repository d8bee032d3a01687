/* gpusim: `gpusim run` of an op list read from measurements.
 *
 * The DESIGN's workloads include a profiler trace and an ops CSV beside the
 * model configs and .workload files: the ops of `gpusim predict`'s CSV, a
 * measurement set, a per-op model trace (NeuSight's *-ops.csv) or a PyTorch
 * profiler (Kineto) trace, read through gs_import_load().  Every row that
 * names an op gpusim predicts becomes one op (a trace's kernels of one op
 * call, which share its cpu_op_index, one op), run in file order on one
 * stream with the runtime's host cost of an op or a GEMM call before each;
 * rows naming no op (copies, gathers, masking) are left out and counted on
 * standard error, with the sum of the rows' measured latencies.
 */
#ifndef GS_RUN_OPS_H
#define GS_RUN_OPS_H

#include <glib.h>
#include "calibrate/import.h"
#include "workloads/model.h"

/* Whether FILE is such an op list (a .csv or .csv.gz file, or a .json or
 * .json.gz profiler trace; its format in *FORMAT).  FALSE for other
 * workloads (a config.json, a .workload file). */
gboolean gs_run_ops_is_file (const char *file, GsImportFormat *format);

GsProgram *gs_run_ops_load (const char *file, GsImportFormat format,
                            const GsWorkloadOptions *opt, const GsArch *arch,
                            GError **error);

#endif
