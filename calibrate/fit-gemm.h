/* gpusim: fitting the GEMM kernel library model (calibration.library.gemm).
 *
 * From the training half of a GPU's linear and bmm rows:
 *   1. per kernel family (the measured kernel of each row), its efficiency
 *      (share of the pipe peak) and block prologue/epilogue time, and per
 *      op class the overhead of an op measured alone, by coordinate
 *      descent on the mean absolute percentage error of the simulated
 *      latencies (golden-section search per parameter; the overhead that
 *      minimises it exactly is a weighted median);
 *   2. the sustained clock: compute-bound kernels cannot tell a slower
 *      clock from a less efficient kernel, so the clock takes the part of
 *      the best family's shortfall beyond GS_FIT_GEMM_BEST_EFF (power-
 *      limited GPUs such as the L4 and T4 run their GEMMs far below the
 *      boost clock) and the families are refitted at that clock;
 *   3. the selection rules: a decision tree per dtype and layout over the
 *      shape features, labelled with the measured kernel and split-K.
 * It then predicts every row from its shape alone and records the error
 * per op class on the training and holdout halves.  Deterministic.
 */
#ifndef GS_FIT_GEMM_H
#define GS_FIT_GEMM_H

#include <glib.h>
#include "calibrate/fit.h"

/* The efficiency the best-fitting kernel family is taken to reach at the
 * sustained clock (a large SIMT SGEMM reaches about this share of the FMA
 * peak: the V100 measurements reach 99% of it at the boost clock). */
#define GS_FIT_GEMM_BEST_EFF 0.97

typedef struct {
  int rounds;              /* coordinate-descent rounds (default 3) */
  int tree_depth;          /* selection tree depth (default 10) */
  int tree_min_leaf;       /* examples per leaf (default 1) */
  gboolean fit_clock;      /* attribute the best family's shortfall to the clock */
  gboolean trees_only;     /* keep the arch's fitted parameters, relearn the trees */
} GsFitGemmOptions;

void gs_fit_gemm_options_init (GsFitGemmOptions *opt);

/* Fits the GEMM model of FIT's GPU: updates fit->arch (sustained clock),
 * appends calibration.library.gemm to fit->library and records the errors
 * of the linear and bmm classes.  Without GEMM rows it does nothing. */
gboolean gs_fit_gemm (GsFit *fit, const GsFitGemmOptions *opt,
                      GError **error);

#endif
