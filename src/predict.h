/* gpusim: predicting single ops given as CSV rows, shared by `gpusim
 * predict` and `gpusim validate` (implemented in src/cmd-predict.c).
 *
 * A row names an op in the vocabulary of DESIGN.md and NeuSight's
 * kernels.csv (bmm, linear, ln, softmax and the pointwise ops) with its
 * shape; it becomes one GsOp, the kernel library lowers it, the kernels run
 * alone on an idle simulated GPU in one stream, and the library maps their
 * GPU time to the latency of the op timed alone.
 */
#ifndef GS_PREDICT_H
#define GS_PREDICT_H

#include <glib.h>
#include "calibrate/measure.h"
#include "workloads/library.h"
#include "workloads/mem-model.h"

typedef struct GsArch GsArch;

typedef struct {
  const GsArch *arch;
  GsLibrary *lib;
  GsRuntime runtime;
  gboolean use_hints;      /* take kernel/grid/block columns as hints */
  /* Non-NULL: memory-bound ops use these parameters instead of the arch
   * file's (leave-one-GPU-out checks of the transfer rule). */
  const GsMemParams *mem;
} GsPredictor;

typedef struct {
  double latency_ms;       /* the op timed alone, host costs included */
  double gpu_ms;           /* its kernels' own durations, summed (no
                            * launch gap): what a profiler records */
  char *kernel;            /* the longest-running kernel */
  int waves;               /* that kernel's simulated waves */
  const char *bound;       /* compute, memory, latency or launch */
  guint kernels;           /* launches */
} GsPrediction;

void gs_prediction_clear (GsPrediction *p);

/* Whether OP names an op a row can give (bmm, bmm_nt, linear, linear_nn,
 * ln, softmax and the pointwise ops), and their names, comma-separated
 * (g_free). */
gboolean gs_predict_is_op (const char *op);
/* Whether OP is a single GEMM against one weight: linear or linear_nn. */
gboolean gs_predict_is_linear (const char *op);
char *gs_predict_op_names (void);

/* The op of ROW (read from SET's file).  Errors (GS_ERROR_INPUT) name
 * file:line and the column at fault. */
gboolean gs_predict_row_op (const GsMeasureSet *set, const GsMeasureRow *row,
                            GsOp *op, GError **error);

/* The copies torch.matmul makes inside the call before ROW's bmm, from
 * its optional `clones` column: "a", "b" or "ab", the operands (head-split
 * [B,H,S,D] views) it copies contiguous.  Sets *N (0-2) copy ops in
 * CLONES, to run before the GEMM.  Call it once gs_predict_row_op() has
 * accepted ROW (its shape is then whole).  Errors name file:line. */
gboolean gs_predict_row_clones (const GsMeasureSet *set,
                                const GsMeasureRow *row, GsOp clones[2],
                                guint *n, GError **error);

/* Fails (GS_ERROR_PREDICT, naming file:line) when ROW's operands cannot
 * all be in ARCH's memory (dram.size_gib) at once; this also keeps every
 * size far from overflow.  gs_predict_row checks it first. */
gboolean gs_predict_row_fits (const GsArch *arch, const GsMeasureSet *set,
                              const GsMeasureRow *row, GError **error);

/* Predicts ROW; errors name file:line. */
gboolean gs_predict_row (const GsPredictor *p, const GsMeasureSet *set,
                         const GsMeasureRow *row, GsPrediction *out,
                         GError **error);

/* Loads ARCH (a name or a .cfg file; SPEC_ONLY: without its calibration,
 * gs_arch_load_full) and applies "KEY=VALUE" overrides (NULL-terminated
 * SET, may be NULL). */
GsArch *gs_predict_load_arch (const char *name, gboolean spec_only,
                              char **set, GError **error);

#endif
