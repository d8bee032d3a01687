/* gpusim: fitting the memory side of a GPU's calibration.
 *
 * From a GPU's measured memory-bound ops (NeuSight's ln, softmax and
 * pointwise rows; training half only, gs_measure_is_holdout false) the
 * fitter sets the arch-level memory scalars -- calibration.dram_eff,
 * l2_eff, mlp_bytes_per_warp, block_fixed_ns, kernel_fixed_us, launch_us,
 * mem_overlap -- and the `calibration.library.memory` group (kernel-family
 * efficiencies, L2/L1 residency, host costs per op).  Deterministic: fixed
 * row order, fixed search grids, no random restarts.
 *
 * A GPU without such rows (the H100 in NeuSight's set) gets them from the
 * GPUs that have them, by the transfer rule of gs_fit_memory_transfer()
 * (docs/kernel-library.md, "GPUs without measurements").
 */
#ifndef GS_FIT_MEMORY_H
#define GS_FIT_MEMORY_H

#include <glib.h>
#include "calibrate/fit.h"
#include "workloads/mem-model.h"

/* The GsOp a memory-bound row measured (ln, softmax, the pointwise ops);
 * FALSE for other ops or incomplete shapes. */
gboolean gs_fit_memory_op (const GsMeasureRow *row, GsOp *op);

/* Fits FIT->arch's memory calibration from FIT's training rows (or
 * transfers it when the device has none), appends the
 * `memory = { ... };` group to FIT->library, the holdout error per op to
 * FIT->errors and a line to FIT->methods.  Call it after the GEMM fitter
 * (it keeps calibration.clock_mhz and issue_eff as they are). */
gboolean gs_fit_memory (GsFit *fit, GError **error);

/* The same in two passes around the GEMM fit, whose sustained clock the
 * row kernels' instruction time depends on and which uses the memory
 * scalars itself.  gs_fit_memory_shared() fits everything and records
 * nothing: it sets the arch-level scalars (or transfers the whole
 * calibration, recorded, when the device has no rows).  After the GEMM
 * fit, gs_fit_memory_own() holds those scalars, refits the memory
 * library's own parameters and host costs at the final clock and records
 * the group, the errors and the method, so the recorded errors are those
 * of the file as written. */
gboolean gs_fit_memory_shared (GsFit *fit, GError **error);
gboolean gs_fit_memory_own (GsFit *fit, GError **error);

/* The transfer rule: TARGET's memory calibration (its calibration scalars
 * are set, *PARAMS filled) from DONORS (GsArch *, each with a fitted
 * calibration.library.memory group, rows > 0).  METHOD receives a one-line
 * account of what came from where.  FALSE (GS_ERROR_PREDICT) when no donor
 * has fitted memory parameters. */
gboolean gs_fit_memory_transfer (GsArch *target, GPtrArray *donors,
                                 GsMemParams *params, GString *method,
                                 GError **error);

/* Every arch on the search path other than EXCLUDE whose memory
 * calibration was fitted on its own rows (GsArch *, g_ptr_array_unref). */
GPtrArray *gs_fit_memory_donors (const char *exclude);

#endif
