/* gpusim: the calibration fitter framework.
 *
 * `gpusim calibrate` turns measurement sets into an arch file's
 * `calibration` group.  A GsFit collects one GPU's measured rows, keeps the
 * documented train/validation split (gs_measure_is_holdout: fitters see
 * only the training half; errors are reported on the other), lets each
 * fitter (gs_fit_gemm, the memory-bound fitter) update the arch's
 * calibration and add its `calibration.library.NAME` group, records the
 * error per op class, and renders the group between marker comments.
 *
 * Measured ops map onto GsOps as NeuSight recorded them (the columns of
 * `gpusim predict`): a `bmm` row is B batches of [M, N] x [N, K], a
 * `linear` row B*M rows of N input features times a [K, N] weight (nn.Linear
 * with bias): rows M, output columns K and reduction N.  The measured grids
 * confirm it (grid x covers K, grid y M, grid z the batch or split-K).
 */
#ifndef GS_FIT_H
#define GS_FIT_H

#include <glib.h>
#include "sim/engine.h"
#include "workloads/op.h"
#include "workloads/library.h"
#include "calibrate/measure.h"

typedef struct GsArch GsArch;

typedef struct {
  char *op_class;          /* "linear", "bmm", "ln" ... */
  int train_rows, holdout_rows;  /* -1: kept from the base file */
  double train_mape;       /* %, on the training rows */
  double holdout_mape;     /* %, on the holdout rows (the fit error) */
} GsFitError;

typedef struct {
  GsArch *arch;            /* the arch being fitted: fitters update arch->cal */
  char *device;            /* measured device name the rows were taken for */
  /* const GsMeasureRow * of the device (all sets); the kernels of one op
   * call of a profiler trace are one row, latency_ms their sum */
  GPtrArray *rows;
  GHashTable *gpu_time;    /* the rows whose latency_ms is GPU time */
  GPtrArray *calls;        /* GsMeasureRow *: the op-call rows made (owned) */
  GPtrArray *sources;      /* char *: the files the rows came from */
  GString *library;        /* `NAME = { ... };` groups of calibration.library */
  GArray *errors;          /* GsFitError, one per op class */
  int rows_used;           /* training rows some fitter used */
  GPtrArray *methods;      /* char *: one line per fitter */
  /* char *: the host costs a fitter kept from the base because none of
   * its training rows timed an op's latency ("GEMM overhead_us and burst") */
  GPtrArray *host_kept;
} GsFit;

/* Starts a fit of ARCH (copied) for DEVICE's rows (NULL: the arch name). */
GsFit *gs_fit_new (const GsArch *arch, const char *device);
void gs_fit_free (GsFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsFit, gs_fit_free)

/* Adds the rows of SET measured on the fit's device (SET must outlive the
 * fit): a profiler trace's kernels of one op call (gs_measure_call_of) as
 * one row of the call's first kernel whose latency_ms is their sum.
 * Returns how many rows were added. */
guint gs_fit_add_set (GsFit *fit, const GsMeasureSet *set);
/* Whether ROW (of fit->rows) measured GPU time, the durations of its
 * kernels (gs_measure_is_gpu_time), rather than an op's latency with its
 * host costs: fitters compare it with the simulated GPU time and fit no
 * host cost from it. */
gboolean gs_fit_is_gpu_time (const GsFit *fit, const GsMeasureRow *row);
/* The training (HOLDOUT false) or validation rows of op class OP_CLASS
 * (NULL: any) with a latency. */
GPtrArray *gs_fit_rows (const GsFit *fit, const char *op_class,
                        gboolean holdout);

void gs_fit_add_error (GsFit *fit, const GsFitError *e);
void gs_fit_add_method (GsFit *fit, const char *line);
/* The fit error of OP_CLASS, or NULL. */
const GsFitError *gs_fit_error (const GsFit *fit, const char *op_class);

/* The `calibration = { ... };` group (with marker comments) for the fit,
 * dated DATE (ISO, e.g. "2025-01-31"). */
char *gs_fit_render (const GsFit *fit, const char *date);

/* Copies every `calibration.library` group of BASE_TEXT but EXCEPT
 * ("gemm") into fit->library, and the fit errors of the base's op classes
 * that no fitter recorded (when only some fitters run). */
void gs_fit_keep_library (GsFit *fit, const char *base_text,
                          const char *except);

/* BASE_TEXT (the text of the base arch file BASE_FILE) with its
 * calibration group replaced by GROUP, or GROUP appended; comments and
 * every other line kept.  `base = "..."` paths are rewritten relative to
 * OUT_FILE's directory when it differs from BASE_FILE's. */
char *gs_fit_splice (const char *base_text, const char *base_file,
                     const char *out_file, const char *group,
                     GError **error);

/* BASE_TEXT with its `model_runs` group (gpusim calibrate --model-runs)
 * replaced by GROUP between marker comments, or inserted after the
 * generated calibration group (else at the end); paths as
 * gs_fit_splice. */
char *gs_fit_splice_model_runs (const char *base_text, const char *base_file,
                                const char *out_file, const char *group);

/* Fits calibration.kernel_fixed_us, a kernel's own fixed duration, on the
 * device's `block_dispatch` rows of GPU time (gpusim-bench-micro: kernels
 * of 10^4 to 10^6 empty blocks timed by CUPTI): for each block size with
 * two or more grids, the intercept of the least-squares line of duration
 * against blocks; the median of those.  Leaves the arch's value and adds
 * no method line when there are no such rows.  Returns the number of rows
 * used. */
guint gs_fit_kernel_fixed (GsFit *fit);
/* Whether ROW is a microbenchmark row gs_fit_kernel_fixed takes. */
gboolean gs_fit_is_dispatch_row (const GsMeasureRow *row);

/* ---------------------------------------------------------------- helpers */

/* The GsOp a GEMM row measured (linear, bmm, bmm_nt); FALSE for other ops or
 * incomplete shapes. */
gboolean gs_fit_gemm_op (const GsMeasureRow *row, GsOp *op);
/* The hint a row carries (pointers into ROW). */
void gs_fit_hint (const GsMeasureRow *row, GsKernelHint *hint);

/* Runs KERNELS one after another on an idle GPU; *GPU_TIME is the time
 * from the first launch to the last kernel's end (the launch gaps
 * included: what an op timed alone is compared with), *KERNEL_TIME (may
 * be NULL) the sum of the kernels' own durations (what a GPU-time row,
 * gs_fit_is_gpu_time, is compared with), ps. */
gboolean gs_fit_run (const GsArch *arch, const GArray *kernels,
                     GsTime *gpu_time, GsTime *kernel_time, GError **error);

/* Absolute percentage error of PRED against MEASURED. */
double gs_fit_ape (double pred, double measured);

/* Minimises F over [LO, HI] by golden-section search (deterministic);
 * returns the argument, *FX its value. */
double gs_fit_golden (double (*f) (double x, void *data), void *data,
                      double lo, double hi, int iterations, double *fx);

/* The median of the N (> 0) values V, sorted in place; the mean of the
 * middle two of an even count. */
double gs_fit_median (double *v, guint n);

#endif
