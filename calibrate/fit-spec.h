/* gpusim: what a GPU without measurements inherits from those with them.
 *
 * A GPU known from its spec sheet alone (an arch file without a
 * `calibration` group) runs its GEMMs on the shipped GsGemmSpec
 * (workloads/gemm-spec.c) at the sustained clock of the shipped
 * GsClockRule (sim/arch.c).  Both are learned here from calibrated arch
 * files, the donors, and the kernels their measurements recorded:
 *
 * - the clock rule: the median fitted clock over the boost clock of the
 *   donors with their own power connector, and for a slot-powered card
 *   (board power at most the rule's slot_w) the x0 that puts each
 *   slot-powered donor at its fitted clock, their geometric mean;
 * - eff_compute per FP32 kernel configuration: per donor the median over
 *   the layouts it fitted, then the median over the donors;
 * - the overheads of an op measured alone: the donors' medians;
 * - a rule per kernel library (gs_gemm_library) and selector where the
 *   library's donors launched one kernel and split-K for at least
 *   GS_FIT_SPEC_RULE_SHARE of their measured shapes.
 *
 * Learned leaving a GPU out, then applied to that GPU's spec sheet, it is
 * the honest test of a GPU never measured (bench/speconly-gemm).
 */
#ifndef GS_FIT_SPEC_H
#define GS_FIT_SPEC_H

#include <glib.h>
#include "calibrate/measure.h"
#include "sim/arch.h"
#include "workloads/gemm.h"

/* The share of a library's measured shapes one kernel must take to
 * become its rule: nearly all. */
#define GS_FIT_SPEC_RULE_SHARE 0.9

typedef struct {
  GsGemmSpec gemm;         /* its tables point into eff and rules */
  GsClockRule clock;
  GsMemRule mem;
  GArray *eff;             /* GsGemmSpecEff (tags owned) */
  GArray *rules;           /* GsGemmSpecRule (strings owned) */
  /* Per rule: how many of its library's shapes took it, of how many. */
  GArray *rule_rows, *rule_of;  /* guint */
} GsFitSpec;

/* Learns from DONORS (GsArch *, each with a fitted GEMM calibration) and
 * the rows of SET measured on them. */
GsFitSpec *gs_fit_spec_new (GPtrArray *donors, const GsMeasureSet *set,
                            GError **error);
void gs_fit_spec_free (GsFitSpec *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsFitSpec, gs_fit_spec_free)

/* The tables as their C source (gemm-spec.c, arch.c) writes them, with
 * the figures they come from in comments. */
char *gs_fit_spec_format (const GsFitSpec *s);

/* One GPU left out: its holdout rows of one op predicted from the shape
 * alone on its spec sheet (gs_fit_spec_arch), with the library model's
 * own defaults at the boost clock (before) and with what the other GPUs
 * give it (after), and with its own calibration. */
typedef struct {
  int rows;
  int same;                /* after: the measured kernel and split-K */
  double mape[3];          /* %: before, after, calibrated */
  double clock_mhz[3];     /* the clocks of the three */
} GsFitSpecError;

/* Leaves GPUS[G] (calibrated GsArch *) out: learns from the others and
 * predicts its holdout rows of OP ("linear", "bmm") in SET. */
gboolean gs_fit_spec_leave_out (GPtrArray *gpus, guint g,
                                const GsMeasureSet *set, const char *op,
                                GsFitSpecError *out, GError **error);

/* CALIBRATED as a GPU known from its spec sheet alone: its calibration
 * scalars at their defaults and, under RULE (NULL: the boost clock), its
 * estimated sustained clock.  Its GEMM parameters are the caller's
 * (gs_gemm_params_spec): the copy keeps CALIBRATED's files. */
GsArch *gs_fit_spec_arch (const GsArch *calibrated, const GsClockRule *rule);

#endif
