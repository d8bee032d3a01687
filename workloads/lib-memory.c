/* gpusim: the memory-bound part of the kernel library model for
 * workloads/library.h: elementwise, norm, softmax, reduce, embedding,
 * copy, fused (compiled) and optimizer ops.  The model itself is in
 * mem-kernels.c, mem-pointwise.c and mem-rows.c (see mem-model.h); this
 * part keeps the arch's calibration.library.memory parameters and, for ops
 * timed alone, corrects their latency by the residuals of the training
 * rows nearest to them.
 */
#include "config.h"
#include "workloads/library-private.h"
#include "workloads/mem-model.h"
#include "sim/arch.h"
#include "sim/error.h"

#include <math.h>

struct GsLibMemory {
  const GsArch *arch;      /* owned by the GsLibrary */
  GsMemParams params;
  GsResiduals *residuals;  /* calibration.library.memory.residuals */
  gboolean alone;          /* ops are timed alone: apply the residuals */
};

GsLibMemory *
gs_lib_memory_new (const GsArch *arch, GError **error)
{
  GsLibMemory *lib = g_new0 (GsLibMemory, 1);
  lib->arch = arch;
  lib->residuals = gs_mem_residuals_new ();
  if (!gs_mem_params_load (&lib->params, arch, error)
      || !gs_mem_residuals_load (lib->residuals, arch, error))
    {
      gs_lib_memory_free (lib);
      return NULL;
    }
  return lib;
}

void
gs_lib_memory_free (GsLibMemory *lib)
{
  if (lib == NULL)
    return;
  gs_residuals_free (lib->residuals);
  g_free (lib);
}

void
gs_lib_memory_set_alone (GsLibMemory *lib, gboolean alone)
{
  lib->alone = alone;
}

gboolean
gs_lib_memory_lower (const GsLibMemory *lib, const GsOp *op,
                     GsRuntime runtime, const GsKernelHint *hint,
                     GArray *kernels, GError **error)
{
  return gs_mem_lower (lib->arch, &lib->params, op, runtime, hint, kernels,
                       error);
}

GsTime
gs_lib_memory_op_latency (const GsLibMemory *lib, const GsOp *op,
                          GsTime gpu_time)
{
  GsTime t = gs_mem_op_latency (&lib->params, op, gpu_time);
  /* The residuals were learned on ops timed alone, host costs included;
   * inside a program an op's host costs overlap other work and the model
   * stands alone (as for GEMMs: lib-gemm.c). */
  if (!lib->alone)
    return t;
  return (GsTime) llround ((double) t
                           * gs_mem_residual_scale (lib->residuals, op));
}
