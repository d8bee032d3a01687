/* gpusim: the kernel library model.
 *
 * For an op, a dtype and an arch: which kernel(s) a real library launches
 * (cuBLAS/cuBLASLt GEMM configuration with tile and split-K, PyTorch's
 * vectorized elementwise kernels, warp- or block-per-row softmax and layer
 * norm, FlashAttention ...) and what each block of it does.  Kernel choices
 * learned from measurements live in the arch file's `calibration.library`
 * group; a documented heuristic covers every shape, dtype and arch without
 * data, so no prediction needs a table entry to exist.
 */
#ifndef GS_LIBRARY_H
#define GS_LIBRARY_H

#include <glib.h>
#include "sim/kernel.h"
#include "workloads/op.h"
#include "sim/engine.h"

typedef struct GsArch GsArch;
typedef struct GsLibrary GsLibrary;

typedef enum {
  GS_RUNTIME_EAGER,     /* PyTorch eager: one kernel (or a few) per op */
  GS_RUNTIME_COMPILED,  /* torch.compile / Inductor: fused generated kernels */
} GsRuntime;

const char *gs_runtime_name (GsRuntime r);
int gs_runtime_parse (const char *s);   /* -1 if unknown */

/* What a measurement says the library launched (optional hints). */
typedef struct {
  const char *kernel;      /* kernel name, or NULL */
  uint32_t grid[3];        /* 0: unknown */
  uint32_t block[3];
} GsKernelHint;

GsLibrary *gs_library_new (const GsArch *arch, GError **error);
void gs_library_free (GsLibrary *lib);
/* Ops to be lowered are timed alone, each in a loop of its own, as the
 * calibration measurements were (gpusim predict, validate): the GEMM and
 * memory-bound models then apply the residuals learned on those
 * measurements.  Off by default (ops inside a program). */
void gs_library_set_alone (GsLibrary *lib, gboolean alone);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (GsLibrary, gs_library_free)

/* Appends the kernels OP launches to KERNELS (a GArray of GsKernel whose
 * clear func is gs_kernel_clear).  HINT may be NULL. */
gboolean gs_library_lower (const GsLibrary *lib, const GsOp *op,
                           GsRuntime runtime, const GsKernelHint *hint,
                           GArray *kernels, GError **error);

/* An op measured alone (as kernels.csv and `gpusim predict` report it: the
 * time around one call of the op, launch and framework costs included) from
 * the simulated GPU time of its kernels, ps. */
GsTime gs_library_op_latency (const GsLibrary *lib, const GsOp *op,
                              GsTime gpu_time);

#endif
